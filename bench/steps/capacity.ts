import type { FloorShape } from '../floor-workflow';
import { type Bench, settle } from '../harness';
import { type Completions, type Launched, step } from '../load';
import { completedFlows, postDeposit } from '../pixflow';
import { say, settings } from '../settings';
import {
  median,
  overTargetThatDecides,
  percentileWithFailures,
  round,
  searchCapacity,
  spread,
} from '../stats';
import { floorCompletions, launchFloor } from './floor';
import {
  launchSameWork,
  type SameWorkKind,
  type SameWorkRamp,
  sameWorkCompletions,
  sameWorkRamps,
  withNotificationsToSameWork,
} from './same-work';

// Capacity at the latency target: the highest rate at which the answer's p99 (POST /v1/deposits,
// the same-work floor's POST, or the bare floor's update-with-start) stays under the target, each
// point at least `settings.capacity.samples` answers; the three searched in turn, several rounds,
// so a drift of the machine meets all alike. First the same-work floor's saturation, ramped as
// pixflow's deposits and withdrawals were.

export type CapacityKind = 'floor' | 'same-work' | 'deposits';

export interface CapacityPoint {
  rate: number;
  pass: boolean;
  /** p99 of the answers, each failed offer counted as never answered. */
  p99: number;
  answers: number;
  failures: number;
  /** Completions per second: a point whose flows fall behind is not a capacity, whatever the p99. */
  achieved: number;
  /** The offering ended once enough answers were over the target to decide the p99. */
  stoppedEarly: boolean;
  stealPct: number;
  /** How long the point waited for the stack to go quiet after the one before (ms). */
  settledMs: number;
}

export interface CapacitySearch {
  kind: CapacityKind;
  round: number;
  start: number;
  capacity: number;
  points: CapacityPoint[];
}

export interface Capacity {
  /** The same-work floor's deposits and withdrawals ramped to saturation. */
  sameWorkSaturation: Record<SameWorkKind, SameWorkRamp>;
  searches: CapacitySearch[];
  /** Deposits' capacity over the floor's, per round. */
  ratios: number[];
  medianRatio: number;
  /** (max − min) / median of the ratios. */
  ratioSpread: number;
  /** Deposits' capacity over the same-work floor's, per round. */
  sameWorkRatios: number[];
  sameWorkMedianRatio: number;
  sameWorkRatioSpread: number;
  floorMedian: number;
  sameWorkMedian: number;
  depositsMedian: number;
}

/**
 * One point: `rate` for long enough to get the samples; whether p99 and completions held. It
 * begins once the stack is quiet: a point over the knee leaves a queue behind it, which would
 * otherwise be the next point's load (the floor's, for the deposits' first point of a round).
 */
async function tryPoint(b: Bench, rate: number, launch: () => Promise<Launched>, completions: Completions) {
  const settled = await settle(b);
  const { samples, minPointMs } = settings.capacity;
  const target = settings.latencyTargetMs;
  const durMs = Math.max(minPointMs, (samples / rate) * 1000);
  const decides = overTargetThatDecides(Math.round((rate * durMs) / 1000));
  let over = 0;
  let seen = 0;
  const r = await step(rate, durMs, launch, completions, {
    drainMs: 60_000,
    stopWhen: (latencies, failures) => {
      for (; seen < latencies.length; seen++) if ((latencies[seen] as number) >= target) over++;
      return over + failures >= decides;
    },
  });
  const p99 = percentileWithFailures(r.latenciesMs, r.errors);
  const point: CapacityPoint = {
    rate: round(rate),
    pass: !r.stoppedEarly && p99 < target && r.point.achieved >= 0.9 * rate,
    p99: round(p99),
    answers: r.latenciesMs.length,
    failures: r.errors,
    achieved: r.point.achieved,
    stoppedEarly: r.stoppedEarly,
    stealPct: r.stealPct,
    settledMs: settled.waitedMs,
  };
  say(
    `   ${round(rate)}/s: p99 ${point.p99} ms over ${point.answers} answers (${point.failures} failed${point.stoppedEarly ? ', stopped once decided' : ''}), completed ${point.achieved}/s: ${point.pass ? 'pass' : 'fail'}`,
  );
  return point;
}

