import { describe, expect, it } from 'vitest';
import { openFlowsFigures } from '../../bench/figures';
import {
  growthPerThousandPastCache,
  lastSample,
  type MemorySample,
  mibPerCachedWorkflow,
  promValue,
  slope,
} from '../../bench/memory';
import type { OpenFlows } from '../../bench/steps/open-flows';

// The open-flows part's arithmetic: what it reads from /metrics, the slope of memory over open
// flows, and the growth it holds the worker to once its cache is full.

const MiB = 1024 * 1024;

/** A worker whose RSS grows `perCached` MiB a flow until `cache` are open, then `perOpen` MiB a flow. */
function samples(cache: number, upTo: number, perCached: number, perOpen: number): MemorySample[] {
  const out: MemorySample[] = [];
  for (let open = 0; open <= upTo; open += 100) {
    const rss =
      150 * MiB + Math.min(open, cache) * perCached * MiB + Math.max(0, open - cache) * perOpen * MiB;
    out.push({
      atMs: open * 50,
      open,
      workerRss: rss,
      apiRss: 120 * MiB + open * 1024,
      workerHeapUsed: rss / 3,
      workerHeapTotal: rss / 2,
      apiHeapUsed: 40 * MiB,
      apiHeapTotal: 60 * MiB,
      stickyCache: Math.min(open, cache),
    });
  }
  return out;
}

describe('reading a Prometheus text', () => {
  const text = [
    '# HELP pixflow_worker_nodejs_heap_size_used_bytes Process heap size used from Node.js in bytes.',
    '# TYPE pixflow_worker_nodejs_heap_size_used_bytes gauge',
    'pixflow_worker_nodejs_heap_size_used_bytes 52428800',
    'pixflow_worker_nodejs_heap_size_total_bytes 73400320',
    'temporal_sticky_cache_size{namespace="default",service_name="temporal-core-sdk"} 480',
    'temporal_sticky_cache_size{namespace="other",service_name="temporal-core-sdk"} 20',
  ].join('\n');

  it('finds a metric under any prefix, summing its labelled series', () => {
    expect(promValue(text, 'nodejs_heap_size_used_bytes')).toBe(52428800);
    expect(promValue(text, 'nodejs_heap_size_total_bytes')).toBe(73400320);
    expect(promValue(text, 'sticky_cache_size')).toBe(500);
  });

  it('says NaN for a metric the text does not hold, and does not take a longer name for it', () => {
    expect(promValue(text, 'nodejs_heap_size')).toBeNaN();
    expect(promValue('', 'sticky_cache_size')).toBeNaN();
  });
});

describe('the least-squares slope', () => {
  it('is exact on a line and the best fit through noise', () => {
    expect(slope([0, 1, 2, 3].map((x) => ({ x, y: 5 + 2 * x })))).toBeCloseTo(2, 10);
    expect(
      slope([
        { x: 0, y: 0 },
        { x: 1, y: 2 },
        { x: 2, y: 1 },
      ]),
    ).toBeCloseTo(0.5, 10);
  });

  it('is NaN without two distinct points, and skips unreadable ones', () => {
    expect(slope([{ x: 1, y: 1 }])).toBeNaN();
    expect(
      slope([
        { x: 1, y: 1 },
        { x: 1, y: 3 },
      ]),
    ).toBeNaN();
    expect(
      slope([
        { x: 0, y: 0 },
        { x: 1, y: Number.NaN },
        { x: 2, y: 4 },
      ]),
    ).toBeCloseTo(2, 10);
  });
});

describe('growth against open flows', () => {
  const s = samples(1_000, 5_000, 0.8, 0.002);

  it('gives the growth per 1,000 open past the cache, not the cache filling', () => {
    const g = growthPerThousandPastCache(s, 1_000, 'workerRss');
    expect(g.mibPerThousand).toBeCloseTo(2, 2);
    expect(g.samples).toBe(41);
  });

  it("gives a cached workflow's size from the cache filling", () => {
    expect(mibPerCachedWorkflow(s, 1_000)).toBeCloseTo(0.8, 3);
  });

  it('is NaN when no sample reached the cache', () => {
    expect(
      growthPerThousandPastCache(samples(1_000, 900, 0.8, 0), 1_000, 'workerRss').mibPerThousand,
    ).toBeNaN();
  });

  it('takes the sample with the most open as the last', () => {
    expect(lastSample(s)?.open).toBe(5_000);
    expect(lastSample([])).toBeUndefined();
  });
});

describe("the open-flows part's figures", () => {
  const part = (perOpen: number, offered = 5_001, peakMiB = 0.15): OpenFlows => {
    const s = samples(1_000, 5_000, peakMiB, perOpen);
    return {
      rate: 20,
      offered,
      opened: 5_001,
      errorsBy: {},
      cacheSize: 1_000,
      samples: s,
      workerGrowth: growthPerThousandPastCache(s, 1_000, 'workerRss'),
      apiGrowth: growthPerThousandPastCache(s, 1_000, 'apiRss'),
      workerHeapGrowth: growthPerThousandPastCache(s, 1_000, 'workerHeapUsed'),
      mibPerCachedWorkflow: mibPerCachedWorkflow(s, 1_000),
      stealPct: 0,
    };
  };
  const verdicts = (o: OpenFlows) => openFlowsFigures({ openFlows: o }).map((f) => f.pass);

  it('passes a worker under 1 GiB that grows at most 5 MiB per 1,000 past its cache', () => {
    expect(verdicts(part(0.004))).toEqual([true, true, undefined, undefined]);
  });

  it('fails a worker that grows more per 1,000, or holds more than 1 GiB', () => {
    expect(verdicts(part(0.006))).toEqual([true, false, undefined, undefined]);
    expect(verdicts(part(0, 5_001, 1))).toEqual([false, true, undefined, undefined]);
  });

  it('fails the RSS figure when some deposits were not opened', () => {
    expect(verdicts(part(0, 5_100))[0]).toBe(false);
  });

  it('says why when the part did not run', () => {
    expect(openFlowsFigures({ openFlows: { notRun: 'not run: left out (--only)' } })).toEqual([
      { name: 'open flows', value: Number.NaN, unit: '', ratio: 'not run: left out (--only)' },
    ]);
  });
});
