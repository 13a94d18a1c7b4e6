import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generate as generateCpf } from '@fnando/cpf';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import pg from 'pg';
import { pixflowDataConverter } from '../common/codec';
import { loadConfig } from '../common/config';
import {
  AmountKey,
  CpfMaskedKey,
  FlowStatusKey,
  FlowTypeKey,
  MerchantKey,
} from '../common/search-attributes';
import { workerTuningOptions } from '../common/worker-tuning';
import { workflowIds } from '../workflows/definitions';
import type { depositWorkflow } from '../workflows/deposit';
import type { DepositInput } from '../workflows/inputs';
import { DEFAULT_TIMINGS } from '../workflows/timings';
import {
  type ActivityKind,
  type FloorShape,
  floorSignal,
  floorUpdate,
  type floorWorkflow,
  type sinkWorkflow,
} from './floor-workflow';
import { cpuTicks, rssBytes, stealPctSince } from './proc';
import { chartSvg, type Figure, markdownTable, svgToPng } from './report';
import { API_KEY, type BenchStack, ROOT, startBenchStack, WEBHOOK_PARTNER_ID } from './stack';
import {
  completionRate,
  percentile,
  type RampPoint,
  round,
  saturated,
  saturationThroughput,
  summarize,
} from './stats';

// `npm run bench [-- --quick]`: one run, one stack, one dev server. See bench/README.md.

const QUICK = process.argv.includes('--quick');
const envNum = (name: string, dflt: number) => {
  const v = process.env[name];
  return v && Number.isFinite(Number(v)) ? Number(v) : dflt;
};
const settings = {
  mode: QUICK ? 'quick' : 'full',
  stepMs: envNum('BENCH_STEP_MS', QUICK ? 8_000 : 20_000),
  maxSteps: envNum('BENCH_MAX_STEPS', 8),
  openFlows: envNum('BENCH_OPEN_FLOWS', QUICK ? 500 : 10_000),
  tokenMinutes: envNum('BENCH_TOKEN_MINUTES', QUICK ? 1 : 10),
  /**
   * Reconciliation polls of the stack. Full: the production default. Quick: the same schedule
   * ten times shorter, so the open deposits get past their early polls in about a minute.
   */
  pollScheduleMs: QUICK ? DEFAULT_TIMINGS.pollScheduleMs.map((ms) => ms / 10) : undefined,
  /** The sandbox pays a deposit / settles a payout this long after it was created. */
  autoAfterMs: 100,
  ingressConcurrency: 16,
};
const FLOOR_QUEUE = 'bench-floor';
const say = (msg: string) =>
  process.stdout.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const tag = randomBytes(3).toString('hex');
const person = () => ({
  externalId: `ext-${randomBytes(4).toString('hex')}`,
  cpf: generateCpf(),
  email: 'bench@example.com',
  name: 'Ana Souza',
});
let txidSeq = 0;
/** Digits only (the provider's txid), unique in this run. */
const newTxid = () => `${Date.now()}${String(++txidSeq).padStart(7, '0')}${Math.floor(Math.random() * 1e6)}`;

/** One flow offered: its id, whether it was accepted, and the answer's status when it was not. */
interface Launched {
  id: string;
  ok: boolean;
  status?: number;
}

interface StepResult {
  point: RampPoint;
  ids: string[];
  latenciesMs: number[];
  errors: number;
  /** Failed offers by HTTP status ("network" when there was no answer). */
  errorsBy: Record<string, number>;
  /** CPU time the hypervisor took while the step ran (a shared machine's noise, for the record). */
  stealPct: number;
}

/**
 * Offers `rate` flows per second for `durMs` (open loop: one start every 1/rate s whatever the
 * answers), then waits for them to finish; throughput is the rate at which they completed
 * (completionRate: below capacity the offered rate, above it the system's capacity).
 */
