import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { endpointNameSchema } from '../../connectors/identity-payments/wire/schemas';
import { type People, peopleForPayouts } from '../helpers/people';
import { checkEvents, type EventsBackend } from './events-check';
import { BREAKER, DEFAULT_BRAND, type Harness } from './harness';
import {
  API_PIX,
  brandOfFlow,
  type CheckResult,
  check,
  FIRST_PROVIDER,
  type Load,
  type LoadSpec,
  MAX_PAYOUT_CENTAVOS,
  newLoad,
  runLoad,
} from './load';

// The scenarios: each runs the mixed load, injects its fault while the load runs, waits for
// every flow to end and checks it (load.ts). Figures go to a JSON file the report quotes. Two
// brands share the load; a provider's fault is injected at both brands' sandboxes, but for the
// outage, which is the default brand's provider's (brand B has no second connector to fail over to).

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
/** The first provider's outage: when it starts after the mixed phase began, how long it lasts. */
const OUTAGE = FULL ? { afterMs: 8_000, forMs: 15_000 } : { afterMs: 3_000, forMs: 8_000 };

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
  /** The load as it goes: its requests so far. */
  load: Load;
  faults: Record<string, number>;
}

export interface Scenario {
  name: string;
  description: string;
  /** Scenarios without onboardings (their liveness callbacks cannot be reconciled). */
  onboardings?: false;
  /** The load's shape where it differs from SPEC. */
  spec?: Partial<LoadSpec>;
  /** Sandbox knobs for the whole scenario. */
  knobs?: Record<string, unknown>;
  /** The fault, run alongside the load. */
  inject?: (ctx: ScenarioContext) => Promise<void>;
  /** What the scenario checks beyond every flow's end, and its own figures, once the flows ended. */
  verify?: (ctx: ScenarioContext) => Promise<{ problems: string[]; failover: FailoverFigures }>;
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
  providerOutageFailover(),
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

/**
 * The first provider wholly down in the middle of the mixed load (every endpoint, its token's
 * too, answers 503): deposits asked then must get their QR from the API Pix PSP within the same
 * request, while payouts and onboardings, which only the first provider serves, wait for it and
 * finish once it is back. The load arrives at a steady pace (an open load), so deposits keep
 * coming before, during and after the outage whatever the onboardings stuck in it do, and for
 * longer than the breaker's last cool-down after it: a deposit then finds the first provider back
 * and closes its breaker, so the next scenario starts with both providers taking deposits.
 */
function providerOutageFailover(): Scenario {
  const outage = { downAt: 0, upAt: 0, opens: new Set<string>() };
  return {
    name: 'provider-outage-failover',
    description: `the first provider wholly down (503 on every endpoint) for ${OUTAGE.forMs / 1000} s mid-load: deposits fail over to the API Pix PSP within the request, payouts and onboardings wait for it`,
    spec: FULL
      ? // Fewer onboardings: each one stuck in the outage asks its state every second, and
        // together they would spend the API key's rate limit the deposits need.
        { deposits: 60, onboardings: 6, refusedOnboardings: 2, arrivalMs: 300 }
      : { deposits: 20, onboardings: 2, refusedOnboardings: 1, arrivalMs: 700 },
    async inject({ h, load, faults }) {
      while (load.mixedAt === undefined) await sleep(100);
      await sleep(Math.max(0, load.mixedAt + OUTAGE.afterMs - Date.now()));
      const watching = watchBreakerOpens(h, outage.opens);
      await h.control('/sandbox/faults', { errorRate: onEveryEndpoint(1) });
      outage.downAt = Date.now();
      faults.providerOutages = 1;
      await sleep(OUTAGE.forMs);
      outage.upAt = Date.now();
      await h.control('/sandbox/faults', { errorRate: onEveryEndpoint(0) });
      faults.outageSeconds = Math.round((outage.upAt - outage.downAt) / 1000);
      // A try that began in the outage records its failure just after it: watched a while longer.
      await sleep(2_000);
      watching.stop();
      await watching.done;
      // Opens before the outage (another scenario's) are not this one's.
      for (const at of outage.opens) if (Date.parse(at) < outage.downAt - 1_000) outage.opens.delete(at);
    },
    async verify({ load }) {
      const problems: string[] = [];
      // The outage is the default brand's provider's: brand B's deposits go to B's own.
      const records = [...load.depositRecords.values()].filter(
        (d) => brandOfFlow(load, `deposit:${d.txid}`) === DEFAULT_BRAND,
      );
      const inWindow = records.filter(
        (d) => d.sentAt >= outage.downAt && d.answeredAt !== undefined && d.answeredAt <= outage.upAt,
      );
      const before = records.filter((d) => d.answeredAt !== undefined && d.answeredAt < outage.downAt);
      if (inWindow.length === 0) problems.push('no deposit was asked and answered during the outage');
      for (const d of inWindow) {
        // The API's rate limit (429) turns a request away before pixflow acts on it: the first
        // request it took must have been answered with the QR.
        const taken = d.statuses.filter((status) => status !== 429);
        if (taken.length !== 1 || taken[0] !== 201)
          problems.push(`deposit ${d.txid} during the outage: answers ${d.statuses.join(', ')}, not one 201`);
        if (d.connector !== API_PIX)
          problems.push(
            `deposit ${d.txid} during the outage: its QR came from ${d.connector}, not ${API_PIX}`,
          );
      }
      if (outage.opens.size === 0)
        problems.push("the first provider's breaker never opened during the outage");
      // Once the provider is back and the breaker's cool-down has passed, deposits go to it again.
      // (a second after it: a try begun in the outage may have opened it again as it ended)
      const recovered = records.filter((d) => d.sentAt > outage.upAt + BREAKER.coolDownMs + 1_000);
      if (!recovered.some((d) => d.connector === FIRST_PROVIDER))
        problems.push(
          `no deposit asked after the outage and the breaker's cool-down went to ${FIRST_PROVIDER} (${recovered.length} asked)`,
        );
      const backAt = records
        .filter((d) => d.connector === FIRST_PROVIDER && d.sentAt > outage.upAt)
        .map((d) => d.sentAt - outage.upAt);
      const qrMs = (ds: typeof records) =>
        latency(ds.map((d) => (d.answeredAt as number) - (d.acceptedSentAt as number)));
      return {
        problems,
        failover: {
          outageMs: outage.upAt - outage.downAt,
          depositsInWindow: inWindow.length,
          failedOver: inWindow.filter((d) => d.connector === API_PIX).length,
          depositsByConnector: {
            [FIRST_PROVIDER]: records.filter((d) => d.connector === FIRST_PROVIDER).length,
            [API_PIX]: records.filter((d) => d.connector === API_PIX).length,
          },
          breakerOpens: outage.opens.size,
          breaker: BREAKER,
          rateLimitedInWindow: inWindow.filter((d) => d.statuses.includes(429)).length,
          payoutsAskedInWindow: [...load.withdrawalsSentAt.values()].filter(
            (at) => at >= outage.downAt && at <= outage.upAt,
          ).length,
          firstBackMs: backAt.length ? Math.min(...backAt) : null,
          qrMsBefore: qrMs(before),
          qrMsInWindow: qrMs(inWindow),
        },
      };
    },
  };
}

/** Each time the first provider's breaker opened (its `opened_at`), read every 250 ms until stopped. */
function watchBreakerOpens(h: Harness, opens: Set<string>): { stop: () => void; done: Promise<void> } {
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const rows = await h
        .pool!.query<{ opened_at: Date | null }>(
          'SELECT opened_at FROM connector_breakers WHERE connector = $1',
          [FIRST_PROVIDER],
        )
        .catch(() => ({ rows: [] }));
      for (const r of rows.rows) if (r.opened_at) opens.add(r.opened_at.toISOString());
      await sleep(250);
    }
  })();
  return {
    stop: () => {
      stopped = true;
    },
    done,
  };
}