async function search(
  b: Bench,
  kind: CapacityKind,
  roundNo: number,
  start: number,
  launch: () => Promise<Launched>,
  completions: Completions,
): Promise<CapacitySearch> {
  say(`capacity, round ${roundNo}: ${kind} from ${round(start)}/s...`);
  const points: CapacityPoint[] = [];
  const found = await searchCapacity(
    async (rate) => {
      const p = await tryPoint(b, rate, launch, completions);
      points.push(p);
      return p.pass;
      // Not below a quarter of the start: at low rates a point of enough samples takes many minutes.
    },
    start,
    { minRate: start / 4 },
  );
  say(`   ${kind}: ${round(found.capacity)}/s`);
  return { kind, round: roundNo, start: round(start), capacity: round(found.capacity), points };
}

/** Ratios of the rounds: their median and spread ((max − min) / median; unknown when a round has none). */
function ratiosOf(ratios: number[]) {
  // A round whose floor met the target at no rate has no ratio: the spread is then unknown.
  const known = ratios.filter(Number.isFinite);
  return {
    median: round(median(known)),
    spread: known.length === ratios.length ? round(spread(ratios), 3) : Number.NaN,
  };
}

/**
 * The floor's, the same-work floor's and the deposits' capacity at the latency target,
 * alternated. The first round starts each at half its ramp's saturation; a later one at the
 * capacity the last round found.
 */
export async function capacityAtTarget(
  b: Bench,
  shape: FloorShape,
  saturation: { floor: number; deposits: number },
): Promise<Capacity> {
  const sameWorkSaturation = await sameWorkRamps(b);
  const sat: Record<CapacityKind, number> = {
    ...saturation,
    'same-work': sameWorkSaturation.deposit.saturation,
  };
  const kinds: Record<CapacityKind, { launch: () => Promise<Launched>; completions: Completions }> = {
    floor: { launch: () => launchFloor(b, shape), completions: floorCompletions(b) },
    'same-work': { launch: launchSameWork(b, 'deposit'), completions: sameWorkCompletions(b, 'deposit') },
    deposits: { launch: () => postDeposit(b), completions: completedFlows(b, 'deposit') },
  };
  const searches: CapacitySearch[] = [];
  const last: Record<CapacityKind, number> = { floor: 0, 'same-work': 0, deposits: 0 };
  const ratio = (a: number, of: number) => (of > 0 ? round(a / of) : Number.NaN);
  const ratios: number[] = [];
  const sameWorkRatios: number[] = [];
  for (let n = 1; n <= settings.capacity.rounds; n++) {
    const found = {} as Record<CapacityKind, number>;
    for (const k of ['floor', 'same-work', 'deposits'] as const) {
      const start = last[k] > 0 ? last[k] : Math.max(1, sat[k] / 2);
      const { launch, completions } = kinds[k];
      const run = () => search(b, k, n, start, launch, completions);
      const s = k === 'same-work' ? await withNotificationsToSameWork(b, run) : await run();
      searches.push(s);
      found[k] = s.capacity;
      last[k] = s.capacity;
    }
    ratios.push(ratio(found.deposits, found.floor));
    sameWorkRatios.push(ratio(found.deposits, found['same-work']));
  }
  const of = (k: CapacityKind) => searches.filter((s) => s.kind === k).map((s) => s.capacity);
  const toFloor = ratiosOf(ratios);
  const toSameWork = ratiosOf(sameWorkRatios);
  return {
    sameWorkSaturation,
    searches,
    ratios,
    medianRatio: toFloor.median,
    ratioSpread: toFloor.spread,
    sameWorkRatios,
    sameWorkMedianRatio: toSameWork.median,
    sameWorkRatioSpread: toSameWork.spread,
    floorMedian: round(median(of('floor'))),
    sameWorkMedian: round(median(of('same-work'))),
    depositsMedian: round(median(of('deposits'))),
  };
}