async function step(
  rate: number,
  durMs: number,
  launch: () => Promise<Launched>,
  completions: (ids: string[]) => Promise<number[]>,
  drainMs = 90_000,
): Promise<StepResult> {
  const ids: string[] = [];
  const latenciesMs: number[] = [];
  const errorsBy: Record<string, number> = {};
  const failed = (why: string) => {
    errorsBy[why] = (errorsBy[why] ?? 0) + 1;
  };
  const pending: Promise<void>[] = [];
  const cpu0 = cpuTicks();
  const t0 = Date.now();
  const n = Math.max(1, Math.round((rate * durMs) / 1000));
  for (let i = 0; i < n; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - Date.now();
    if (wait > 0) await sleep(wait);
    const started = Date.now();
    pending.push(
      launch().then(
        (r) => {
          ids.push(r.id);
          if (r.ok) latenciesMs.push(Date.now() - started);
          else failed(String(r.status ?? 'unknown'));
        },
        () => failed('network'),
      ),
    );
  }
  const t1 = t0 + durMs;
  if (Date.now() < t1) await sleep(t1 - Date.now());
  await Promise.all(pending);
  const drainUntil = Date.now() + drainMs;
  let times = await completions(ids);
  while (times.length < ids.length && Date.now() < drainUntil) {
    await sleep(500);
    times = await completions(ids);
  }
  const achieved = completionRate(times);
  const errors = Object.values(errorsBy).reduce((a, b) => a + b, 0);
  return {
    point: { offered: round(rate), achieved: round(achieved) },
    ids,
    latenciesMs,
    errors,
    errorsBy,
    stealPct: stealPctSince(cpu0),
  };
}

async function ramp(
  name: string,
  startRate: number,
  launch: () => Promise<Launched>,
  completions: (ids: string[]) => Promise<number[]>,
): Promise<RampPoint[]> {
  const points: RampPoint[] = [];
  let rate = startRate;
  for (let i = 0; i < settings.maxSteps; i++) {
    const r = await step(rate, settings.stepMs, launch, completions);
    points.push(r.point);
    say(
      `${name}: offered ${r.point.offered}/s -> completed ${r.point.achieved}/s (errors ${r.errors}${r.errors ? ` ${JSON.stringify(r.errorsBy)}` : ''}, CPU steal ${r.stealPct}%)`,
    );
    if (saturated(points)) break;
    rate *= 1.5;
  }
  await sleep(3_000);
  return points;
}

let running: BenchStack | undefined;

