import { describe, expect, it } from 'vitest';
import {
  completionRate,
  percentile,
  ratePerSecond,
  saturated,
  saturationThroughput,
  summarize,
} from '../../bench/stats';

describe('bench statistics', () => {
  it('percentiles interpolate between closest ranks', () => {
    const v = Array.from({ length: 100 }, (_, i) => i + 1); // 1..100
    expect(percentile(v, 50)).toBeCloseTo(50.5);
    expect(percentile(v, 99)).toBeCloseTo(99.01);
    expect(percentile(v, 0)).toBe(1);
    expect(percentile(v, 100)).toBe(100);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
    expect(percentile([3, 1, 2], 50)).toBe(2); // unsorted input
  });

  it('summarize gives n, p50, p99 and max', () => {
    expect(summarize([10, 20, 30, 40])).toEqual({ n: 4, p50: 25, p99: 39.7, max: 40 });
  });

  it('a ramp is saturated when the last step falls short of its offer and beats nothing', () => {
    expect(saturated([{ offered: 4, achieved: 4 }])).toBe(false);
    expect(
      saturated([
        { offered: 4, achieved: 4 },
        { offered: 6, achieved: 5.9 },
      ]),
    ).toBe(false); // still keeping up
    expect(
      saturated([
        { offered: 4, achieved: 4 },
        { offered: 6, achieved: 4.2 },
      ]),
    ).toBe(true); // short of 6 and no real gain over 4
    expect(
      saturated([
        { offered: 4, achieved: 3 },
        { offered: 6, achieved: 4.5 },
      ]),
    ).toBe(false); // short of its offer but still rising
    expect(
      saturationThroughput([
        { offered: 4, achieved: 4 },
        { offered: 6, achieved: 5.5 },
        { offered: 9, achieved: 5.2 },
      ]),
    ).toBe(5.5);
  });

  it('completion rate: the offered rate below capacity, the capacity above it', () => {
    // 10 per second for 5 s, each done 300 ms after its start: below capacity.
    const below = Array.from({ length: 50 }, (_, i) => i * 100 + 300);
    expect(completionRate(below)).toBeCloseTo(10);
    // 50 offered at once, served 4 per second whatever the latency.
    const above = Array.from({ length: 50 }, (_, i) => 2_000 + i * 250);
    expect(completionRate(above)).toBeCloseTo(4);
    expect(completionRate([5])).toBe(0);
    expect(ratePerSecond([0, 500, 1_000, 1_500, 3_000], 0, 2_000)).toBe(2);
  });
});
