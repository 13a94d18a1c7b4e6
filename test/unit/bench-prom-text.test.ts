import { describe, expect, it } from 'vitest';
import { sumOf } from '../../bench/prom-text';

// One reader of Prometheus's text for every bench tool: the sum of a metric over its labels.

const text = [
  '# HELP temporal_sticky_cache_hit hits',
  'temporal_sticky_cache_hit{namespace="default",task_queue="a"} 3',
  'temporal_sticky_cache_hit{namespace="default",task_queue="b"} 4',
  'pixflow_worker_temporal_sticky_cache_hit 100',
  'latency_bucket{le="+Inf"} 9',
].join('\n');

describe('a metric summed from a Prometheus text', () => {
  it('sums its series over their labels, by its exact name unless a prefix is allowed', () => {
    expect(sumOf(text, 'temporal_sticky_cache_hit')).toBe(7);
    expect(sumOf(text, 'temporal_sticky_cache_hit', true)).toBe(107);
  });

  it('leaves out what is not a finite number, and says NaN for a metric that is not there', () => {
    expect(sumOf('x{le="+Inf"} +Inf\nx 2', 'x')).toBe(2);
    expect(sumOf(text, 'temporal_sticky_cache_miss')).toBeNaN();
  });
});
