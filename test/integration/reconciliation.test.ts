import { randomBytes } from 'node:crypto';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createReconciliationActivities, type SweepResult } from '../../activities/reconciliation';
import { createLogger } from '../../common/logger';
import {
  type DepositInput,
  depositStateQuery,
  depositWorkflowId,
  qrCodeUpdate,
} from '../../contracts/deposit';
import { reconcilerWorkflowId } from '../../contracts/reconciler';
import { type WithdrawalInput, withdrawalStateQuery, withdrawalWorkflowId } from '../../contracts/withdrawal';
import { migrate } from '../../db/migrate';
import { createPool, type Pool } from '../../db/pool';
import { type RunningSandbox, startSandbox } from '../../sandbox';
import { ensureReconciler } from '../../worker/reconciler';
import { verifiedDepositor, verifiedWithKnownPayee } from '../helpers/customers';
import { TEST_PII_KEY } from '../helpers/flow-env';
import { freshDatabase } from '../helpers/postgres';
import { connectorFor, sandboxControl } from '../helpers/sandbox-client';
import { testDataConverter } from '../helpers/temporal';
import { waitUntil } from '../helpers/wait';
import { createTestWorker } from '../helpers/worker';

// Reconciliation on the real stack: the dev server, a Postgres database of its own (the sweep
// takes every waiting row it finds), the real sandbox over HTTP. The sandbox sends no
// notification at all here: whatever completes was found by the sweep.

const CPF = '63401825771';
const SCHEDULE_MS = [500, 1_000];

let pool: Pool;
let sandbox: RunningSandbox;
let connection: Connection;
let native: NativeConnection;
let client: Client;
let worker: Worker;
let running: Promise<void>;
const taskQueue = `reconcile-${randomBytes(4).toString('hex')}`;
let n = 0;

beforeAll(async () => {
  const url = await freshDatabase();
  await migrate(url);
  pool = createPool(url, 5);
  sandbox = await startSandbox();
  const provider = connectorFor(sandbox.url);
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection, dataConverter: testDataConverter });
  native = await NativeConnection.connect({ address: inject('temporalAddress') });
  worker = await createTestWorker({
    connection: native,
    client,
    taskQueue,
    provider,
    pool,
    piiKey: TEST_PII_KEY,
    reconciliation: { scheduleMs: SCHEDULE_MS, maxPerSecond: 50, intervalMs: 300 },
  });
  running = worker.run();
  // The person of these deposits is verified: the rules let their deposits through.
  await verifiedDepositor(pool, TEST_PII_KEY, CPF);
  await ensureReconciler(client, taskQueue, createLogger('test', 'silent'), {
    retryMs: 500,
    stopped: () => false,
  });
});
afterAll(async () => {
  // The worker first: a sweep in flight finishes and completes its activity before the
  // reconciler is terminated, rather than completing a task the server no longer has.
  worker?.shutdown();
  await running;
  await client?.workflow
    .getHandle(reconcilerWorkflowId(taskQueue))
    .terminate('test over')
    .catch(() => {});
  await native?.close();
  await connection?.close();
  await sandbox?.close();
  await pool?.end();
});

