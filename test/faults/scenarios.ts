import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { endpointNameSchema } from '../../connectors/identity-payments/wire/schemas';
import { type People, peopleForPayouts } from '../helpers/people';
import { checkEvents, type EventsBackend } from './events-check';
import type { Harness } from './harness';
import { type CheckResult, check, type Load, type LoadSpec, MAX_PAYOUT_CENTAVOS, runLoad } from './load';

// The scenarios: each runs the mixed load, injects its fault while the load runs, waits for
// every flow to end and checks it (load.ts). Figures go to a JSON file the report quotes.

export const FULL = process.env.FAULTS_FULL === '1';

export const SPEC: LoadSpec = FULL
  ? {
      deposits: 50,
      withdrawals: 50,
      onboardings: 20,
      unpaidDeposits: 10,
      failedWithdrawals: 10,
      refusedOnboardings: 5,
      concurrency: 8,
    }
  : {
      deposits: 8,
      withdrawals: 8,
      onboardings: 4,
      unpaidDeposits: 2,
      failedWithdrawals: 2,
      refusedOnboardings: 1,
      concurrency: 4,
    };

/** Timings of the stack: QR codes expire fast and reconciliation polls every few seconds. */
export const STACK = FULL
  ? { depositExpiryMs: 30_000, pollScheduleMs: '2000,4000' }
  : { depositExpiryMs: 12_000, pollScheduleMs: '2000,4000' };
/** Past the last reconciliation interval. */
const NOTIFICATION_DELAY_MS = 6_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const between = (a: number, b: number) => a + Math.floor(Math.random() * (b - a));
/** The same 5xx rate on every provider endpoint the sandbox serves. */
const onEveryEndpoint = (rate: number) =>
  Object.fromEntries(endpointNameSchema.options.map((endpoint) => [endpoint, rate]));

export interface ScenarioContext {
  h: Harness;
  /** The backend receiving the events: a kill can wait until a delivery is in flight. */
  backend: EventsBackend;
  /** Resolves when every request of the load was accepted. */
  loadDone: Promise<unknown>;
  faults: Record<string, number>;
}

export interface Scenario {
  name: string;
  description: string;
  /** Scenarios without onboardings (their liveness callbacks cannot be reconciled). */
  onboardings?: false;
  /** Sandbox knobs for the whole scenario. */
  knobs?: Record<string, unknown>;
  /** The fault, run alongside the load. */
  inject?: (ctx: ScenarioContext) => Promise<void>;
}

async function workerMetric(
  h: Harness,
): Promise<{ calls: number; by503: number; by429: number; slow: number }> {
  const text = await fetch(`http://127.0.0.1:${h.ports.WORKER_HTTP_PORT}/metrics`, {
    signal: AbortSignal.timeout(5000),
  })
    .then((r) => r.text())
    .catch(() => '');
  let calls = 0;
  let by503 = 0;
  let by429 = 0;
  let count = 0;
  let under1s = 0;
  for (const line of text.split('\n')) {
    const m =
      /^(pixflow_provider_calls_total|pixflow_provider_call_duration_seconds_(?:count|bucket))\{([^}]*)\} (\d+)/.exec(
        line,
      );
    if (!m) continue;
    const v = Number(m[3]);
    if (m[1] === 'pixflow_provider_calls_total') {
      calls += v;
      if (m[2]?.includes('status="503"')) by503 += v;
      if (m[2]?.includes('status="429"')) by429 += v;
    } else if (m[1]?.endsWith('_count')) count += v;
    else if (m[2]?.includes('le="1"')) under1s += v;
  }
  return { calls, by503, by429, slow: count - under1s };
}

