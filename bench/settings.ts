import { randomBytes } from 'node:crypto';
import { DEFAULT_TIMINGS } from '../contracts/shared';

// The run's settings (`--quick` and BENCH_* from the environment), and what every step shares:
// the run's tag, its log line, a sleep.

const QUICK = process.argv.includes('--quick');
const envNum = (name: string, dflt: number) => {
  const v = process.env[name];
  return v && Number.isFinite(Number(v)) ? Number(v) : dflt;
};
export const settings = {
  mode: QUICK ? 'quick' : 'full',
  stepMs: envNum('BENCH_STEP_MS', QUICK ? 8_000 : 20_000),
  maxSteps: envNum('BENCH_MAX_STEPS', 8),
  openFlows: envNum('BENCH_OPEN_FLOWS', QUICK ? 500 : 10_000),
  tokenMinutes: envNum('BENCH_TOKEN_MINUTES', QUICK ? 1 : 10),
  /**
   * People onboarded at the start, whom the deposits and withdrawals take turns with. Their daily
   * payout limits add up to 16 × R$ 50.000,00, over 8,000 of the bench's largest withdrawals
   * (R$ 90,99); a full run offers at most about 2,500.
   */
  people: envNum('BENCH_PEOPLE', 16),
  /**
   * Reconciliation polls of the stack. Full: the production default. Quick: the same schedule
   * ten times shorter, so the open deposits get past their early polls in about a minute.
   */
  pollScheduleMs: QUICK ? DEFAULT_TIMINGS.pollScheduleMs.map((ms) => ms / 10) : undefined,
  /** The sandbox pays a deposit / settles a payout this long after it was created. */
  autoAfterMs: 100,
  ingressConcurrency: 16,
};

/** The reconciliation schedule the stack runs with. */
export const pollSchedule = (): readonly number[] =>
  settings.pollScheduleMs ?? DEFAULT_TIMINGS.pollScheduleMs;

/** Task queue of the bench's own worker (the floor and the signal sinks). */
export const FLOOR_QUEUE = 'bench-floor';

/** Sets this run's workflow ids and withdrawal ids apart from any other run's. */
export const runTag = randomBytes(3).toString('hex');

export const say = (msg: string) =>
  process.stdout.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
