import type { FloorShape } from '../floor-workflow';
import { type Bench, settle } from '../harness';
import { type Completions, type Launched, step } from '../load';
import { completedFlows, postDeposit, setAuto } from '../pixflow';
import { say, settings } from '../settings';
import {
  overTargetThatDecides,
  percentileWithFailures,
  round,
  type SweepPoint,
  sweepCapacity,
} from '../stats';
import { floorCompletions, launchFloor } from './floor';
import { launchSameWork, sameWorkCompletions, withNotificationsToSameWork } from './same-work';
import { type Repeated, repeated } from './saturation';

// Capacity at three p99 bounds: for each of pixflow's deposits (POST /v1/deposits), the same-work
// floor (its POST /deposits) and the bare floor (its update-with-start), the highest rate at which
// the answer's p99 stays under each bound, each point at least `settings.capacity.samples`
// answers. One sweep per kind and round answers every bound (`sweepCapacity`); the three kinds are
// swept in turn, several rounds, so a drift of the machine meets all alike. Deposits are paid as
// users pay, seconds after their QR (the floor gets its payment signal as late), so the open flows
// a point carries are those a real rate brings.

export type CapacityKind = 'floor' | 'same-work' | 'deposits';
export const CAPACITY_KINDS: readonly CapacityKind[] = ['floor', 'same-work', 'deposits'];

export interface CapacityPoint extends SweepPoint {
  /** p99 of the answers, each failed offer counted as never answered. */
  p99: number;
  answers: number;
  failures: number;
  /** Completions per second: a point whose flows fall behind is not a capacity, whatever the p99. */
  achieved: number;
  /** The offering ended once enough answers were over the largest bound to decide the p99. */
  stoppedEarly: boolean;
  stealPct: number;
  /** How long the point waited for the stack to go quiet after the one before (ms). */
  settledMs: number;
}

export interface CapacitySweep {
  kind: CapacityKind;
  round: number;
  start: number;
  /** The capacity at each bound (ms): the highest rate tried that passed it, 0 when none did. */
  capacity: Record<number, number>;
  points: CapacityPoint[];
}

/** One bound's figures: each kind's capacity over the rounds, and the deposits' ratios over the floors'. */
export interface CapacityAtBound {
  boundMs: number;
  capacity: Record<CapacityKind, Repeated>;
  /** Deposits over the same-work floor, per round, their median and spread. */
  overSameWork: Repeated;
  /** Deposits over the bare floor, per round. */
  overFloor: Repeated;
}

export interface Capacity {
  /** How long after its QR each deposit was paid (the floor: its payment signal after its answer). */
  payAfterMs: number;
  sweeps: CapacitySweep[];
  bounds: CapacityAtBound[];
}

/**
 * One point: `rate` for long enough to get the samples; its p99 and whether its flows kept up. It
 * begins once the stack is quiet: a point over the knee leaves a queue behind it, which would
 * otherwise be the next point's load (another kind's, for a round's first point).
 */
async function tryPoint(
  b: Bench,
  rate: number,
  launch: () => Promise<Launched>,
  completions: Completions,
): Promise<CapacityPoint> {
  const settled = await settle(b);
  const { samples, minPointMs, maxPointMs, boundsMs, payAfterMs } = settings.capacity;
  // Once the p99 is known to reach the largest bound, it fails every bound: the point can stop.
  const largest = Math.max(...boundsMs);
  const durMs = Math.min(maxPointMs, Math.max(minPointMs, (samples / rate) * 1000));
  const decides = overTargetThatDecides(Math.round((rate * durMs) / 1000));
  let over = 0;
  let seen = 0;
  const r = await step(rate, durMs, launch, completions, {
    // The last flows are paid `payAfterMs` after their answer.
    drainMs: 60_000 + payAfterMs,
    stopWhen: (latencies, failures) => {
      for (; seen < latencies.length; seen++) if ((latencies[seen] as number) >= largest) over++;
      return over + failures >= decides;
    },
  });
  const p99 = percentileWithFailures(r.latenciesMs, r.errors);
  const point: CapacityPoint = {
    rate: round(rate),
    p99: round(p99),
    held: !r.stoppedEarly && r.point.achieved >= 0.9 * rate,
    answers: r.latenciesMs.length,
    failures: r.errors,
    achieved: r.point.achieved,
    stoppedEarly: r.stoppedEarly,
    stealPct: r.stealPct,
    settledMs: settled.waitedMs,
  };
  say(
    `   ${round(rate)}/s: p99 ${point.p99} ms over ${point.answers} answers (${point.failures} failed${point.stoppedEarly ? ', stopped once decided' : ''}), completed ${point.achieved}/s${point.held ? '' : ': fell behind'}`,
  );
  return point;
}