async function main() {
  const startedAt = Date.now();
  const cpuAtStart = cpuTicks();
  say(
    `mode ${settings.mode}: steps of ${settings.stepMs / 1000} s, ${settings.openFlows} open flows, token window ${settings.tokenMinutes} min`,
  );
  const stack: BenchStack = await startBenchStack({
    LOG_LEVEL: 'warn',
    // The bench is one client offering far more than a real one: the per-key limit would answer 429.
    API_RATE_LIMIT_PER_MINUTE: '0',
    // Open flows must stay open for the whole run.
    SANDBOX_DEPOSIT_EXPIRY_MS: String(3 * 3600_000),
    ...(settings.pollScheduleMs ? { POLL_SCHEDULE_MS: settings.pollScheduleMs.join(',') } : {}),
  });
  running = stack;
  say(`stack up (worker pid ${stack.workerPid})`);
  const config = loadConfig(stack.env);
  const dataConverter = pixflowDataConverter(config.codecKeys);
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, dataConverter });
  const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 4 });
  pool.on('error', () => {}); // Postgres stops with the stack at the end

  Runtime.install({ logger: new DefaultLogger('WARN') });
  const floorDone = new Map<string, number>();
  const nativeConnection = await NativeConnection.connect({ address: stack.temporalAddress });
  const floorWorker = await Worker.create({
    connection: nativeConnection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: FLOOR_QUEUE,
    workflowsPath: require.resolve('./floor-workflow'),
    activities: {
      async noop() {},
      async done(id: string) {
        floorDone.set(id, Date.now());
      },
    },
    dataConverter,
    // The same worker settings as pixflow's worker.
    ...workerTuningOptions(config),
  });
  const floorRun = floorWorker.run();

  const http = async (url: string, body?: unknown, method = body === undefined ? 'GET' : 'POST') => {
    const res = await fetch(url, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const sandboxState = async () =>
    (await http(`${stack.sandbox}/sandbox/state`)).body as {
      counters: { tokenRequests: number };
      deposits: { txid: string; payedAt: string }[];
      withdrawals: { txid: string; payedAt: string; status: string }[];
    };
  // Token requests in the first BENCH_TOKEN_MINUTES of the run (a token lives 60 min, so a run
  // longer than that rightly needs a second one).
  const tokenWindowMs = settings.tokenMinutes * 60_000;
  const tokensInWindow = (async () => {
    await sleep(Math.max(0, startedAt + tokenWindowMs - Date.now()));
    return (await sandboxState()).counters.tokenRequests;
  })();
  const setAuto = (payDepositsAfterMs: number | null, settleWithdrawalsAfterMs: number | null) =>
    http(`${stack.sandbox}/sandbox/auto`, { payDepositsAfterMs, settleWithdrawalsAfterMs });
  await setAuto(settings.autoAfterMs, settings.autoAfterMs);

  /** Inquiries the worker has made so far (the provider calls counted on its /metrics). */
  const inquiriesMade = async () => {
    const res = await fetch(`http://127.0.0.1:${stack.ports.WORKER_HTTP_PORT}/metrics`);
    const text = await res.text();
    let n = 0;
    for (const m of text.matchAll(/^pixflow_provider_calls_total\{[^}]*endpoint="inquiry"[^}]*\} (\S+)$/gm)) {
      n += Number(m[1]);
    }
    return n;
  };
  /** How many of these deposits the flows table shows awaiting payment. */
  const awaitingPayment = async (txids: string[]) =>
    (
      await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM flows WHERE type = 'deposit' AND status = 'awaiting_payment' AND business_id = ANY($1)`,
        [txids],
      )
    ).rows[0]?.n ?? 0;
  const completedFlows = (type: string) => async (ids: string[]) => {
    if (!ids.length) return [];
    const r = await pool.query<{ t: number }>(
      `SELECT (extract(epoch from updated_at) * 1000)::float8 AS t FROM flows
       WHERE type = $1 AND status = 'completed' AND business_id = ANY($2)`,
      [type, ids],
    );
    return r.rows.map((x) => Number(x.t));
  };
  const updatedAt = async (type: string, ids: string[]) => {
    const r = await pool.query<{ id: string; t: number }>(
      `SELECT business_id AS id, (extract(epoch from updated_at) * 1000)::float8 AS t FROM flows
       WHERE type = $1 AND status = 'completed' AND business_id = ANY($2)`,
      [type, ids],
    );
    return new Map(r.rows.map((x) => [x.id, Number(x.t)]));
  };

  const postDeposit = async () => {
    const txid = newTxid();
    const r = await http(`${stack.api}/v1/deposits`, {
      txid,
      amountCentavos: 100 + (txidSeq % 9000),
      client: person(),
    });
    return { id: txid, ok: r.status === 201, status: r.status };
  };
  const postWithdrawal = async () => {
    const id = `bw-${tag}-${++txidSeq}`;
    const r = await http(`${stack.api}/v1/withdrawals`, {
      transactionId: id,
      amountCentavos: 100 + (txidSeq % 9000),
      pixKey: 'bench@example.com',
      pixType: 'EMAIL',
      client: person(),
    });
    return { id, ok: r.status === 202, status: r.status };
  };

  // --- the shape of a deposit, from a real history -------------------------------------
  say('one deposit, to count its activities, signals and updates...');
  const probe = await postDeposit();
  let probeTimes: number[] = [];
  for (let i = 0; i < 60 && probeTimes.length === 0; i++) {
    await sleep(500);
    probeTimes = await completedFlows('deposit')([probe.id]);
  }
  await sleep(1_000);
  const history = await client.workflow.getHandle(workflowIds.deposit(probe.id)).fetchHistory();
  const events = history.events ?? [];
  // Its activities in order, each local (a local activity leaves a marker instead of scheduled,
  // started and completed events) or remote, with the signals received before each.
  const shape: FloorShape = { activities: [], signalsBefore: [], signals: 0 };
  const activityNames: string[] = [];
  for (const e of events) {
    if (e.workflowExecutionSignaledEventAttributes) shape.signals += 1;
    const scheduled = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (scheduled) activityNames.push(scheduled);
    const kind: ActivityKind | undefined = scheduled
      ? 'remote'
      : e.markerRecordedEventAttributes?.markerName === 'core_local_activity'
        ? 'local'
        : undefined;
    if (kind) {
      shape.activities.push(kind);
      shape.signalsBefore.push(shape.signals);
    }
  }
  const depositShape = {
    activities: activityNames.length,
    activityNames,
    localActivities: shape.activities.filter((k) => k === 'local').length,
    signals: shape.signals,
    updates: events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length,
    historyEvents: events.length,
  };
  say(`a deposit: ${JSON.stringify(depositShape)}; the floor: ${JSON.stringify(shape)}`);

  // --- 1. floor -------------------------------------------------------------------------
  let floorSeq = 0;
  /** Update-with-start of a floor workflow, then its signals from the client (none: it ends alone). */
  const launchFloor = async (signals = shape.signals) => {
    const id = `floor-${tag}-${++floorSeq}`;
    await client.workflow.executeUpdateWithStart(floorUpdate, {
      startWorkflowOperation: new WithStartWorkflowOperation<typeof floorWorkflow>('floorWorkflow', {
        workflowId: id,
        taskQueue: FLOOR_QUEUE,
        args: [{ ...shape, signals, id }],
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    });
    const handle = client.workflow.getHandle(id);
    for (let s = 0; s < signals; s++) await handle.signal(floorSignal, `n${s}`);
    return { id, ok: true };
  };
  const floorCompletions = async (ids: string[]) =>
    ids.map((id) => floorDone.get(id)).filter((t): t is number => t !== undefined);
  say('1. floor ramp...');
  const floorPoints = await ramp('floor', 4, launchFloor, floorCompletions);
  const floorSat = saturationThroughput(floorPoints);

  // --- 2. deposits end to end -----------------------------------------------------------
  say('2. deposits ramp...');
  const depositPoints = await ramp('deposits', 2, postDeposit, completedFlows('deposit'));
  const depositSat = saturationThroughput(depositPoints);

  // --- 3. latency at half of saturation -------------------------------------------------
  const latencyStep = async (
    rate: number,
    launch: () => Promise<Launched>,
    type: 'deposit' | 'withdrawal',
  ) => {
    const r = await step(rate, settings.stepMs * 1.5, launch, completedFlows(type), 60_000);
    const state = await sandboxState();
    const paid = new Map(
      (type === 'deposit' ? state.deposits : state.withdrawals)
        .filter((d) => d.payedAt)
        .map((d) => [d.txid, Date.parse(d.payedAt)]),
    );
    const done = await updatedAt(type, r.ids);
    const toCompleted = r.ids
      .filter((id) => paid.has(id) && done.has(id))
      .map((id) => (done.get(id) as number) - (paid.get(id) as number));
    return {
      offered: round(rate),
      achieved: r.point.achieved,
      post: summarize(r.latenciesMs),
      paymentToCompleted: summarize(toCompleted),
      errors: r.errors,
      errorsBy: r.errorsBy,
      stealPct: r.stealPct,
      incomplete: r.ids.length - done.size,
    };
  };
  say(`3. deposit latency at half of saturation (${round(depositSat / 2)}/s)...`);
  const depositLatency = await latencyStep(Math.max(0.5, depositSat / 2), postDeposit, 'deposit');
  say(`   ${JSON.stringify(depositLatency)}`);
  // What Temporal alone takes for the same answer at the same rate: update-with-start of the
  // floor workflow, answered after its first (local, no-op) activity, with no HTTP, no API and
  // no provider. The POST figure's distance from it is pixflow's own share.
  say(`   bare update-with-start at the same rate...`);
  const bareUpdate = await step(
    depositLatency.offered,
    settings.stepMs * 1.5,
    () => launchFloor(0),
    floorCompletions,
    60_000,
  );
  const bareUpdateLatency = summarize(bareUpdate.latenciesMs);
  say(`   ${JSON.stringify(bareUpdateLatency)}`);

  // --- 7. withdrawals end to end --------------------------------------------------------
  say('7. withdrawals ramp...');
  const withdrawalPoints = await ramp('withdrawals', 2, postWithdrawal, completedFlows('withdrawal'));
  const withdrawalSat = saturationThroughput(withdrawalPoints);
  say(`   withdrawal latency at half of saturation (${round(withdrawalSat / 2)}/s)...`);
  const withdrawalLatency = await latencyStep(Math.max(0.5, withdrawalSat / 2), postWithdrawal, 'withdrawal');
  say(`   ${JSON.stringify(withdrawalLatency)}`);

  // --- 6. open flows --------------------------------------------------------------------
  const loadRate = Math.max(1, depositSat * 1.25);
  say(`6. deposit throughput with none open (offered ${round(loadRate)}/s)...`);
  // The two steps of the goal's ratio run three times longer than a ramp's: each is one number
  // at saturation, and a single straggler moves a short step's completion rate.
  const loadStepMs = settings.stepMs * 3;
  const baseline = await step(loadRate, loadStepMs, postDeposit, completedFlows('deposit'));
  say(`   ${baseline.point.achieved}/s`);
  const rssBefore = rssBytes(stack.workerPid);
  say(
    `   opening ${settings.openFlows} deposits awaiting payment (Temporal client, same workflow and input)...`,
  );
  await setAuto(null, settings.autoAfterMs);
  // Their `requested` notifications would spend the ingress figure's unique messages.
  await http(`${stack.sandbox}/sandbox/notifications`, undefined, 'DELETE');
  const openTxids: string[] = [];
  const openStarted = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < settings.openFlows) {
        next++;
        const txid = newTxid();
        const c = person();
        const input: DepositInput = {
          txid,
          merchant: config.PROVIDER_MERCHANT,
          client: c,
          amountCentavos: 500,
          ...(settings.pollScheduleMs ? { timings: { pollScheduleMs: settings.pollScheduleMs } } : {}),
        };
        await client.workflow.start<typeof depositWorkflow>('depositWorkflow', {
          workflowId: workflowIds.deposit(txid),
          taskQueue: config.TEMPORAL_TASK_QUEUE,
          args: [input],
          typedSearchAttributes: [
            { key: FlowTypeKey, value: 'deposit' },
            { key: FlowStatusKey, value: 'creating' },
            { key: CpfMaskedKey, value: '***' },
            { key: AmountKey, value: 500 },
            { key: MerchantKey, value: input.merchant },
          ],
        });
        openTxids.push(txid);
      }
    }),
  );
  let awaiting = 0;
  let rssPeak = 0;
  const openDeadline = Date.now() + 90 * 60_000;
  while (Date.now() < openDeadline) {
    rssPeak = Math.max(rssPeak, rssBytes(stack.workerPid));
    awaiting = await awaitingPayment(openTxids);
    if (awaiting >= openTxids.length) break;
    await sleep(2_000);
  }
  const openedAt = Date.now();
  const openSeconds = (openedAt - openStarted) / 1000;
  say(`   ${awaiting} awaiting payment after ${round(openSeconds, 0)} s`);
  await http(`${stack.sandbox}/sandbox/notifications`, {
    url: stack.ingress,
    partnerId: WEBHOOK_PARTNER_ID,
  });
  await setAuto(settings.autoAfterMs, settings.autoAfterMs);
  const rssOpen = rssBytes(stack.workerPid);
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      rssPeak = Math.max(rssPeak, rssBytes(stack.workerPid));
      await sleep(1_000);
    }
  })();
  // Right after opening, the youngest deposits are still in their early polls (30 s, 2.5 min
  // and 12.5 min after their QR): a cost of three inquiries per deposit created, shown for the record.
  const justOpened = await step(loadRate, settings.stepMs, postDeposit, completedFlows('deposit'));
  say(`   right after opening: ${justOpened.point.achieved}/s`);
  // Then, open and waiting: once the youngest is past its early polls, the next look of any of
  // them is an hour away (or at its QR's expiry). This is the load the goal is about.
  // A poll's timer starts when the one before it ends, so a backlog of polls pushes the later
  // ones back: past the schedule, wait until the worker has made no inquiry for 15 s (bounded).
  const schedule = settings.pollScheduleMs ?? DEFAULT_TIMINGS.pollScheduleMs;
  const earlyPollsMs = schedule.slice(0, -1).reduce((a, b) => a + b, 0);
  const scheduledEnd = openedAt + earlyPollsMs + 20_000;
  say(
    `   waiting at least ${round((scheduledEnd - Date.now()) / 1000, 0)} s until the youngest is past its early polls...`,
  );
  while (Date.now() < scheduledEnd) await sleep(1_000);
  const quietMs = 15_000;
  const settleDeadline = Date.now() + earlyPollsMs;
  let lastInquiries = await inquiriesMade();
  let quietSince = Date.now();
  while (Date.now() - quietSince < quietMs && Date.now() < settleDeadline) {
    await sleep(1_000);
    const now = await inquiriesMade();
    if (now !== lastInquiries) quietSince = Date.now();
    lastInquiries = now;
  }
  const settleUntil = Date.now();
  const pollsQuiet = settleUntil - quietSince >= quietMs;
  const pollsLateSeconds = round((settleUntil - scheduledEnd) / 1000, 0);
  say(`   polls ${pollsQuiet ? 'quiet' : 'still running'} ${pollsLateSeconds} s past the schedule`);
  const atLoad = await step(loadRate, loadStepMs, postDeposit, completedFlows('deposit'));
  say(`   with ${awaiting} open: ${atLoad.point.achieved}/s (none open: ${baseline.point.achieved}/s)`);
  const stillOpen = await awaitingPayment(openTxids);

  // --- 4. ingress alone, next to a bare signal loop -------------------------------------
  say(
    `4. ingress: ${openTxids.length} notifications to the open deposits, ${settings.ingressConcurrency} at a time...`,
  );
  const closedLoop = async (items: string[], send: (item: string) => Promise<boolean>) => {
    const lat: number[] = [];
    let i = 0;
    let errors = 0;
    const t0 = Date.now();
    await Promise.all(
      Array.from({ length: settings.ingressConcurrency }, async () => {
        while (i < items.length) {
          const item = items[i++] as string;
          const s = Date.now();
          if (await send(item).catch(() => false)) lat.push(Date.now() - s);
          else errors++;
        }
      }),
    );
    return { t0, seconds: (Date.now() - t0) / 1000, lat, errors };
  };
  const ingress = await closedLoop(openTxids, async (txid) => {
    const res = await fetch(stack.ingress, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        partner_id: WEBHOOK_PARTNER_ID,
        type: 'deposit',
        action: 'requested',
        id: txid,
      }),
      signal: AbortSignal.timeout(30_000),
    });
    await res.text();
    return res.status === 200;
  });
  // Signalled, not only stored: wait for every inbox row to be delivered.
  let delivered = { n: 0, last: 0 };
  for (let i = 0; i < 240; i++) {
    const r = await pool.query<{ n: number; last: number }>(
      `SELECT count(*)::int AS n, (extract(epoch from max(delivered_at)) * 1000)::float8 AS last
       FROM webhook_inbox WHERE delivered_at IS NOT NULL AND received_at >= to_timestamp($1 / 1000.0)`,
      [ingress.t0],
    );
    delivered = { n: r.rows[0]?.n ?? 0, last: Number(r.rows[0]?.last ?? 0) };
    if (delivered.n >= ingress.lat.length) break;
    await sleep(500);
  }
  const ingressAccepted = ingress.lat.length / ingress.seconds;
  const ingressSignalled = delivered.n / Math.max(ingress.seconds, (delivered.last - ingress.t0) / 1000);
  say(
    `   accepted ${round(ingressAccepted)}/s, signalled ${round(ingressSignalled)}/s, p99 ${round(percentile(ingress.lat, 99))} ms`,
  );

  say('   bare signal loop: the same number of signals to bare workflows...');
  const sinks = Array.from({ length: 100 }, (_, i) => `sink-${tag}-${i}`);
  await Promise.all(
    sinks.map((id) =>
      client.workflow.start<typeof sinkWorkflow>('sinkWorkflow', { workflowId: id, taskQueue: FLOOR_QUEUE }),
    ),
  );
  let k = 0;
  const loop = await closedLoop(
    openTxids.map(() => sinks[k++ % sinks.length] as string),
    async (id) => {
      await client.workflow.getHandle(id).signal(floorSignal, 'x');
      return true;
    },
  );
  const loopRate = loop.lat.length / loop.seconds;
  say(`   bare signals ${round(loopRate)}/s, p99 ${round(percentile(loop.lat, 99))} ms`);
  await Promise.all(
    sinks.map((id) =>
      client.workflow
        .getHandle(id)
        .terminate('bench over')
        .catch(() => {}),
    ),
  );

  // --- 5. tokens ------------------------------------------------------------------------
  if (Date.now() - startedAt < tokenWindowMs) {
    say(`5. keeping a trickle of deposits going until the run has lasted ${settings.tokenMinutes} min...`);
    while (Date.now() - startedAt < tokenWindowMs) {
      await postDeposit().catch(() => undefined);
      await sleep(1_000);
    }
  }
  sampling = false;
  await sampler;
  const finalState = await sandboxState();
  const tokenRequests = await tokensInWindow;
  const tokenRequestsRun = finalState.counters.tokenRequests;
  const runMinutes = (Date.now() - startedAt) / 60_000;

  // --- results --------------------------------------------------------------------------
  const ratio = (a: number, b: number) => (b > 0 ? round(a / b) : Number.NaN);
  const MiB = 1024 * 1024;
  const depRatio = ratio(depositSat, floorSat);
  const wdRatio = ratio(withdrawalSat, floorSat);
  const ingRatio = ratio(ingressSignalled, loopRate);
  const loadRatio = ratio(atLoad.point.achieved, baseline.point.achieved);
  const figures: Figure[] = [
    { name: 'floor: bare deposit-shaped workflows', value: floorSat, unit: '/s' },
    {
      name: 'deposits end to end',
      value: depositSat,
      unit: '/s',
      ratio: `${depRatio} of the floor`,
      goal: '≥ 0.5 of the floor',
      pass: depRatio >= 0.5,
    },
    {
      name: `POST /v1/deposits p50 (at ${depositLatency.offered}/s)`,
      value: depositLatency.post.p50,
      unit: 'ms',
    },
    {
      name: 'POST /v1/deposits p99',
      value: depositLatency.post.p99,
      unit: 'ms',
      ratio: `${round(depositLatency.post.p99 - bareUpdateLatency.p99)} ms above bare update-with-start`,
      goal: '< 150 ms',
      pass: depositLatency.post.p99 < 150,
    },
    {
      name: `bare Temporal update-with-start p50 / p99 (at ${depositLatency.offered}/s)`,
      value: bareUpdateLatency.p99,
      unit: 'ms',
      ratio: `p50 ${bareUpdateLatency.p50} ms`,
    },
    { name: 'deposit payment → completed p50', value: depositLatency.paymentToCompleted.p50, unit: 'ms' },
    {
      name: 'deposit payment → completed p99',
      value: depositLatency.paymentToCompleted.p99,
      unit: 'ms',
      goal: '< 500 ms',
      pass: depositLatency.paymentToCompleted.p99 < 500,
    },
    {
      name: 'ingress: notifications stored and signalled',
      value: ingressSignalled,
      unit: '/s',
      ratio: `${ingRatio} of the signal loop`,
      goal: '≥ 0.5 of the signal loop',
      pass: ingRatio >= 0.5,
    },
    { name: 'ingress: notifications accepted (answered 200)', value: ingressAccepted, unit: '/s' },
    { name: 'ingress p99', value: round(percentile(ingress.lat, 99)), unit: 'ms' },
    { name: 'bare Temporal signal loop', value: loopRate, unit: '/s' },
    { name: 'bare signal loop p99', value: round(percentile(loop.lat, 99)), unit: 'ms' },
    {
      name: `provider token requests per worker (first ${settings.tokenMinutes} min)`,
      value: tokenRequests,
      unit: '',
      goal: '1',
      pass: tokenRequests === 1,
    },
    {
      name: `provider token requests per worker (whole run, ${round(runMinutes, 1)} min)`,
      value: tokenRequestsRun,
      unit: '',
      ratio: 'a token lives 60 min',
    },
    {
      name: `worker RSS with ${awaiting} deposits open (peak)`,
      value: round(rssPeak / MiB),
      unit: 'MiB',
      ratio: `${round(rssOpen / MiB)} MiB after opening, ${round(rssBefore / MiB)} MiB before`,
      goal: '< 1024 MiB',
      pass: rssPeak < 1024 * MiB,
    },
    {
      name: `new deposits with ${awaiting} open, right after opening (early polls)`,
      value: justOpened.point.achieved,
      unit: '/s',
      ratio: `${ratio(justOpened.point.achieved, baseline.point.achieved)} of ${baseline.point.achieved}/s with none open`,
    },
    {
      name: `new deposits with ${awaiting} open and waiting (${stillOpen} still awaiting payment; early polls over ${pollsLateSeconds} s past their schedule${pollsQuiet ? '' : ', not quiet yet'})`,
      value: atLoad.point.achieved,
      unit: '/s',
      ratio: `${loadRatio} of ${baseline.point.achieved}/s with none open (CPU steal ${atLoad.stealPct}% in this step, ${baseline.stealPct}% in that one)`,
      goal: '≥ 0.9',
      pass: loadRatio >= 0.9 && stillOpen === awaiting,
    },
    {
      name: 'withdrawals end to end (with receipts)',
      value: withdrawalSat,
      unit: '/s',
      ratio: `${wdRatio} of the floor`,
      goal: '≥ 0.5 of the floor',
      pass: wdRatio >= 0.5,
    },
    {
      name: `POST /v1/withdrawals p50 (at ${withdrawalLatency.offered}/s)`,
      value: withdrawalLatency.post.p50,
      unit: 'ms',
    },
    {
      name: 'POST /v1/withdrawals p99',
      value: withdrawalLatency.post.p99,
      unit: 'ms',
      goal: '< 150 ms',
      pass: withdrawalLatency.post.p99 < 150,
    },
    {
      name: 'withdrawal settled → completed p50',
      value: withdrawalLatency.paymentToCompleted.p50,
      unit: 'ms',
    },
    {
      name: 'withdrawal settled → completed p99 (receipt stored)',
      value: withdrawalLatency.paymentToCompleted.p99,
      unit: 'ms',
      goal: '< 500 ms',
      pass: withdrawalLatency.paymentToCompleted.p99 < 500,
    },
  ];

  const date = new Date()
    .toISOString()
    .replace(/[:]/g, '-')
    .replace(/\.\d+Z$/, 'Z');
  const outDir = path.join(ROOT, 'bench', 'results');
  mkdirSync(outDir, { recursive: true });
  const machine = {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGiB: round(os.totalmem() / 1024 ** 3, 1),
    loadAverageAtEnd: os.loadavg().map((x) => round(x)),
    stealPctOverRun: stealPctSince(cpuAtStart),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
  const json = {
    date: new Date().toISOString(),
    mode: settings.mode,
    settings,
    machine,
    runMinutes: round(runMinutes, 1),
    depositShape,
    floor: { shape, points: floorPoints, saturation: floorSat, bareUpdateWithStart: bareUpdateLatency },
    deposits: { points: depositPoints, saturation: depositSat, latency: depositLatency },
    withdrawals: { points: withdrawalPoints, saturation: withdrawalSat, latency: withdrawalLatency },
    ingress: {
      notifications: openTxids.length,
      concurrency: settings.ingressConcurrency,
      acceptedPerSecond: round(ingressAccepted),
      signalledPerSecond: round(ingressSignalled),
      latency: summarize(ingress.lat),
      errors: ingress.errors,
      signalLoop: { perSecond: round(loopRate), latency: summarize(loop.lat) },
    },
    tokens: {
      requests: tokenRequests,
      requestsWholeRun: tokenRequestsRun,
      workerProcesses: 1,
      minutes: round(runMinutes, 1),
      window: settings.tokenMinutes,
    },
    openFlows: {
      asked: settings.openFlows,
      awaitingPayment: awaiting,
      secondsToOpen: round(openSeconds),
      rssMiB: {
        before: round(rssBefore / MiB),
        afterOpening: round(rssOpen / MiB),
        peak: round(rssPeak / MiB),
      },
      throughputNoneOpen: { ...baseline.point, errors: baseline.errorsBy, stealPct: baseline.stealPct },
      throughputJustOpened: {
        ...justOpened.point,
        errors: justOpened.errorsBy,
        stealPct: justOpened.stealPct,
      },
      settledSeconds: round((settleUntil - openedAt) / 1000),
      /** How long past the poll schedule the early polls went on (a backlog delays them). */
      pollsLateSeconds,
      pollsQuiet,
      stillAwaiting: stillOpen,
      throughputOpen: { ...atLoad.point, errors: atLoad.errorsBy, stealPct: atLoad.stealPct },
      pollScheduleMs: schedule,
    },
    figures,
    allPass: figures.every((f) => f.pass !== false),
  };
  const base = path.join(outDir, date);
  writeFileSync(`${base}.json`, `${JSON.stringify(json, null, 2)}\n`);
  const md = [
    `# pixflow bench — ${json.date}`,
    '',
    `Mode **${settings.mode}** (steps of ${settings.stepMs / 1000} s, ${awaiting} open flows, run of ${round(runMinutes, 1)} min); ${machine.cpus} CPUs (${machine.cpuModel}), load average at the end ${machine.loadAverageAtEnd.join(' / ')}, CPU time taken by the hypervisor (steal) over the run ${machine.stealPctOverRun}%.`,
    `A deposit's history: ${depositShape.localActivities} local activities, ${depositShape.activities} activities (${activityNames.join(', ')}), ${depositShape.signals} signals, ${depositShape.updates} update, ${depositShape.historyEvents} events.`,
    '',
    markdownTable(figures),
    '',
    `![throughput against offered load](${path.basename(base)}.png)`,
    '',
  ].join('\n');
  writeFileSync(`${base}.md`, md);
  const svg = chartSvg(`pixflow bench (${settings.mode}) — throughput against offered load`, [
    { name: 'floor', color: '#888888', points: floorPoints },
    { name: 'deposits', color: '#1f77b4', points: depositPoints },
    { name: 'withdrawals', color: '#d62728', points: withdrawalPoints },
  ]);
  writeFileSync(`${base}.png`, svgToPng(svg));
  process.stdout.write(`\n${md}\n`);
  say(`wrote ${base}.json, .md and .png`);

  floorWorker.shutdown();
  await floorRun;
  await nativeConnection.close();
  await connection.close();
  await pool.end();
  await stack.stop();
}

const stopStack = async () => {
  await running?.stop().catch(() => undefined);
};
process.on('SIGINT', () => void stopStack().then(() => process.exit(130)));
process.on('SIGTERM', () => void stopStack().then(() => process.exit(143)));

main().then(
  () => process.exit(0),
  async (err) => {
    process.stderr.write(
      `bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    if (running) process.stderr.write(`last stack output:\n${running.output().slice(-3000)}\n`);
    await stopStack();
    process.exit(1);
  },
);
