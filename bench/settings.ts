import { randomBytes } from 'node:crypto';

// The run's settings (`--quick`, `--skip=`, `--only=` and BENCH_* from the environment), and
// what every step shares: the run's tag, its log line, a sleep.

const args = process.argv.slice(2);
const QUICK = args.includes('--quick');
const envNum = (name: string, dflt: number) => {
  const v = process.env[name];
  return v && Number.isFinite(Number(v)) ? Number(v) : dflt;
};
const listArg = (flag: string) =>
  args
    .filter((a) => a.startsWith(`${flag}=`))
    .flatMap((a) => a.slice(flag.length + 1).split(','))
    .map((s) => s.trim())
    .filter(Boolean);

/** The parts of a run that can be left out (the ramps and the deposit's shape always run). */
export const PARTS = [
  'capacity',
  'cost',
  'onboarding',
  'peak',
  'ingress',
  'events',
  'open-flows',
  'production',
] as const;
export type Part = (typeof PARTS)[number];

const skip = listArg('--skip');
const only = listArg('--only');
for (const p of [...skip, ...only]) {
  if (!(PARTS as readonly string[]).includes(p)) {
    throw new Error(`unknown part "${p}" in --skip/--only; the parts are ${PARTS.join(', ')}`);
  }
}

/** Whether a part runs in this run, and why not when it does not. */
export function partSkipped(part: Part): string | undefined {
  if (only.length && !only.includes(part)) return 'not run: left out (--only)';
  if (skip.includes(part)) return 'not run: left out (--skip)';
  if (part === 'capacity' && settings.capacity.rounds < 1) {
    return 'not run: BENCH_CAPACITY_ROUNDS is 0 (reported, not a goal; 1 or more measures it)';
  }
  return undefined;
}

export const settings = {
  mode: QUICK ? 'quick' : 'full',
  stepMs: envNum('BENCH_STEP_MS', QUICK ? 8_000 : 20_000),
  maxSteps: envNum('BENCH_MAX_STEPS', 8),
  tokenMinutes: envNum('BENCH_TOKEN_MINUTES', QUICK ? 1 : 10),
  /**
   * People onboarded at the start, whom the deposits and withdrawals take turns with. The rules
   * and the alert monitor read a person's day of movements for each of theirs, so this sets what
   * a movement costs: a full run's 30,000 or so flows come to some 30 a person (16 people would
   * each end with some 2,000 in the day, a bot's day, not a bettor's). Onboarding 1,000 takes
   * about 4 minutes (200: 45 s).
   */
  people: envNum('BENCH_PEOPLE', QUICK ? 200 : 1_000),
  /** How long the bench's client waits for an answer to a POST before it gives up. */
  clientTimeoutMs: envNum('BENCH_CLIENT_TIMEOUT_MS', 10_000),
  /** The latency the probe and the tail sort answers by (ms). */
  latencyTargetMs: 150,
  /** The peak's and the tail's evidence: each process's /metrics read this often (tail-evidence.ts). */
  evidenceWindowMs: envNum('BENCH_EVIDENCE_WINDOW_MS', 5_000),
  saturation: {
    /** Rounds of the four ramps (same-work deposits, deposits, same-work withdrawals, withdrawals). */
    rounds: envNum('BENCH_SATURATION_ROUNDS', QUICK ? 2 : 3),
  },
  capacity: {
    /** Answers per point of the sweep, at least. */
    samples: envNum('BENCH_CAPACITY_SAMPLES', QUICK ? 100 : 1_000),
    /**
     * The floor, the same-work floor, then deposits, this many times. None by default: capacity is
     * reported, not a goal, and one round (three sweeps of points of 1,000 answers) takes some 26
     * minutes that a run which must fit one sitting cannot spare; 1 or more measures it.
     */
    rounds: envNum('BENCH_CAPACITY_ROUNDS', 0),
    /** A point lasts at least this long, however high its rate. */
    minPointMs: QUICK ? 8_000 : 20_000,
    /** And at most this long, however low: its answers, fewer then than `samples`, are recorded. */
    maxPointMs: QUICK ? 30_000 : 120_000,
    /** The p99 bounds (ms) each kind's capacity is given at. */
    boundsMs: [100, 150, 250] as const,
    /** A deposit is paid this long after its QR, as a user pays (the floor: its payment signal). */
    payAfterMs: envNum('BENCH_CAPACITY_PAY_AFTER_MS', 5_000),
  },
  cost: {
    /** Every flow's step this many times, in turn; its figures are the medians. */
    rounds: envNum('BENCH_COST_ROUNDS', QUICK ? 1 : 3),
    stepMs: envNum('BENCH_COST_STEP_MS', QUICK ? 15_000 : 30_000),
    idleMs: QUICK ? 5_000 : 15_000,
    /** Completed flows of each type whose history is read. */
    histories: QUICK ? 10 : 30,
  },
  peak: {
    /** How long new deposits are offered, the opening included. */
    ms: envNum('BENCH_PEAK_MINUTES', QUICK ? 2 : 20) * 60_000,
    /** How long the same-work floor's peak offers deposits, just before pixflow's. */
    sameWorkMs: envNum('BENCH_PEAK_FLOOR_MINUTES', QUICK ? 2 : 20) * 60_000,
    /** Share of the deposits nobody pays. */
    unpaidShare: 0.5,
    /** A payer pays this long after the QR is answered, uniformly at random. */
    payAfterMs: [5_000, 120_000] as const,
    /** Share of the paid deposits whose payment notification is lost. */
    lostShare: envNum('BENCH_LOST_SHARE', 0.05),
    /** After the last payment, how long the bench waits for every paid deposit to complete, at most. */
    detectWaitMs: envNum('BENCH_DETECT_WAIT_MINUTES', QUICK ? 4 : 15) * 60_000,
  },
  openFlows: {
    /** Deposits opened and never paid: the worker's and the API's memory is read against how many are open. */
    count: envNum('BENCH_OPEN_FLOWS', QUICK ? 2_000 : 20_000),
    /**
     * Deposits offered a second, open loop, at most (a run offers `saturationShare` of the
     * deposits' saturation when that is less): steady and under saturation, so memory is what moves.
     */
    rate: envNum('BENCH_OPEN_FLOWS_RATE', 15),
    /**
     * An unpaid deposit costs less than the paid one saturation measures (no notification, no
     * inquiry, no completion), so four fifths of that rate stays under what the stack serves.
     */
    saturationShare: 0.8,
    /** How often the processes' memory, heap and the worker's cache are sampled. */
    sampleMs: envNum('BENCH_OPEN_FLOWS_SAMPLE_MS', 5_000),
  },
  /** Notifications of the ingress figure, at most (one per deposit the peak left unpaid). */
  ingressNotifications: envNum('BENCH_INGRESS_NOTIFICATIONS', QUICK ? 500 : 4_000),
  ingressConcurrency: 16,
  production: {
    /** Worker and API processes of each production run. */
    processes: [1, 2],
    /**
     * The `npm start` options of a production run, `{n}` standing for the process count: Temporal
     * on Postgres with n workers and n APIs.
     */
    argsTemplate: process.env.BENCH_PRODUCTION_ARGS ?? '--temporal postgres --workers {n} --apis {n}',
  },
  /** The sandbox pays a deposit / settles a payout this long after it was created (ramps, cost; capacity's payouts). */
  autoAfterMs: 100,
};