export const SCENARIOS: Scenario[] = [
  {
    name: 'worker-kill',
    description: 'kill -9 the worker three times at random moments, restarting it each time',
    async inject({ h, faults }) {
      for (let i = 0; i < (FULL ? 3 : 1); i++) {
        await sleep(between(1_000, FULL ? 15_000 : 6_000));
        await h.killWorker();
        faults.workerKills = (faults.workerKills ?? 0) + 1;
        await sleep(between(500, 3_000));
        await h.startWorker();
      }
    },
  },
  ...(FULL ? [temporalRestart()] : []),
  {
    name: 'postgres-restart',
    description: 'stop Postgres mid-run and start it again (the ingress answers 503, the provider retries)',
    async inject({ h, faults }) {
      await sleep(between(2_000, FULL ? 10_000 : 5_000));
      await h.stopPostgres();
      faults.postgresRestarts = 1;
      await sleep(3_000);
      await h.startPostgres();
    },
  },
  {
    name: 'api-kill',
    description:
      'kill -9 the API while requests and webhook deliveries are in flight; callers retry with the same ids',
    async inject({ h, faults, backend }) {
      for (let i = 0; i < 2; i++) {
        await sleep(between(300, FULL ? 4_000 : 1_500));
        // Mid-delivery: the receiver holds one event's request unanswered when the API dies.
        const held = await Promise.race([
          backend.holdOne().then(() => true),
          sleep(10_000).then(() => false),
        ]);
        if (held) faults.deliveriesKilledInFlight = (faults.deliveriesKilledInFlight ?? 0) + 1;
        await h.killApi();
        faults.apiKills = (faults.apiKills ?? 0) + 1;
        await h.startApi();
      }
    },
  },
  ...(FULL
    ? [
        {
          name: 'provider-5xx',
          description: '20% of the calls to every provider endpoint answer 503',
          knobs: {
            errorRate: onEveryEndpoint(0.2),
          },
        },
        {
          name: 'provider-latency',
          description: 'latency spikes of 2 s on 30% of the provider calls',
          knobs: { latency: { spikeMs: 2_000, spikeProbability: 0.3 } },
        },
        {
          name: 'provider-token-429',
          description:
            'token endpoint 429 bursts: tokens revoked and the next 3 token requests refused (Retry-After 1 s), every 10 s',
          inject: tokenBursts,
        },
      ]
    : [
        {
          name: 'provider-faults',
          description: '20% 5xx on every endpoint, 2 s latency spikes and token 429 bursts at once',
          knobs: {
            errorRate: onEveryEndpoint(0.2),
            latency: { spikeMs: 2_000, spikeProbability: 0.2 },
          },
          inject: tokenBursts,
        },
      ]),
  {
    name: 'notifications-dropped',
    description: 'every notification dropped: reconciliation alone finishes deposits and withdrawals',
    onboardings: false,
    knobs: { notifications: { dropNext: 1_000_000 } },
  },
  ...(FULL
    ? [
        {
          name: 'notifications-duplicated',
          description: 'every notification delivered six times (five duplicates)',
          knobs: { notifications: { duplicate: 5 } },
        },
        {
          name: 'notifications-reordered',
          description: 'notifications held in windows of 5 and delivered newest first',
          knobs: { notifications: { reorderWindow: 5, reorderHoldMs: 1_500 } },
        },
        {
          name: 'notifications-delayed',
          description: `every notification delayed ${NOTIFICATION_DELAY_MS / 1000} s, past the last reconciliation interval`,
          knobs: { notifications: { delayMs: NOTIFICATION_DELAY_MS } },
        },
      ]
    : [
        {
          name: 'notifications-mixed',
          description: `notifications duplicated five times, reordered in windows of 3 and delayed ${NOTIFICATION_DELAY_MS / 1000} s`,
          knobs: {
            notifications: {
              duplicate: 5,
              reorderWindow: 3,
              reorderHoldMs: 1_000,
              delayMs: NOTIFICATION_DELAY_MS,
            },
          },
        },
      ]),
];

/**
 * The people every scenario's deposits and payouts are spread over, onboarded once for the run:
 * enough that nobody passes the daily payout limit over all the scenarios, and a few at least.
 */
export const PEOPLE = Math.max(
  4,
  peopleForPayouts(SCENARIOS.length * SPEC.withdrawals * MAX_PAYOUT_CENTAVOS),
);

function temporalRestart(): Scenario {
  return {
    name: 'temporal-restart',
    description: 'stop the Temporal dev server mid-run and start it again on the same SQLite file',
    async inject({ h, faults }) {
      await sleep(between(2_000, 10_000));
      await h.stopTemporal();
      faults.temporalRestarts = 1;
      await sleep(5_000);
      await h.startTemporal();
    },
  };
}

async function tokenBursts({ h, loadDone, faults }: ScenarioContext) {
  let done = false;
  void loadDone.finally(() => {
    done = true;
  });
  while (!done) {
    await h.control('/sandbox/tokens/revoke', {});
    await h.control('/sandbox/faults', { tokenRateLimitNext: 3, retryAfterSeconds: 1 });
    faults.tokenBursts = (faults.tokenBursts ?? 0) + 1;
    await sleep(10_000);
  }
}

export interface ScenarioFigures {
  name: string;
  description: string;
  durationMs: number;
  flows: { deposits: number; withdrawals: number; onboardings: number };
  outcomes: Omit<CheckResult, 'problems' | 'sandbox' | 'lost' | 'duplicatePayouts'>;
  faultsInjected: Record<string, number>;
  /** The load's events, those the receiver got, and its requests beyond each event's first 2xx. */
  events: { emitted: number; delivered: number; attemptsBeyondFirst: number };
  flowsLost: number;
  payoutsDuplicated: number;
  callerRetries: number;
  apiErrorsSeen: number;
  problems: string[];
}

