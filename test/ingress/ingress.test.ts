import { randomBytes, randomUUID } from 'node:crypto';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createApiMetrics } from '../../common/metrics';
import { cpfHash } from '../../common/pii';
import { biometricsWorkflowId } from '../../contracts/biometrics';
import { depositWorkflowId } from '../../contracts/deposit';
import { onboardingWorkflowId } from '../../contracts/onboarding';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import {
  type LivenessRequestFlow,
  recordLivenessAnswer,
  recordLivenessRequest,
} from '../../db/liveness-requests';
import { migrate } from '../../db/migrate';
import { createPool, type Pool } from '../../db/pool';
import { UNMATCHED_NOTE } from '../../ingress/deliver';
import { startInboxRelay } from '../../ingress/inbox-relay';
import { finishSignal, type Received, receivedQuery } from '../fixtures/ingress-workflows';
import { freePort } from '../helpers/ports';
import { freshDatabase } from '../helpers/postgres';
import { expectSdkLog } from '../helpers/sdk-log';
import {
  INGRESS_PII_KEY,
  PARTNER,
  post,
  type RunningIngress,
  SECRET,
  silentLog,
  startIngress,
  uniqueCpf,
  uniqueId,
  waitUntil,
} from './harness';

// The real router and relay over a real Postgres and a real Temporal dev server; the targets
// are small recorder workflows with the real signal names. A database of this file's own, so
// rows and relays of other files never meet ours.

const COALESCE_MS = 1_000;
const fast = { signalTimeoutMs: 2_000, retryBaseMs: 100, retryMaxMs: 500, coalesceMs: COALESCE_MS };

let pool: Pool;
let connection: Connection;
let temporal: Client;
let nativeConnection: NativeConnection;
let worker: Worker;
let running: Promise<void>;
let taskQueue: string;
let ingress: RunningIngress;
let noActivityPolling: ReturnType<typeof expectSdkLog>;

beforeAll(async () => {
  const url = await freshDatabase();
  await migrate(url);
  pool = createPool(url, 5);
  const address = inject('temporalAddress');
  connection = await Connection.connect({ address });
  temporal = new Client({ connection });
  nativeConnection = await NativeConnection.connect({ address });
  taskQueue = `ingress-${randomBytes(4).toString('hex')}`;
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.resolve(__dirname, '../fixtures/ingress-workflows.ts'),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} },
  });
  // The fixture workflows call no activity: the worker says it will not poll for any.
  noActivityPolling = expectSdkLog(
    (e) =>
      e.message === 'No activities registered, not polling for activity tasks' &&
      e.meta.taskQueue === taskQueue,
  );
  worker = await Worker.create({ connection: nativeConnection, taskQueue, workflowBundle: { code } });
  running = worker.run();
  ingress = await startIngress(pool, temporal, { delivery: fast });
});

afterAll(async () => {
  await ingress?.close();
  worker?.shutdown();
  await running;
  expect(noActivityPolling()).toHaveLength(1);
  await nativeConnection?.close();
  await connection?.close();
  await pool?.end();
});

const startRecorder = (workflowId: string) =>
  temporal.workflow.start('recorderWorkflow', { workflowId, taskQueue, args: [] });
const received = (workflowId: string) =>
  temporal.workflow.getHandle(workflowId).query(receivedQuery) as Promise<Received[]>;

interface Row {
  id: number;
  dedupe_key: string;
  point: string;
  raw_body: string;
  headers: Record<string, string>;
  received_at: Date;
  delivered_at: Date | null;
  gave_up_at: Date | null;
  attempts: number;
  last_error: string | null;
  signal_name: string;
  signal_payload: Record<string, unknown>;
}
const rowsOf = async (workflowId: string) =>
  (await pool.query<Row>('SELECT * FROM webhook_inbox WHERE workflow_id = $1 ORDER BY id', [workflowId]))
    .rows;
