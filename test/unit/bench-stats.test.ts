import { describe, expect, it } from 'vitest';
import { apiUrlsOf } from '../../bench/stack';
import {
  completionRate,
  median,
  overTargetThatDecides,
  percentile,
  percentileWithFailures,
  ratePerSecond,
  ratiosByProcess,
  saturated,
  saturationThroughput,
  searchCapacity,
  spread,
  summarize,
} from '../../bench/stats';
import { productionArgs } from '../../bench/steps/production';

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

  it('p99 over 1,000 samples: ten slow answers do not make it, eleven do', () => {
    const fast = (slow: number) => [
      ...Array.from({ length: 1_000 - slow }, (_, i) => 50 + (i % 50)),
      ...Array.from({ length: slow }, () => 1_000),
    ];
    expect(percentile(fast(10), 99)).toBeLessThan(150);
    expect(percentile(fast(11), 99)).toBe(1_000);
    // The step may stop offering as soon as that many answers are over the target.
    expect(overTargetThatDecides(1_000)).toBe(11);
    expect(overTargetThatDecides(200)).toBe(3);
    expect(overTargetThatDecides(1)).toBe(1);
    for (const n of [100, 200, 999, 1_000, 1_234]) {
      const k = overTargetThatDecides(n);
      const answers = (over: number) => [
        ...Array.from({ length: n - over }, () => 10),
        ...Array.from({ length: over }, () => 200),
      ];
      expect(percentile(answers(k), 99), `n=${n}`).toBeGreaterThanOrEqual(150);
      expect(percentile(answers(k - 2), 99), `n=${n}`).toBeLessThan(150);
    }
  });

  it('failed offers count as answers that never came', () => {
    const ok = Array.from({ length: 995 }, () => 40);
    expect(percentileWithFailures(ok, 0)).toBe(40);
    expect(percentileWithFailures(ok, 5)).toBe(40);
    expect(percentileWithFailures(ok, 11)).toBe(Number.POSITIVE_INFINITY);
    expect(percentile([1, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY], 90)).toBe(
      Number.POSITIVE_INFINITY,
    );
  });

  it('median and spread of repeated measurements', () => {
    expect(median([0.7, 0.6, 0.65])).toBeCloseTo(0.65);
    expect(median([1, 3])).toBe(2);
    expect(spread([0.6, 0.65, 0.7])).toBeCloseTo(0.1 / 0.65);
    expect(spread([0.62, 0.62, 0.62])).toBe(0);
    expect(spread([])).toBeNaN();
  });

  it('a capacity search goes ×1.5 until a rate fails, then ×1.2 from the last good one', async () => {
    const knee = (limit: number) => async (rate: number) => rate <= limit;
    const up = await searchCapacity(knee(10), 4);
    expect(up.points.map((p) => [Number(p.rate.toFixed(2)), p.pass])).toEqual([
      [4, true],
      [6, true],
      [9, true],
      [13.5, false],
      [10.8, false],
    ]);
    expect(up.capacity).toBe(9);
    const fine = await searchCapacity(knee(12), 4);
    expect(fine.capacity).toBeCloseTo(10.8); // 13.5 fails, 10.8 passes, 12.96 fails
    expect(fine.points.at(-1)).toMatchObject({ pass: false });
    // A start that already fails: ÷1.5 until one passes, then ×1.2 below the failed one.
    const down = await searchCapacity(knee(4), 8);
    expect(down.points.map((p) => p.pass)).toEqual([false, false, true, false]);
    expect(down.capacity).toBeCloseTo(8 / 1.5 / 1.5);
    // Nothing passes above the lowest rate allowed: no capacity.
    expect((await searchCapacity(knee(0.1), 4, { minRate: 1 })).capacity).toBe(0);
  });
});

describe('bench helpers', () => {
  it("reads every API's URL from npm start's banner", () => {
    const one =
      'starting API...\n\npixflow is up:\n  API               http://127.0.0.1:3000   (Authorization: Bearer k)\n  API docs          http://127.0.0.1:3000/docs\n';
    expect(apiUrlsOf(one, 'http://x')).toEqual(['http://127.0.0.1:3000']);
    const two =
      'pixflow is up:\n  API 1             http://127.0.0.1:3000   (Authorization: Bearer k)\n  API 2             http://127.0.0.1:41234\n  API docs          http://127.0.0.1:3000/docs\n';
    expect(apiUrlsOf(two, 'http://x')).toEqual(['http://127.0.0.1:3000', 'http://127.0.0.1:41234']);
    expect(apiUrlsOf('no banner', 'http://x')).toEqual(['http://x']);
  });

  it("a production run's npm start options", () => {
    expect(productionArgs('--temporal postgres --workers {n} --apis {n}', 2)).toEqual([
      '--temporal',
      'postgres',
      '--workers',
      '2',
      '--apis',
      '2',
    ]);
  });

  it('ratiosByProcess sets each process beside the floor process doing the same job, and the whole', () => {
    const pairs = [
      ['worker', 'same-work-worker'],
      ['api', 'same-work-server'],
      ['postgres', 'postgres'],
    ] as const;
    const deposit = { worker: 60, api: 30, postgres: 20, bench: 500 };
    const floor = { 'same-work-worker': 30, 'same-work-server': 20, postgres: 0, worker: 5 };
    expect(ratiosByProcess(deposit, floor, pairs)).toEqual({
      worker: 2,
      api: 1.5,
      postgres: Number.NaN,
      total: 2.2,
    });
    expect(ratiosByProcess({}, floor, pairs).total).toBe(0);
  });
});