/** How long, after the flows' check, every event of the scenario has to reach the receiver. */
const EVENTS_TIMEOUT_MS = 120_000;
/** How long the check waits for every flow of a scenario to end. */
const CHECK_TIMEOUT_MS = FULL ? 300_000 : 150_000;
/**
 * The test's timeout for one scenario: its own deadlines (the load's longest wait, five minutes
 * for a payout to fail to show up at the sandbox, then the check's) plus a minute. A slow run
 * that is correct passes; a wrong one fails on its problems, never on a timeout that leaves the
 * check running while the next scenario resets the sandbox under it.
 */
export const SCENARIO_TIMEOUT_MS = 300_000 + CHECK_TIMEOUT_MS + EVENTS_TIMEOUT_MS + 60_000;

export async function runScenario(
  h: Harness,
  s: Scenario,
  people: People,
  backend: EventsBackend,
): Promise<ScenarioFigures> {
  const started = Date.now();
  await h.resetSandbox();
  if (s.knobs) await h.control('/sandbox/faults', s.knobs);
  const before = await workerMetric(h);
  const faults: Record<string, number> = {};
  const spec = s.onboardings === false ? { ...SPEC, onboardings: 0, refusedOnboardings: 0 } : SPEC;
  const loadP = runLoad(h, s.name, spec, people);
  const injectP = s.inject?.({ h, loadDone: loadP, faults, backend }) ?? Promise.resolve();
  const [load] = (await Promise.all([loadP, injectP])) as [Load, undefined];
  const loadSeconds = Math.round((Date.now() - started) / 1000);
  const result = await check(h, load, CHECK_TIMEOUT_MS);
  const events = await checkEvents(h, backend, load, EVENTS_TIMEOUT_MS);
  result.problems.push(...events.problems);
  process.stderr.write(
    `[faults] ${s.name}: checked after ${Math.round((Date.now() - started) / 1000)} s (load ${loadSeconds} s), ${result.problems.length} problems${result.problems.length ? `: ${result.problems.slice(0, 5).join('; ')}` : ''}\n`,
  );
  const after = await workerMetric(h);
  await h.control('/sandbox/faults', undefined, 'DELETE');
  const c = result.sandbox.counters;
  if (s.knobs && 'errorRate' in s.knobs) faults.provider503 = Math.max(0, after.by503 - before.by503);
  if (s.knobs && 'latency' in s.knobs) faults.providerCallsOver1s = Math.max(0, after.slow - before.slow);
  if (s.inject === tokenBursts) faults.token429 = Math.max(0, after.by429 - before.by429);
  if (s.name.startsWith('notifications')) {
    faults.notificationsSent = (c.notificationAttempts ?? 0) as number;
    if (c.notificationsDropped) faults.notificationsDropped = c.notificationsDropped;
  }
  if (s.name === 'postgres-restart') faults.ingressFailedAttempts = c.notificationFailedAttempts;
  const { problems, sandbox: _sb, lost, duplicatePayouts, ...outcomes } = result;
  return {
    name: s.name,
    description: s.description,
    durationMs: Date.now() - started,
    flows: {
      deposits: load.deposits.length,
      withdrawals: load.withdrawals.length,
      onboardings: load.onboardings.length,
    },
    outcomes,
    faultsInjected: faults,
    events: {
      emitted: events.events,
      delivered: events.delivered,
      attemptsBeyondFirst: events.attemptsBeyondFirst,
    },
    flowsLost: lost,
    payoutsDuplicated: duplicatePayouts,
    callerRetries: load.retries,
    apiErrorsSeen: load.apiErrors,
    problems,
  };
}

export function writeFigures(figures: ScenarioFigures[], startedAt: number) {
  const total = (f: (s: ScenarioFigures) => number) => figures.reduce((a, s) => a + f(s), 0);
  const report = {
    mode: FULL ? 'full' : 'light',
    startedAt: new Date(startedAt).toISOString(),
    durationMs: Date.now() - startedAt,
    machine: { cpus: os.cpus().length, node: process.version },
    loadPerScenario: SPEC,
    stack: STACK,
    totals: {
      scenarios: figures.length,
      flows: total((s) => s.flows.deposits + s.flows.withdrawals + s.flows.onboardings),
      deposits: total((s) => s.flows.deposits),
      withdrawals: total((s) => s.flows.withdrawals),
      onboardings: total((s) => s.flows.onboardings),
      flowsLost: total((s) => s.flowsLost),
      payoutsDuplicated: total((s) => s.payoutsDuplicated),
      problems: total((s) => s.problems.length),
    },
    scenarios: figures,
  };
  const file = FULL
    ? path.resolve(__dirname, '../../docs/reliability-last-run.json')
    : path.join(os.tmpdir(), 'pixflow-faults', 'last-light-run.json');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}