async function openDeposit(): Promise<DepositInput> {
  n += 1;
  const input: DepositInput = {
    txid: `${Date.now()}${n}`,
    merchant: 'sandbox-merchant',
    client: { externalId: `user-${n}`, cpf: CPF, email: 'ana@example.com', name: 'Ana Souza' },
    amountCentavos: 15_000,
    requestId: 'req-1',
  };
  await client.workflow.executeUpdateWithStart(qrCodeUpdate, {
    args: [
      { amountCentavos: input.amountCentavos, payerCpf: CPF, merchant: input.merchant, requestId: 'req-1' },
    ],
    startWorkflowOperation: new WithStartWorkflowOperation('depositWorkflow', {
      workflowId: depositWorkflowId(input.txid),
      taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
  return input;
}

const eventsOf = async (workflowId: string) =>
  (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];

const flowRow = async (workflowId: string) =>
  (await pool.query('SELECT status, checks FROM flows WHERE workflow_id = $1', [workflowId])).rows[0] as {
    status: string;
    checks: number;
  };

describe('reconciliation sweep', () => {
  it('finds a paid deposit whose notification never came, and tells it; the deposit proves it and completes', async () => {
    const input = await openDeposit();
    await sandboxControl(sandbox.url, `/sandbox/deposits/${input.txid}/pay`, {
      payerName: 'Ana',
      payerCpf: CPF,
    });
    const handle = client.workflow.getHandle(depositWorkflowId(input.txid));
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', notifications: 1, inquiries: 1 });
    const events = await eventsOf(handle.workflowId);
    const signals = events.filter((e) => e.workflowExecutionSignaledEventAttributes);
    expect(signals).toHaveLength(1);
    // The deposit kept no reconciliation timer of its own: only the wait until its QR expires,
    // cancelled by the sweep's hint.
    expect(events.filter((e) => e.timerStartedEventAttributes)).toHaveLength(1);
    expect(events.filter((e) => e.timerFiredEventAttributes)).toHaveLength(0);
    expect((await flowRow(handle.workflowId)).checks).toBeGreaterThanOrEqual(1);
  });

  it('an unpaid deposit costs Temporal nothing while it waits: the sweep looks it up on its schedule', async () => {
    const input = await openDeposit();
    const id = depositWorkflowId(input.txid);
    // 0.5 s, then every second: three looks within about 3 s.
    const row = await waitUntil(
      () => flowRow(id),
      (r) => r.checks >= 3,
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    expect(row.status).toBe('awaiting_payment');
    const events = await eventsOf(id);
    expect(events.filter((e) => e.activityTaskScheduledEventAttributes)).toHaveLength(0);
    expect(events.filter((e) => e.workflowExecutionSignaledEventAttributes)).toHaveLength(0);
    expect(events.filter((e) => e.timerFiredEventAttributes)).toHaveLength(0);
    const state = await client.workflow.getHandle(id).query(depositStateQuery);
    expect(state.inquiries).toBe(0);
  });

  it('finds a settled payout whose notification never came; the withdrawal completes with its receipt', async () => {
    n += 1;
    const input: WithdrawalInput = {
      transactionId: `wd-rec-${Date.now()}-${n}`,
      merchant: 'sandbox-merchant',
      client: { externalId: `user-${n}`, cpf: CPF, email: 'ana@example.com', name: 'Ana Souza' },
      pixKey: 'ana@example.com',
      pixType: 'EMAIL',
      amountCentavos: 12_345,
    };
    await verifiedWithKnownPayee(pool, TEST_PII_KEY, input);
    const handle = await client.workflow.start('withdrawalWorkflow', {
      taskQueue,
      workflowId: withdrawalWorkflowId(input.transactionId),
      args: [input],
    });
    await waitUntil(
      () => handle.query(withdrawalStateQuery),
      (s) => s.status === 'processing',
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    await sandboxControl(sandbox.url, `/sandbox/withdrawals/${input.transactionId}/settle`);
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', notifications: 1, receiptStored: true });
    const state = (await (await fetch(`${sandbox.url}/sandbox/state`)).json()) as {
      counters: { payouts: Record<string, number> };
    };
    expect(state.counters.payouts[input.transactionId]).toBe(1);
  });
});

describe('one sweep', () => {
  /** A database of its own (the running reconciler above must not take its rows), with `n` rows
   * of deposits waiting since a minute ago, unknown to the sandbox: due, and never settled. */
  async function dueRows(n: number) {
    const ownUrl = await freshDatabase();
    await migrate(ownUrl);
    const own = createPool(ownUrl, 2);
    const tag = randomBytes(3).toString('hex');
    for (let i = 0; i < n; i++) {
      await own.query(
        `INSERT INTO flows (workflow_id, type, business_id, status, seq, created_at, updated_at)
         VALUES ($1, 'deposit', $2, 'awaiting_payment', 1, now() - interval '1 minute', now() - interval '1 minute')`,
        [`deposit-sweep-${tag}-${i}`, `9${Date.now()}${i}`],
      );
    }
    return { own, tag };
  }

  /** One sweep over `own`'s rows at these settings: what it did, and how long it took (ms). */
  async function sweep(own: Pool, settings: { maxPerSecond: number; intervalMs: number }) {
    const { reconcileDue } = createReconciliationActivities({
      provider: connectorFor(sandbox.url),
      pool: own,
      temporal: { client, taskQueue },
      reconciliation: { scheduleMs: [60_000], ...settings },
    });
    const started = Date.now();
    const swept = (await new MockActivityEnvironment().run(reconcileDue)) as SweepResult;
    return { swept, took: Date.now() - started };
  }

  it('looks up at most its rate for one interval, paced, and says how many are left', async () => {
    const { own, tag } = await dueRows(30);
    const { swept, took } = await sweep(own, { maxPerSecond: 10, intervalMs: 1_000 });
    // Ten a second for one second: ten rows, the tenth no sooner than 0.9 s after the first.
    expect(swept).toMatchObject({ checked: 10, found: 0, failed: 0, nextInMs: 0 });
    expect(swept.backlog).toBeGreaterThanOrEqual(20);
    expect(took).toBeGreaterThanOrEqual(900);
    const { rows } = await own.query(
      `SELECT count(*)::int AS n FROM flows WHERE workflow_id LIKE $1 AND checks = 1 AND next_check_at > now() + interval '50 seconds'`,
      [`deposit-sweep-${tag}-%`],
    );
    await own.end();
    // Each looked-up row is due again one step of the schedule later; the others wait their turn.
    expect(rows[0].n).toBe(10);
  });

  it('spreads fewer looks than its rate allows over the interval instead of taking them at once', async () => {
    const { own } = await dueRows(5);
    const { swept, took } = await sweep(own, { maxPerSecond: 50, intervalMs: 2_000 });
    await own.end();
    // Five of the hundred the interval allows: one every 320 ms (80% of 2 s over five), not all
    // five in the first 100 ms at 50 a second; the next sweep comes at the interval.
    expect(swept).toMatchObject({ checked: 5, found: 0, failed: 0, backlog: 0 });
    expect(took).toBeGreaterThanOrEqual(4 * 320);
    expect(took).toBeLessThan(2_000);
    expect(swept.nextInMs).toBeLessThanOrEqual(2_000 - 4 * 320);
  });
});
