import type { Bench } from '../harness';
import { type Completions, type Launched, type ObservedPoint, ramp } from '../load';
import { completedFlows, postDeposit, postWithdrawal } from '../pixflow';
import { say, settings } from '../settings';
import { median, round, saturationThroughput, spread } from '../stats';
import { observeStepLoad, stepLoadText } from '../step-load';
import { launchSameWork, sameWorkCompletions, withNotificationsToSameWork } from './same-work';

// Saturation, alternated: each round ramps the same-work floor's deposits, pixflow's deposits,
// the same-work floor's withdrawals and pixflow's withdrawals in turn, so a drift of the machine
// meets a flow and its floor alike; each of pixflow's saturations is read over its floor's of the
// same round. A later round starts each ramp at half of that kind's last saturation: the steps
// far below the knee tell nothing new.

export const SATURATION_KINDS = [
  'same-work deposits',
  'deposits',
  'same-work withdrawals',
  'withdrawals',
] as const;
export type SaturationKind = (typeof SATURATION_KINDS)[number];

export interface SaturationRamp {
  start: number;
  /** Each step, with the stack's load while it offered: beyond the knee, what bounds the ramp. */
  points: ObservedPoint[];
  saturation: number;
}

export interface SaturationRound {
  round: number;
  ramps: Record<SaturationKind, SaturationRamp>;
  /** Deposits' saturation over the same-work floor's deposits', this round. */
  depositRatio: number;
  withdrawalRatio: number;
}

/** Repeated measurements of one thing: each round's, their median and (max − min) / median. */
export interface Repeated {
  rounds: number[];
  median: number;
  spread: number;
}

export interface Saturation {
  rounds: SaturationRound[];
  /** Each kind's saturation over the rounds. */
  saturation: Record<SaturationKind, Repeated>;
  /** Deposits over the same-work floor's deposits, per round; withdrawals likewise. */
  depositRatio: Repeated;
  withdrawalRatio: Repeated;
}

/** The first round's start, at least (a later one starts at half the last saturation). */
const FIRST_START: Record<SaturationKind, number> = {
  'same-work deposits': 4,
  deposits: 2,
  'same-work withdrawals': 2,
  withdrawals: 2,
};

export function repeated(values: number[]): Repeated {
  // A round with no ratio (its floor completed nothing) leaves the spread unknown.
  const known = values.filter(Number.isFinite);
  return {
    rounds: values,
    median: round(median(known)),
    spread: known.length === values.length ? round(spread(values), 3) : Number.NaN,
  };
}

const ratio = (a: number, of: number) => (of > 0 ? round(a / of) : Number.NaN);

/**
 * The rounds. The first starts each ramp at a quarter of its bare floor's saturation (`floors`:
 * the deposit-shaped and the withdrawal-shaped), if that is above its usual start: the steps far
 * below the knee only show that completions keep up with the offer.
 */
export async function saturationRounds(
  b: Bench,
  floors: { deposit: number; withdrawal: number },
): Promise<Saturation> {
  const kinds: Record<SaturationKind, { launch: () => Promise<Launched>; completions: Completions }> = {
    'same-work deposits': {
      launch: launchSameWork(b, 'deposit'),
      completions: sameWorkCompletions(b, 'deposit'),
    },
    deposits: { launch: () => postDeposit(b), completions: completedFlows(b, 'deposit') },
    'same-work withdrawals': {
      launch: launchSameWork(b, 'withdrawal'),
      completions: sameWorkCompletions(b, 'withdrawal'),
    },
    withdrawals: { launch: () => postWithdrawal(b), completions: completedFlows(b, 'withdrawal') },
  };
  const rounds: SaturationRound[] = [];
  const last: Partial<Record<SaturationKind, number>> = {};
  for (let n = 1; n <= settings.saturation.rounds; n++) {
    const ramps = {} as Record<SaturationKind, SaturationRamp>;
    for (const kind of SATURATION_KINDS) {
      const before = last[kind];
      const floor = kind.endsWith('deposits') ? floors.deposit : floors.withdrawal;
      const start = before ? Math.max(0.5, round(before / 2)) : Math.max(FIRST_START[kind], round(floor / 4));
      const { launch, completions } = kinds[kind];
      const run = async () => {
        say(`saturation, round ${n}: ${kind} from ${start}/s...`);
        return ramp(kind, start, launch, completions, () => observeStepLoad(b, kind.startsWith('same-work')));
      };
      const points = kind.startsWith('same-work') ? await withNotificationsToSameWork(b, run) : await run();
      const saturation = saturationThroughput(points);
      ramps[kind] = { start, points, saturation };
      const past = points.at(-1);
      if (past?.load) say(`   beyond the knee (${past.offered}/s offered): ${stepLoadText(past.load)}`);
      last[kind] = saturation;
    }
    const r: SaturationRound = {
      round: n,
      ramps,
      depositRatio: ratio(ramps.deposits.saturation, ramps['same-work deposits'].saturation),
      withdrawalRatio: ratio(ramps.withdrawals.saturation, ramps['same-work withdrawals'].saturation),
    };
    say(
      `   round ${n}: deposits ${r.depositRatio} of the same-work floor's, withdrawals ${r.withdrawalRatio}`,
    );
    rounds.push(r);
  }
  const of = (kind: SaturationKind) => repeated(rounds.map((r) => r.ramps[kind].saturation));
  return {
    rounds,
    saturation: {
      'same-work deposits': of('same-work deposits'),
      deposits: of('deposits'),
      'same-work withdrawals': of('same-work withdrawals'),
      withdrawals: of('withdrawals'),
    },
    depositRatio: repeated(rounds.map((r) => r.depositRatio)),
    withdrawalRatio: repeated(rounds.map((r) => r.withdrawalRatio)),
  };
}