/**
 * The longest a part may take: about twice what it takes with this run's settings (so a longer
 * peak or more capacity rounds move it too). A part still going then is given up, recorded as
 * failed, and the run goes on, so a wedged server costs that part's figures, not the whole run's.
 */
export function partLimitMinutes(part: Part): number {
  const min = (ms: number) => ms / 60_000;
  switch (part) {
    case 'capacity':
      // Not run at 0 rounds, but a limit all the same.
      return 60 * Math.max(1, settings.capacity.rounds);
    case 'cost':
      // Five steps a round, each with the wait for a quiet stack before it.
      return 2 * settings.cost.rounds * 5 * (min(settings.cost.stepMs) + 1);
    case 'peak':
      return 2 * (min(settings.peak.ms + settings.peak.sameWorkMs + settings.peak.detectWaitMs) + 5);
    case 'events':
      return 30;
    case 'open-flows':
      // The offering at its rate, twice over, and the stack's start when run alone.
      return 2 * (settings.openFlows.count / settings.openFlows.rate / 60) + 10;
    case 'production':
      // Two stacks, each with its ramps and then its Temporal CPU steps (the cost part's rounds).
      return 60;
    default:
      return 20;
  }
}

/** Task queue of the bench's own worker (the floor and the signal sinks). */
export const FLOOR_QUEUE = 'bench-floor';

/** Task queue of the same-work floor's worker (bench/same-work-floor/). */
export const SAME_WORK_QUEUE = 'bench-same-work';

/** Sets this run's workflow ids and withdrawal ids apart from any other run's. */
export const runTag = randomBytes(3).toString('hex');

export const say = (msg: string) =>
  process.stdout.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `work`'s result, or a failure once `ms` have passed without one; the work itself is not stopped. */
export function withinLimit<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} gave no result within ${ms / 60_000} min`)), ms);
  });
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}
