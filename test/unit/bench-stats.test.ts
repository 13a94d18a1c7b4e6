import { describe, expect, it } from 'vitest';
import { apiUrlsOf } from '../../bench/stack';
import {
  capacitiesAt,
  completionRate,
  median,
  nextSweepRate,
  overTargetThatDecides,
  percentile,
  percentileWithFailures,
  ratePerSecond,
  ratiosByProcess,
  type SweepPoint,
  saturated,
  saturationThroughput,
  spread,
  summarize,
  sweepCapacity,
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

  describe('a capacity sweep over the p99 bounds 100, 150 and 250 ms', () => {
    const bounds = [100, 150, 250];
    /** A stack whose p99 at each rate is `p99(rate)`, its flows keeping up below `keepsUpTo`. */
    const stack =
      (p99: (rate: number) => number, keepsUpTo = Number.POSITIVE_INFINITY) =>
      async (rate: number): Promise<SweepPoint> => ({ rate, p99: p99(rate), held: rate <= keepsUpTo });
    const rates = (points: readonly SweepPoint[]) => points.map((p) => Number(p.rate.toFixed(2)));

    it('climbs ×1.2 until a point fails the largest bound, and reads every bound off that one climb', async () => {
      // p99 rises with the rate: 50 ms at 4/s, +30 ms per 1/s.
      const { points, capacity } = await sweepCapacity(
        stack((r) => 50 + (r - 4) * 30),
        4,
        bounds,
      );
      expect(rates(points)).toEqual([4, 4.8, 5.76, 6.91, 8.29, 9.95, 11.94]);
      expect(capacity[100]).toBeCloseTo(4.8); // 74 ms; 5.76 gives 103 ms
      expect(capacity[150]).toBeCloseTo(6.91); // 129 ms; 8.29 gives 179 ms
      expect(capacity[250]).toBeCloseTo(9.95); // 228 ms; 11.94 gives 288 ms
    });

    it('a point whose flows fall behind passes no bound, whatever its p99', async () => {
      const { points, capacity } = await sweepCapacity(
        stack(() => 20, 7),
        4,
        bounds,
      );
      expect(rates(points)).toEqual([4, 4.8, 5.76, 6.91, 8.29]);
      expect(capacity).toEqual({ 100: points[3]?.rate, 150: points[3]?.rate, 250: points[3]?.rate });
    });

    it('takes the highest rate that passed, when a higher rate passes after a lower one failed', async () => {
      // A noisy stack: 120 ms at 4.8/s, but 90 ms at 5.76/s; 300 ms from 6.91/s.
      const noisy: Record<string, number> = { '4': 80, '4.8': 120, '5.76': 90, '6.91': 300 };
      const { points, capacity } = await sweepCapacity(
        stack((r) => noisy[String(Number(r.toFixed(2)))] ?? 1_000),
        4,
        bounds,
      );
      expect(rates(points)).toEqual([4, 4.8, 5.76, 6.91]);
      expect(capacity[100]).toBeCloseTo(5.76);
      expect(capacity[150]).toBeCloseTo(5.76);
      expect(capacity[250]).toBeCloseTo(5.76);
    });

    it('goes down ÷1.2 from a start that fails the smallest bound until a rate passes it', async () => {
      // 200 ms at 8/s, 100 ms lower for each 1/s less.
      const { points, capacity } = await sweepCapacity(
        stack((r) => 200 + (r - 8) * 100),
        8,
        bounds,
      );
      // 8 passes 250 so the climb goes on to 9.6 (360 ms), then down from 8: 6.67 (67 ms) passes 100.
      expect(rates(points)).toEqual([8, 9.6, 6.67]);
      expect(capacity[100]).toBeCloseTo(6.67);
      expect(capacity[150]).toBeCloseTo(6.67);
      expect(capacity[250]).toBe(8);
    });

    it('does not go below half the start: no capacity at a bound nothing met', async () => {
      // 120 ms at any rate: never under 100, always under 150.
      const { points, capacity } = await sweepCapacity(
        stack(() => 120, 5),
        4,
        bounds,
      );
      expect(rates(points)).toEqual([4, 4.8, 5.76, 3.33, 2.78, 2.31]);
      expect(Math.min(...points.map((p) => p.rate))).toBeGreaterThanOrEqual(2);
      expect(capacity[100]).toBe(0);
      expect(capacity[150]).toBeCloseTo(4.8);
      expect(capacity[250]).toBeCloseTo(4.8);
    });

    it('the next rate is decided by the points alone', () => {
      expect(nextSweepRate([], 3, bounds)).toBe(3);
      expect(nextSweepRate([{ rate: 3, p99: 50, held: true }], 3, bounds)).toBeCloseTo(3.6);
      // Failing the largest bound at the start: down at once.
      expect(nextSweepRate([{ rate: 3, p99: 400, held: true }], 3, bounds)).toBeCloseTo(2.5);
      // Stopped early (not held): the same.
      expect(nextSweepRate([{ rate: 3, p99: 40, held: false }], 3, bounds)).toBeCloseTo(2.5);
      // The lowest passes the smallest bound once the climb has ended: done.
      expect(
        nextSweepRate(
          [
            { rate: 3, p99: 90, held: true },
            { rate: 3.6, p99: 260, held: true },
          ],
          3,
          bounds,
        ),
      ).toBeUndefined();
      expect(capacitiesAt([], bounds)).toEqual({ 100: 0, 150: 0, 250: 0 });
    });
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