/** A set of times: how many, the median and the slowest, in ms. */
function latency(ms: number[]): { n: number; p50: number; max: number } {
  const sorted = [...ms].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: sorted.length ? (sorted[Math.floor((sorted.length - 1) / 2)] as number) : 0,
    max: sorted.length ? (sorted[sorted.length - 1] as number) : 0,
  };
}

/** What a provider outage's failover did, for the report. */
export interface FailoverFigures {
  outageMs: number;
  /** Deposits asked after the outage began and answered before it ended. */
  depositsInWindow: number;
  /** Of those, the ones whose QR the API Pix PSP made. */
  failedOver: number;
  /** Every deposit of the scenario, by the connector that made its charge. */
  depositsByConnector: Record<string, number>;
  /** How many times the first provider's breaker opened. */
  breakerOpens: number;
  breaker: typeof BREAKER;
  /** Deposits of the window the API's rate limit turned away (429) before one was taken. */
  rateLimitedInWindow: number;
  /** Payouts asked during the outage: they wait for the first provider (the check saw each end, paid once). */
  payoutsAskedInWindow: number;
  /** How long after the outage the first deposit asked went to the first provider again. */
  firstBackMs: number | null;
  /** The time to the QR (the request the API took to its 201), before the outage and during it. */
  qrMsBefore: { n: number; p50: number; max: number };
  qrMsInWindow: { n: number; p50: number; max: number };
}