const totalRows = async () =>
  (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_inbox')).rows[0]?.n;

const depositMsg = (id: string, action = 'updated') => ({ id, type: 'deposit', action, partner_id: PARTNER });
const withdrawMsg = (id: string) => ({ id, type: 'withdraw', action: 'updated', partner_id: PARTNER });
const livenessCb = (document: string, status = 'completed') => ({
  transaction_id: `tx-${document}`,
  correlation_id: `corr-${document}`,
  document,
  status_verification: status,
  status_onboarding: status === 'completed' ? 'approved' : 'in_progress',
  action_type: 'onboarding',
  event: 'onboarding',
  datetime: '2025-01-02T03:04:05.000Z',
  partner_id: PARTNER,
});

/**
 * What the activities record when a flow asks for a liveness link (db/liveness-requests.ts): the
 * request `livenessCb(document)` names, so the ingress signals it.
 */
async function requested(document: string, flow: LivenessRequestFlow = 'onboarding') {
  const hash = cpfHash(document, INGRESS_PII_KEY);
  const workflowId = flow === 'onboarding' ? onboardingWorkflowId(hash) : biometricsWorkflowId(hash);
  const correlationId = `corr-${document}`;
  await recordLivenessRequest(pool, {
    correlationId,
    workflowId,
    flow,
    cpfHash: hash,
    requestedAt: new Date(),
  });
  await recordLivenessAnswer(pool, {
    correlationId,
    transactionId: `tx-${document}`,
    answeredAt: new Date(),
  });
  return workflowId;
}

/** Waits until the workflow has exactly one signal and the row says delivered; then checks it stays one. */
async function expectDeliveredOnce(workflowId: string) {
  const rows = await waitUntil(
    () => rowsOf(workflowId),
    (r) => r.length === 1 && r[0]?.delivered_at !== null,
  );
  const got = await waitUntil(
    () => received(workflowId),
    (r) => r.length >= 1,
  );
  await new Promise((r) => setTimeout(r, 300));
  expect(await received(workflowId)).toHaveLength(1);
  return { row: rows[0] as Row, signal: got[0] as Received };
}

describe('webhook ingress: good notifications', () => {
  it.each([
    ['deposit URL', 'deposit'],
    ['one URL for all points', ''],
  ])(
    'a deposit notification on the %s is stored with its raw body and signalled once',
    async (_n, suffix) => {
      const txid = uniqueId();
      const wf = depositWorkflowId(txid);
      await startRecorder(wf);
      const raw = `{"id":"${txid}",  "type":"deposit","action":"updated","partner_id":"${PARTNER}"}`;
      const r = await post(suffix ? `${ingress.base}/${suffix}` : ingress.base, raw, {
        'user-agent': 'provider/1.0',
        'x-request-id': 'req-1',
        authorization: 'Bearer must-not-be-stored',
      });
      expect(r.status).toBe(200);
      const { row, signal } = await expectDeliveredOnce(wf);
      expect(row.raw_body).toBe(raw);
      expect(row.point).toBe('deposit');
      expect(row.headers).toEqual({
        'content-type': 'application/json',
        'user-agent': 'provider/1.0',
        'x-request-id': 'req-1',
      });
      expect(row.last_error).toBeNull();
      expect(signal.signal).toBe('providerNotification');
      expect(signal.payload).toMatchObject({ type: 'deposit', action: 'updated', id: txid });
      expect((signal.payload as { receivedAt: string }).receivedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    },
  );

  it.each([
    ['deposit', depositWorkflowId],
    ['withdraw', withdrawalWorkflowId],
  ] as const)(
    "a %s's `requested` notification is kept in the inbox and not signalled: it announces the flow's own request",
    async (type, workflowIdOf) => {
      const id = uniqueId();
      const wf = workflowIdOf(id);
      await startRecorder(wf);
      const body = { id, type, action: 'requested', partner_id: PARTNER };
      expect((await post(`${ingress.base}/${type}`, body)).status).toBe(200);
      // Stored as kept by the request's one statement: delivered when the 200 is sent.
      const [row, ...others] = await rowsOf(wf);
      expect(others).toEqual([]);
      expect(row?.delivered_at).not.toBeNull();
      expect(row?.raw_body).toBe(JSON.stringify(body));
      expect(row?.last_error).toMatch(/not signalled/);
      // The `updated` one after it is signalled, and is the only signal the flow gets.
      expect((await post(`${ingress.base}/${type}`, { ...body, action: 'updated' })).status).toBe(200);
      await waitUntil(
        () => rowsOf(wf),
        (r) => r.length === 2 && r.every((x) => x.delivered_at !== null),
      );
      const got = await waitUntil(
        () => received(wf),
        (r) => r.length >= 1,
      );
      await new Promise((r) => setTimeout(r, 300));
      expect(await received(wf)).toHaveLength(1);
      expect(got[0]?.payload).toMatchObject({ action: 'updated', id });
    },
  );

  it('a withdraw notification reaches withdrawal-<id>', async () => {
    const id = uniqueId();
    const wf = withdrawalWorkflowId(id);
    await startRecorder(wf);
    expect((await post(`${ingress.base}/withdraw`, withdrawMsg(id))).status).toBe(200);
    const { signal } = await expectDeliveredOnce(wf);
    expect(signal.payload).toMatchObject({ type: 'withdraw', action: 'updated', id });
  });

  it.each([
    ['liveness URL', 'liveness'],
    ['one URL for all points', ''],
  ])('a liveness callback on the %s reaches onboarding-<hash of document>', async (_n, suffix) => {
    const cpf = uniqueCpf();
    const wf = await requested(cpf);
    await startRecorder(wf);
    const r = await post(suffix ? `${ingress.base}/${suffix}` : ingress.base, livenessCb(cpf));
    expect(r.status).toBe(200);
    const { row, signal } = await expectDeliveredOnce(wf);
    expect(row.last_error).toBeNull();
    expect(signal.signal).toBe('livenessProgress');
    expect(signal.payload).toEqual({
      statusVerification: 'completed',
      transactionId: `tx-${cpf}`,
      correlationId: `corr-${cpf}`,
      at: '2025-01-02T03:04:05.000Z',
    });
  });

  it('a liveness callback whose fields are camelCase (its payload is not in the document) is read the same', async () => {
    const cpf = uniqueCpf();
    const wf = await requested(cpf);
    await startRecorder(wf);
    const snake = livenessCb(cpf);
    const camel = Object.fromEntries(
      Object.entries(snake).map(([k, v]) => [k.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()), v]),
    );
    expect(camel).toHaveProperty('statusVerification', 'completed');
    expect((await post(ingress.base, camel)).status).toBe(200);
    const { signal } = await expectDeliveredOnce(wf);
    expect(signal.payload).toMatchObject({ statusVerification: 'completed', transactionId: `tx-${cpf}` });
  });

  it("a biometric identification's callback reaches biometrics-<hash of document>, not the onboarding", async () => {
    const cpf = uniqueCpf();
    const wf = await requested(cpf, 'biometrics');
    await startRecorder(wf);
    const cb = {
      ...livenessCb(cpf),
      status_onboarding: 'biometric_approved',
      action_type: 'biometric_identification',
    };
    expect((await post(`${ingress.base}/liveness`, cb)).status).toBe(200);
    const { signal } = await expectDeliveredOnce(wf);
    expect(signal.signal).toBe('biometricProgress');
    expect(signal.payload).toEqual({
      statusVerification: 'completed',
      statusOnboarding: 'biometric_approved',
      actionType: 'biometric_identification',
      transactionId: `tx-${cpf}`,
      correlationId: `corr-${cpf}`,
      at: '2025-01-02T03:04:05.000Z',
    });
    expect(await rowsOf(onboardingWorkflowId(cpfHash(cpf, INGRESS_PII_KEY)))).toEqual([]);
  });

  it('liveness callbacks with different statuses are distinct notifications', async () => {
    const cpf = uniqueCpf();
    const wf = await requested(cpf);
    await startRecorder(wf);
    expect((await post(`${ingress.base}/liveness`, livenessCb(cpf, 'processing'))).status).toBe(200);
    expect((await post(`${ingress.base}/liveness`, livenessCb(cpf, 'completed'))).status).toBe(200);
    const got = await waitUntil(
      () => received(wf),
      (r) => r.length >= 2,
    );
    expect(got.map((g) => (g.payload as { statusVerification: string }).statusVerification).sort()).toEqual([
      'completed',
      'processing',
    ]);
    expect(await rowsOf(wf)).toHaveLength(2);
  });
});

describe('webhook ingress: a status pixflow cannot read', () => {
  it('is kept as progress that decides nothing, counted, logged and alerted on its flow', async () => {
    const metrics = createApiMetrics();
    const own = await startIngress(pool, temporal, { delivery: fast, metrics });
    try {
      const cpf = uniqueCpf();
      const wf = await requested(cpf);
      await pool.query(
        `INSERT INTO flows (workflow_id, type, business_id, status, cpf_hash, cpf_masked)
         VALUES ($1, 'onboarding', $1, 'awaiting_liveness', $2, '***.***.***-**')`,
        [wf, cpfHash(cpf, INGRESS_PII_KEY)],
      );
      await startRecorder(wf);
      expect((await post(`${own.base}/liveness`, livenessCb(cpf, 'Aprovado_Talvez'))).status).toBe(200);
      const got = await waitUntil(
        () => received(wf),
        (r) => r.length >= 1,
      );
      expect(got[0]?.payload).toMatchObject({ statusVerification: 'processing' });
      const counted = await metrics.registry.getSingleMetricAsString('pixflow_provider_unclassified_total');
      expect(counted).toContain('pixflow_provider_unclassified_total{op="liveness_callback"} 1');
      const alerts = await waitUntil(
        async () =>
          (
            await pool.query(
              `SELECT facts FROM alerts WHERE rule = 'provider_unclassified' AND flow_id = $1`,
              [wf],
            )
          ).rows,
        (rows) => rows.length === 1,
      );
      expect(alerts[0]).toEqual({ facts: { op: 'liveness_callback', field: 'status' } });
    } finally {
      await own.close();
    }
  });
});

describe('webhook ingress: a liveness callback moves a flow only when it names a request pixflow made', () => {
  // Long enough for a request's record to land in the race below; short enough to wait out.
  const WAIT_MS = 3_000;
  const strictDelivery = { ...fast, requestWaitMs: WAIT_MS };
  const metrics = createApiMetrics();
  let strict: RunningIngress;
  let relay: ReturnType<typeof startInboxRelay>;

  beforeAll(async () => {
    strict = await startIngress(pool, temporal, { delivery: strictDelivery, metrics });
    relay = startInboxRelay({
      pool,
      temporal,
      log: silentLog,
      intervalMs: 100,
      delivery: strictDelivery,
      metrics,
    });
  });
  afterAll(async () => {
    await relay?.stop();
    await strict?.close();
  });

  const unmatchedCount = async (flow: string) =>
    (await metrics.registry.getSingleMetric('pixflow_ingress_liveness_unmatched_total')?.get())?.values.find(
      (v) => v.labels.flow === flow,
    )?.value ?? 0;

  const cases: Array<[string, (cpf: string) => Promise<Record<string, unknown>>]> = [
    [
      'ids of no request at all',
      async () => ({ transaction_id: randomUUID(), correlation_id: randomUUID() }),
    ],
    [
      "another person's request",
      async () => {
        const other = uniqueCpf();
        await requested(other);
        return { transaction_id: `tx-${other}`, correlation_id: `corr-${other}` };
      },
    ],
    [
      "the person's biometric identification's request, on an onboarding callback",
      async (cpf) => {
        await requested(cpf, 'biometrics');
        return {};
      },
    ],
    [
      'empty ids, while a request of the flow awaits its transaction_id',
      async (cpf) => {
        const hash = cpfHash(cpf, INGRESS_PII_KEY);
        await recordLivenessRequest(pool, {
          correlationId: randomUUID(),
          workflowId: onboardingWorkflowId(hash),
          flow: 'onboarding',
          cpfHash: hash,
          requestedAt: new Date(),
        });
        return { transaction_id: '', correlation_id: '' };
      },
    ],
  ];

  it.each(cases)(
    'a `completed` naming %s: 2xx, kept in the inbox with a note, counted, never signalled',
    async (_name, idsFor) => {
      const cpf = uniqueCpf();
      const wf = onboardingWorkflowId(cpfHash(cpf, INGRESS_PII_KEY));
      await startRecorder(wf);
      const before = await unmatchedCount('onboarding');
      const forged = { ...livenessCb(cpf, 'completed'), ...(await idsFor(cpf)) };
      const r = await post(`${strict.base}/liveness`, forged);
      expect(r.status).toBe(200);
      const [row] = await waitUntil(
        () => rowsOf(wf),
        (rows) => rows[0]?.delivered_at != null,
      );
      expect(row?.last_error).toBe(UNMATCHED_NOTE);
      expect(row?.raw_body).toBe(JSON.stringify(forged));
      // Kept only after it waited for a request's record that never came.
      const waited = (row?.delivered_at?.getTime() ?? 0) - (row?.received_at.getTime() ?? 0);
      expect(waited).toBeGreaterThanOrEqual(WAIT_MS - 100);
      expect(await unmatchedCount('onboarding')).toBe(before + 1);
      expect(await received(wf)).toEqual([]);
    },
  );

  it("a biometric identification's callback naming no request of it is kept and counted as such", async () => {
    const cpf = uniqueCpf();
    const wf = biometricsWorkflowId(cpfHash(cpf, INGRESS_PII_KEY));
    await startRecorder(wf);
    const before = await unmatchedCount('biometrics');
    // The person's onboarding request is no request of their biometric identification.
    await requested(cpf, 'onboarding');
    const cb = {
      ...livenessCb(cpf),
      status_onboarding: 'biometric_approved',
      action_type: 'biometric_identification',
    };
    expect((await post(`${strict.base}/liveness`, cb)).status).toBe(200);
    const [row] = await waitUntil(
      () => rowsOf(wf),
      (rows) => rows[0]?.delivered_at != null,
    );
    expect(row?.last_error).toBe(UNMATCHED_NOTE);
    expect(await unmatchedCount('biometrics')).toBe(before + 1);
    expect(await received(wf)).toEqual([]);
  });

  it("a callback that comes before its request's record waits for it, then is signalled once, copies and all", async () => {
    const cpf = uniqueCpf();
    const wf = onboardingWorkflowId(cpfHash(cpf, INGRESS_PII_KEY));
    await startRecorder(wf);
    const before = await unmatchedCount('onboarding');
    expect((await post(`${strict.base}/liveness`, livenessCb(cpf))).status).toBe(200);
    const [waiting] = await waitUntil(
      () => rowsOf(wf),
      (rows) => (rows[0]?.attempts ?? 0) >= 1,
    );
    expect(waiting?.delivered_at).toBeNull();
    expect(waiting?.last_error).toMatch(/names no liveness request of this flow \(yet\)/);
    // The provider retries meanwhile: the copy joins the waiting row, or takes over from it.
    expect((await post(`${strict.base}/liveness`, livenessCb(cpf))).status).toBe(200);
    await requested(cpf);
    const rows = await waitUntil(
      () => rowsOf(wf),
      (r) => r.every((x) => x.delivered_at !== null),
    );
    const got = await waitUntil(
      () => received(wf),
      (r) => r.length >= 1,
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(await received(wf)).toHaveLength(1);
    expect(got[0]?.payload).toMatchObject({ statusVerification: 'completed', correlationId: `corr-${cpf}` });
    expect(rows.filter((r) => r.last_error === null)).toHaveLength(1);
    expect(rows.every((r) => r.last_error !== UNMATCHED_NOTE)).toBe(true);
    expect(await unmatchedCount('onboarding')).toBe(before);
  });
});

describe('webhook ingress: identical notifications', () => {
  const statusesOf = (got: Received[]) =>
    got.map((g) => (g.payload as { statusVerification: string }).statusVerification);

  it('an identical notification after the first was signalled is signalled again: two events can look alike', async () => {
    const txid = uniqueId();
    const wf = depositWorkflowId(txid);
    await startRecorder(wf);
    expect((await post(`${ingress.base}/deposit`, depositMsg(txid))).status).toBe(200);
    await expectDeliveredOnce(wf);
    // Past the coalescing window: the same body is a new event, signalled at once.
    await new Promise((r) => setTimeout(r, COALESCE_MS));
    const again = await post(`${ingress.base}/deposit`, depositMsg(txid));
    expect(JSON.parse(again.text)).toEqual({ received: true, duplicate: false });
    const got = await waitUntil(
      () => received(wf),
      (r) => r.length >= 2,
    );
    expect(got).toHaveLength(2);
    expect((await rowsOf(wf)).map((r) => r.delivered_at !== null)).toEqual([true, true]);
  });

  it('liveness: the same status twice, with identical bodies, is seen twice', async () => {
    const cpf = uniqueCpf();
    const wf = await requested(cpf);
    await startRecorder(wf);
    const relay = startInboxRelay({ pool, temporal, log: silentLog, intervalMs: 100, delivery: fast });
    try {
      expect((await post(`${ingress.base}/liveness`, livenessCb(cpf, 'processing'))).status).toBe(200);
      await waitUntil(
        () => received(wf),
        (r) => r.length >= 1,
      );
      // Right after the first signal: held for the window, then signalled, not dropped.
      expect((await post(`${ingress.base}/liveness`, livenessCb(cpf, 'processing'))).status).toBe(200);
      const got = await waitUntil(
        () => received(wf),
        (r) => r.length >= 2,
      );
      expect(statusesOf(got)).toEqual(['processing', 'processing']);
      // The row is marked just after its signal lands.
      const [first, second] = await waitUntil(
        () => rowsOf(wf),
        (rows) => rows.length === 2 && rows.every((r) => r.delivered_at !== null),
      );
      const gap = (second?.delivered_at?.getTime() ?? 0) - (first?.delivered_at?.getTime() ?? 0);
      expect(gap).toBeGreaterThanOrEqual(COALESCE_MS - 50);
    } finally {
      await relay.stop();
    }
  });

  it('a storm of 50 concurrent copies: all 2xx, one signal at once and one after the window, never more', async () => {
    const txid = uniqueId();
    const wf = depositWorkflowId(txid);
    await startRecorder(wf);
    const relay = startInboxRelay({ pool, temporal, log: silentLog, intervalMs: 100, delivery: fast });
    try {
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => post(`${ingress.base}/deposit`, depositMsg(txid))),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
      const own = answers.filter((a) => JSON.parse(a.text).duplicate === false);
      expect(own.length).toBeGreaterThanOrEqual(1);
      expect(own.length).toBeLessThanOrEqual(2);
      const rows = await waitUntil(
        () => rowsOf(wf),
        (r) => r.every((x) => x.delivered_at !== null),
      );
      await new Promise((r) => setTimeout(r, COALESCE_MS + 300));
      expect(await received(wf)).toHaveLength(rows.length);
      expect(await rowsOf(wf)).toHaveLength(own.length);
    } finally {
      await relay.stop();
    }
  });
});

describe('webhook ingress: refused input', () => {
  const target = uniqueId();
  const wf = depositWorkflowId(target);
  const big = { ...depositMsg(target), padding: 'x'.repeat(20_000) };
  const cases: Array<[string, string, unknown, number]> = [
    ['wrong secret', `/webhooks/provider/not-the-${SECRET}/deposit`, depositMsg(target), 401],
    ['wrong secret, one URL', `/webhooks/provider/${SECRET.slice(0, -1)}`, depositMsg(target), 401],
    ['wrong partner_id', 'deposit', { ...depositMsg(target), partner_id: `${PARTNER}x` }, 401],
    ['missing partner_id', 'deposit', { id: target, type: 'deposit', action: 'updated' }, 401],
    ['malformed JSON', 'deposit', `{"id":"${target}","type":"deposit"`, 400],
    ['a JSON array', 'deposit', [depositMsg(target)], 400],
    ['an empty body', 'deposit', '', 400],
    ['id of the wrong type', 'deposit', { ...depositMsg(target), id: Number(target) }, 400],
    ['an id no deposit can have', 'deposit', depositMsg('abc-123'), 400],
    ['unknown type on the one URL', '', { ...depositMsg(target), type: 'refund' }, 400],
    ['unknown type on the deposit URL', 'deposit', { ...depositMsg(target), type: 'refund' }, 400],
    ['unknown action', 'deposit', depositMsg(target, 'deleted'), 400],
    ['a withdraw message on the deposit URL', 'deposit', withdrawMsg(target), 400],
    ['a deposit message on the liveness URL', 'liveness', depositMsg(target), 400],
    ['a liveness callback with an unknown status', '', livenessCb('12345678901', 'done'), 400],
    ['a liveness callback without a CPF', 'liveness', livenessCb('not-a-cpf'), 400],
    ['an unknown point', 'refund', depositMsg(target), 404],
    ['an oversized body', 'deposit', big, 413],
  ];

  beforeAll(async () => {
    await startRecorder(wf);
  });

  it.each(cases)('%s: problem+json, no row, no signal', async (_name, where, body, status) => {
    const before = await totalRows();
    const url = where.startsWith('/')
      ? `${ingress.url}${where}`
      : where
        ? `${ingress.base}/${where}`
        : ingress.base;
    const r = await post(url, body);
    expect(r.status).toBe(status);
    expect(r.contentType).toContain('application/problem+json');
    const problem = JSON.parse(r.text);
    expect(problem.status).toBe(status);
    // The secret never comes back, not even in `instance`.
    expect(r.text).not.toContain(SECRET);
    expect(await totalRows()).toBe(before);
    expect(await received(wf)).toEqual([]);
  });
});

describe('webhook ingress: delivery later', () => {
  it('a notification for a workflow that does not exist yet stays pending; the relay delivers it once it starts', async () => {
    const txid = uniqueId();
    const wf = depositWorkflowId(txid);
    expect((await post(`${ingress.base}/deposit`, depositMsg(txid))).status).toBe(200);
    const [pending] = await waitUntil(
      () => rowsOf(wf),
      (r) => (r[0]?.attempts ?? 0) >= 1,
    );
    expect(pending?.delivered_at).toBeNull();
    expect(pending?.last_error).toMatch(/not found/);

    await startRecorder(wf);
    const relay = startInboxRelay({ pool, temporal, log: silentLog, intervalMs: 100, delivery: fast });
    try {
      const { signal } = await expectDeliveredOnce(wf);
      expect(signal.payload).toMatchObject({ action: 'updated', id: txid });
    } finally {
      await relay.stop();
    }
  });

  it('a notification for a completed workflow is marked delivered, with nothing signalled', async () => {
    const txid = uniqueId();
    const wf = depositWorkflowId(txid);
    const handle = await startRecorder(wf);
    await handle.signal(finishSignal);
    expect(await handle.result()).toBe(0);
    expect((await post(`${ingress.base}/deposit`, depositMsg(txid))).status).toBe(200);
    const [row] = await waitUntil(
      () => rowsOf(wf),
      (r) => r[0]?.delivered_at != null,
    );
    expect(row?.last_error).toMatch(/already closed \(COMPLETED\)/);
  });

  it('a workflow that never appears is given up after the bound, and the relay leaves the row alone', async () => {
    const txid = uniqueId();
    const wf = depositWorkflowId(txid);
    const impatient = await startIngress(pool, temporal, { delivery: { ...fast, giveUpAfterMs: 0 } });
    try {
      expect((await post(`${impatient.base}/deposit`, depositMsg(txid))).status).toBe(200);
      const [row] = await waitUntil(
        () => rowsOf(wf),
        (r) => r[0]?.gave_up_at != null,
      );
      expect(row?.delivered_at).toBeNull();
      expect(row?.last_error).toMatch(/gave up/);
    } finally {
      await impatient.close();
    }
  });

  it('with Temporal unreachable the 2xx still goes back and the row stays pending, until a relay with Temporal delivers it', async () => {
    const txid = uniqueId();
    const wf = depositWorkflowId(txid);
    await startRecorder(wf);
    // A Temporal that takes the connection and never answers: the signal to it ends only at its
    // deadline, so an answer that waited for it would come after the signal's attempt ended.
    const held = new Set<Socket>();
    const silent = createServer((socket) => {
      held.add(socket);
      socket.on('close', () => held.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    // No gRPC retry interceptor: abandoned calls must not retry on after the channel is closed.
    const deadConnection = Connection.lazy({
      address: `127.0.0.1:${(silent.address() as AddressInfo).port}`,
      connectTimeout: 5_000,
      interceptors: [],
    });
    const dead = new Client({ connection: deadConnection });
    const cut = await startIngress(pool, dead, { delivery: { ...fast, signalTimeoutMs: 5_000 } });
    try {
      const r = await post(`${cut.base}/deposit`, depositMsg(txid));
      expect(r.status).toBe(200);
      // Answered before the signal's attempt ended: none is counted yet, and the signal did set out.
      expect((await rowsOf(wf))[0]).toMatchObject({ attempts: 0, delivered_at: null, last_error: null });
      await waitUntil(
        () => held.size,
        (n) => n > 0,
      );
      const [pending] = await waitUntil(
        () => rowsOf(wf),
        (rows) => (rows[0]?.attempts ?? 0) >= 1,
      );
      expect(pending?.delivered_at).toBeNull();
      expect(pending?.last_error).toBeTruthy();
      expect(await received(wf)).toEqual([]);
    } finally {
      await cut.close();
      await deadConnection.close();
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
    const relay = startInboxRelay({ pool, temporal, log: silentLog, intervalMs: 100, delivery: fast });
    try {
      await expectDeliveredOnce(wf);
    } finally {
      await relay.stop();
    }
  });

  it('with Postgres down the answer is 503 problem+json (the provider retries) and nothing is signalled', async () => {
    const txid = uniqueId();
    const wf = depositWorkflowId(txid);
    await startRecorder(wf);
    const deadPool = createPool(`postgres://nobody:nothing@127.0.0.1:${await freePort()}/none`, 1);
    const noDb = await startIngress(deadPool, temporal);
    try {
      const r = await post(`${noDb.base}/deposit`, depositMsg(txid));
      expect(r.status).toBe(503);
      expect(r.contentType).toContain('application/problem+json');
      await new Promise((res) => setTimeout(res, 300));
      expect(await received(wf)).toEqual([]);
    } finally {
      await noDb.close();
      await deadPool.end();
    }
  });
});
