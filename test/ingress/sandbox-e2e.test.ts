import { randomBytes } from 'node:crypto';
import { generate as generateCpf } from '@fnando/cpf';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { INBOX_DEFAULTS } from '../../common/config';
import {
  type DepositInput,
  depositStateQuery,
  depositWorkflowId,
  qrCodeUpdate,
} from '../../contracts/deposit';
import type { WithdrawalInput } from '../../contracts/withdrawal';
import { withdrawalStateQuery, withdrawalWorkflowId } from '../../contracts/withdrawal';
import type { Pool } from '../../db/pool';
import { startInboxRelay } from '../../ingress/inbox-relay';
import { type RunningSandbox, startSandbox } from '../../sandbox';
import { verifiedDepositor, verifiedWithKnownPayee } from '../helpers/customers';
import { TEST_PII_KEY } from '../helpers/flow-env';
import { testPool } from '../helpers/postgres';
import { connectorFor } from '../helpers/sandbox-client';
import { testDataConverter } from '../helpers/temporal';
import { createTestWorker } from '../helpers/worker';
import { PARTNER, post, type RunningIngress, silentLog, startIngress, uniqueId, waitUntil } from './harness';

// End to end over the real pieces: the sandbox, registered to the ingress's one URL, posts the
// deposit notifications itself; the real deposit workflow (dev server, real activities) must
// complete on the `updated` one, long before its first scheduled inquiry.

let pool: Pool;
let connection: Connection;
let nativeConnection: NativeConnection;
let temporal: Client;
let worker: Worker;
let running: Promise<void>;
let sandbox: RunningSandbox;
let ingress: RunningIngress;
let taskQueue: string;
let relay: { stop(): Promise<void> };

beforeAll(async () => {
  pool = testPool();
  sandbox = await startSandbox();
  const address = inject('temporalAddress');
  connection = await Connection.connect({ address });
  temporal = new Client({ connection, dataConverter: testDataConverter });
  nativeConnection = await NativeConnection.connect({ address });
  taskQueue = `ingress-e2e-${randomBytes(4).toString('hex')}`;
  const provider = connectorFor(sandbox.url, {
    timeoutMs: 5_000,
  });
  worker = await createTestWorker({
    connection: nativeConnection,
    client: temporal,
    taskQueue,
    provider,
    pool,
    piiKey: TEST_PII_KEY,
  });
  running = worker.run();
  // The person of these deposits is verified: the rules let their deposits through.
  await verifiedDepositor(pool, TEST_PII_KEY, '63401825771');
  ingress = await startIngress(pool, temporal);
  // As in every API process: the relay signals what the request path left waiting.
  relay = startInboxRelay({ pool, temporal, log: silentLog, intervalMs: 100 });
  // What scripts/start.ts does for the embedded stack: one URL for all points.
  const r = await post(`${sandbox.url}/sandbox/notifications`, { url: ingress.base, partnerId: PARTNER });
  expect(r.status).toBe(200);
});

afterAll(async () => {
  await relay?.stop();
  await ingress?.close();
  worker?.shutdown();
  await running;
  await sandbox?.close();
  await nativeConnection?.close();
  await connection?.close();
  await pool?.end();
});

it('sandbox pay -> ingress -> inbox row -> signal -> the deposit workflow completes', async () => {
  const input: DepositInput = {
    txid: uniqueId(),
    merchant: 'sandbox-merchant',
    client: { externalId: 'user-e2e', cpf: '63401825771', email: 'ana@example.com', name: 'Ana Souza' },
    amountCentavos: 12_345,
  };
  const wf = depositWorkflowId(input.txid);
  const { qr } = await startDeposit(input);
  expect(qr.txid).toBe(input.txid);

  const paid = await post(`${sandbox.url}/sandbox/deposits/${input.txid}/pay`, {
    payerName: 'Ana Souza',
    payerCpf: '63401825771',
  });
  expect(paid.status).toBe(200);

  const handle = temporal.workflow.getHandle(wf);
  const state = await waitUntil(
    () => handle.query(depositStateQuery),
    (s) => s.status === 'completed',
    20_000,
  );
  expect(state.notifications).toBeGreaterThanOrEqual(1);
  expect(state.inquiries).toBeLessThanOrEqual(1);

  const rows = (
    await pool.query<{ signal_payload: { action: string }; delivered_at: Date | null; raw_body: string }>(
      'SELECT signal_payload, delivered_at, raw_body FROM webhook_inbox WHERE workflow_id = $1',
      [wf],
    )
  ).rows;
  const updated = rows.find((r) => r.signal_payload.action === 'updated');
  expect(updated?.delivered_at).toBeInstanceOf(Date);
  expect(JSON.parse(updated?.raw_body ?? '{}')).toMatchObject({
    id: input.txid,
    type: 'deposit',
    action: 'updated',
    partner_id: PARTNER,
  });
  // Every delivery attempt the sandbox made was answered 2xx.
  const log = sandbox.state.notifications.filter((n) => n.message.id === input.txid);
  expect(log.length).toBeGreaterThanOrEqual(1);
  expect(log.every((n) => n.status === 'delivered' && n.attempts === 1)).toBe(true);
});