/**
 * How long the token bursts last: the load's busy first minute. Re-armed every 10 s for as long as
 * the load runs, "the next three token requests" would keep refusing the last flows' lone retries
 * (the load itself waits for them), a limit no provider's request-counting one is.
 */
const TOKEN_BURSTS_FOR_MS = 60_000;

async function tokenBursts({ h, loadDone, faults }: ScenarioContext) {
  let done = false;
  void loadDone.finally(() => {
    done = true;
  });
  const until = Date.now() + TOKEN_BURSTS_FOR_MS;
  while (!done && Date.now() < until) {
    for (const side of h.sides) {
      await side.control('/sandbox/tokens/revoke', {});
      await side.control('/sandbox/faults', { tokenRateLimitNext: 3, retryAfterSeconds: 1 });
    }
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
  /** A provider outage's failover (provider-outage-failover only). */
  failover?: FailoverFigures;
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
  if (s.knobs) for (const side of h.sides) await side.control('/sandbox/faults', s.knobs);
  const before = await workerMetric(h);
  const faults: Record<string, number> = {};
  const shape = { ...SPEC, ...s.spec };
  const spec = s.onboardings === false ? { ...shape, onboardings: 0, refusedOnboardings: 0 } : shape;
  const load = newLoad(s.name);
  const loadP = runLoad(h, s.name, spec, people, load);
  const ctx: ScenarioContext = { h, loadDone: loadP, load, faults, backend };
  const injectP = s.inject?.(ctx) ?? Promise.resolve();
  await Promise.all([loadP, injectP]);
  const loadSeconds = Math.round((Date.now() - started) / 1000);
  const result = await check(h, load, CHECK_TIMEOUT_MS);
  const events = await checkEvents(h, backend, load, EVENTS_TIMEOUT_MS);
  result.problems.push(...events.problems);
  const verified = await s.verify?.(ctx);
  if (verified) result.problems.push(...verified.problems);
  if (verified) process.stderr.write(`[faults] ${s.name}: ${JSON.stringify(verified.failover)}\n`);
  process.stderr.write(
    `[faults] ${s.name}: checked after ${Math.round((Date.now() - started) / 1000)} s (load ${loadSeconds} s), ${result.problems.length} problems${result.problems.length ? `: ${result.problems.slice(0, 5).join('; ')}` : ''}\n`,
  );
  const after = await workerMetric(h);
  for (const side of h.sides) await side.control('/sandbox/faults', undefined, 'DELETE');
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
    ...(verified ? { failover: verified.failover } : {}),
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