async function sweep(
  b: Bench,
  kind: CapacityKind,
  roundNo: number,
  start: number,
  launch: () => Promise<Launched>,
  completions: Completions,
): Promise<CapacitySweep> {
  const { boundsMs } = settings.capacity;
  say(`capacity, round ${roundNo}: ${kind} from ${round(start)}/s...`);
  const found = await sweepCapacity((rate) => tryPoint(b, rate, launch, completions), start, boundsMs);
  const capacity = Object.fromEntries(boundsMs.map((ms) => [ms, round(found.capacity[ms] ?? 0)]));
  say(`   ${kind}: ${boundsMs.map((ms) => `${capacity[ms]}/s under ${ms} ms`).join(', ')}`);
  return { kind, round: roundNo, start: round(start), capacity, points: found.points };
}

const ratio = (a: number, of: number) => (of > 0 ? round(a / of) : Number.NaN);

/** Each bound's capacities over the rounds and the deposits' ratios over the floors'. */
export function capacityAtBounds(
  sweeps: readonly CapacitySweep[],
  boundsMs: readonly number[],
): CapacityAtBound[] {
  const rounds = [...new Set(sweeps.map((s) => s.round))].sort((x, y) => x - y);
  const at = (kind: CapacityKind, n: number, ms: number) =>
    sweeps.find((s) => s.kind === kind && s.round === n)?.capacity[ms] ?? Number.NaN;
  return boundsMs.map((ms) => ({
    boundMs: ms,
    capacity: Object.fromEntries(
      CAPACITY_KINDS.map((k) => [k, repeated(rounds.map((n) => at(k, n, ms)))]),
    ) as Record<CapacityKind, Repeated>,
    overSameWork: repeated(rounds.map((n) => ratio(at('deposits', n, ms), at('same-work', n, ms)))),
    overFloor: repeated(rounds.map((n) => ratio(at('deposits', n, ms), at('floor', n, ms)))),
  }));
}

/**
 * The floor's, the same-work floor's and the deposits' capacity at each bound, alternated. The
 * first round starts each kind at half its saturation; a later one at the capacity at the smallest
 * bound the last round found (where the sweep had to come down to), so it climbs only the knee.
 */
export async function capacityAtBoundsPart(
  b: Bench,
  shape: FloorShape,
  saturation: Record<CapacityKind, number>,
): Promise<Capacity> {
  const { payAfterMs, boundsMs, rounds } = settings.capacity;
  const smallest = Math.min(...boundsMs);
  const kinds: Record<CapacityKind, { launch: () => Promise<Launched>; completions: Completions }> = {
    floor: {
      launch: () => launchFloor(b, shape, shape.signals, payAfterMs),
      completions: floorCompletions(b),
    },
    'same-work': { launch: launchSameWork(b, 'deposit'), completions: sameWorkCompletions(b, 'deposit') },
    deposits: { launch: () => postDeposit(b), completions: completedFlows(b, 'deposit') },
  };
  const sweeps: CapacitySweep[] = [];
  const next: Record<CapacityKind, number> = {
    floor: Math.max(1, saturation.floor / 2),
    'same-work': Math.max(1, saturation['same-work'] / 2),
    deposits: Math.max(1, saturation.deposits / 2),
  };
  await setAuto(b, payAfterMs, settings.autoAfterMs);
  try {
    for (let n = 1; n <= rounds; n++) {
      for (const k of CAPACITY_KINDS) {
        const { launch, completions } = kinds[k];
        const run = () => sweep(b, k, n, next[k], launch, completions);
        const s = k === 'same-work' ? await withNotificationsToSameWork(b, run) : await run();
        sweeps.push(s);
        const found = s.capacity[smallest] ?? 0;
        if (found > 0) next[k] = found;
      }
    }
  } finally {
    await setAuto(b, settings.autoAfterMs, settings.autoAfterMs);
  }
  return { payAfterMs, sweeps, bounds: capacityAtBounds(sweeps, boundsMs) };
}