const depositNotification = (txid: string) => ({
  id: txid,
  type: 'deposit',
  action: 'updated',
  partner_id: PARTNER,
});

/** What the API does: start-or-attach and get the QR in one round trip. */
async function startDeposit(input: DepositInput) {
  const { qr } = await temporal.workflow.executeUpdateWithStart(qrCodeUpdate, {
    args: [{ amountCentavos: input.amountCentavos, payerCpf: input.client.cpf, merchant: input.merchant }],
    startWorkflowOperation: new WithStartWorkflowOperation('depositWorkflow', {
      workflowId: depositWorkflowId(input.txid),
      taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
  return { qr, handle: temporal.workflow.getHandle(depositWorkflowId(input.txid)) };
}

const allDelivered = async (workflowId: string) =>
  (
    await pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM webhook_inbox WHERE workflow_id = $1 AND delivered_at IS NULL',
      [workflowId],
    )
  ).rows[0]?.n === 0;

it('200 early copies of `updated`, then the real one after payment: completed by the real notification (not the poll a minute later), one early inquiry per coalescing window', async () => {
  const input: DepositInput = {
    txid: uniqueId(),
    merchant: 'sandbox-merchant',
    client: { externalId: 'user-storm', cpf: '63401825771', email: 'ana@example.com', name: 'Ana Souza' },
    amountCentavos: 4_200,
  };
  const { handle } = await startDeposit(input);
  const stormStarted = Date.now();
  const early = await Promise.all(
    Array.from({ length: 200 }, () => post(ingress.base, depositNotification(input.txid))),
  );
  // On a loaded machine the 200 posts can outlast one window; each window costs at most one look.
  const windows = 1 + Math.ceil((Date.now() - stormStarted) / INBOX_DEFAULTS.coalesceMs);
  expect(early.every((r) => r.status === 200)).toBe(true);
  // The copies settle: every row signalled, the flow has looked and found nothing paid.
  await waitUntil(
    () => allDelivered(depositWorkflowId(input.txid)),
    (done) => done,
    10_000,
  );
  const before = await waitUntil(
    () => handle.query(depositStateQuery),
    (s) => s.inquiries >= 1,
  );
  await new Promise((r) => setTimeout(r, 1_500));
  const settled = await handle.query(depositStateQuery);
  expect(settled.status).toBe('awaiting_payment');
  expect(settled.inquiries).toBeGreaterThanOrEqual(before.inquiries);
  expect(settled.inquiries).toBeLessThanOrEqual(windows);

  const paidAt = Date.now();
  const paid = await post(`${sandbox.url}/sandbox/deposits/${input.txid}/pay`, {
    payerName: 'Ana Souza',
    payerCpf: '63401825771',
  });
  expect(paid.status).toBe(200);
  const done = await waitUntil(
    () => handle.query(depositStateQuery),
    (s) => s.status === 'completed',
    { timeoutMs: 45_000, intervalMs: 20 },
  );
  // Held at most one coalescing window, then signalled: far sooner than the first poll.
  expect(Date.now() - paidAt).toBeLessThan(30_000);
  // The sandbox's own `updated` woke it: one look more than before payment.
  expect(done.inquiries).toBe(settled.inquiries + 1);
});

it('a withdrawal whose two status changes send identical notifications reaches failed through the second, not a poll', async () => {
  const input: WithdrawalInput = {
    transactionId: `wd-same-${uniqueId()}`,
    merchant: 'sandbox-merchant',
    client: { externalId: 'user-wd', cpf: generateCpf(), email: 'ana@example.com', name: 'Ana Souza' },
    pixKey: 'ana@example.com',
    pixType: 'EMAIL',
    amountCentavos: 1_500,
  };
  await verifiedWithKnownPayee(pool, TEST_PII_KEY, input);
  const handle = await temporal.workflow.start('withdrawalWorkflow', {
    workflowId: withdrawalWorkflowId(input.transactionId),
    taskQueue,
    args: [input],
  });
  await waitUntil(
    () => handle.query(withdrawalStateQuery),
    (s) => s.status === 'processing',
  );
  const notification = { id: input.transactionId, type: 'withdraw', action: 'updated', partner_id: PARTNER };
  // A first `updated` while it is still processing: the flow looks and keeps waiting.
  expect((await post(ingress.base, notification)).status).toBe(200);
  const looked = await waitUntil(
    () => handle.query(withdrawalStateQuery),
    (s) => s.inquiries >= 1,
  );
  expect(looked.status).toBe('processing');
  await new Promise((r) => setTimeout(r, 1_200));
  // The sandbox fails it and sends the same body again.
  const failed = await post(`${sandbox.url}/sandbox/withdrawals/${input.transactionId}/fail`, {
    reason: 'account closed',
  });
  expect(failed.status).toBe(200);
  const end = await waitUntil(
    () => handle.query(withdrawalStateQuery),
    (s) => s.status === 'failed',
    10_000,
  );
  expect(end).toMatchObject({ status: 'failed', reason: 'account closed', inquiries: 2, notifications: 2 });
});
