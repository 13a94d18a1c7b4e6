import { randomBytes } from 'node:crypto';
import { WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReconciliationActivities, type SweepResult } from '../../activities/reconciliation';
import { createApiPixConnector, toApiPixTxid } from '../../connectors/api-pix';
import { connectorRegistry } from '../../connectors/registry';
import type { CollectingConnector, Connector } from '../../connectors/types';
import {
  type DepositInput,
  type DepositState,
  depositStateQuery,
  depositWorkflowId,
  qrCodeUpdate,
} from '../../contracts/deposit';
import { providerNotificationSignal } from '../../contracts/flow';
import { claimHalfOpenTry, connectorBreakers, recordChargeOutcome } from '../../db/connector-breakers';
import { migrate } from '../../db/migrate';
import { createPool } from '../../db/pool';
import { staticPolicyReader } from '../../policy/seed';
import { type RunningSandbox, startSandbox } from '../../sandbox';
import { startApiPixForTest } from '../helpers/api-pix';
import { verifiedDepositor } from '../helpers/customers';
import { type FlowEnv, startFlowEnv, TEST_PII_KEY } from '../helpers/flow-env';
import { recordHistory } from '../helpers/histories';
import { newCpf } from '../helpers/people';
import { policyWith } from '../helpers/policy';
import { freshDatabase } from '../helpers/postgres';
import { connectorFor, sandboxControl, sandboxDialectFromEnv } from '../helpers/sandbox-client';
import { expectActivityFailure, expectSdkLog } from '../helpers/sdk-log';
import { waitUntil } from '../helpers/wait';
import { createTestWorker } from '../helpers/worker';

// Deposits routed across two collecting connectors, each a real sandbox over HTTP under a name
// of its own, on the run's Temporal dev server and Postgres: failover within the request, the
// breaker every worker shares, its cool-down, and a business refusal that stays a refusal.

/** The depositor: a CPF of this run's own, which no other test file's onboarding moves. */
const PERSON = newCpf();

/** Each connector found down says so as the deposit goes on to the next one. */
const failovers = expectSdkLog(
  (e) => e.message === 'deposit charge failed at a connector; asking the next one',
);

let f: FlowEnv;
let second: RunningSandbox;
let n = 0;

beforeAll(async () => {
  f = await startFlowEnv({ temporal: 'dev' });
  second = await startSandbox({ dialect: sandboxDialectFromEnv() });
  await verifiedDepositor(f.pool, TEST_PII_KEY, PERSON);
});
afterAll(async () => {
  await second?.close();
  await f?.close();
});

/** A connector under another name, as the registry routes to it. */
const named = (c: Connector, name: string): CollectingConnector => ({
  name,
  capabilities: c.capabilities,
  get tokenRequests() {
    return c.tokenRequests;
  },
  createCharge: (r) => c.createCharge(r),
  lookUpDeposit: (txid) => c.lookUpDeposit(txid),
});

/** The two connectors of a test, each counting the calls its sandbox saw, by endpoint. */
interface Routing {
  first: string;
  second: string;
  /** The calls each sandbox saw, by endpoint. */
  calls: { first: string[]; second: string[] };
  taskQueue: string;
}

/**
 * A worker routing deposits to [first, second] (fresh names: a breaker of their own) under a
 * breaker of `failures` and `coolDownMs`, while `body` runs.
 */
async function withRouting(
  breaker: { failures: number; coolDownMs: number; unknownFirst?: string },
  body: (r: Routing) => Promise<void>,
): Promise<void> {
  const id = randomBytes(3).toString('hex');
  const calls = { first: [] as string[], second: [] as string[] };
  const first = `first-${id}`;
  const secondName = `second-${id}`;
  const a = connectorFor(f.sandbox.url, { onCall: (e) => calls.first.push(e.endpoint) });
  const b = connectorFor(second.url, { onCall: (e) => calls.second.push(e.endpoint) });
  const taskQueue = `${f.taskQueue}-routing-${id}`;
  const policy = policyWith({
    deposits: {
      routing: {
        // A name no connector of the worker has, first, when asked for.
        connectors: [...(breaker.unknownFirst ? [breaker.unknownFirst] : []), first, secondName],
        breaker: { failures: breaker.failures, windowMs: 60_000, coolDownMs: breaker.coolDownMs },
      },
    },
  });
  const worker = await createTestWorker({
    connection: f.env.nativeConnection,
    client: f.env.client,
    taskQueue,
    provider: a,
    collectors: connectorRegistry([named(a, first), named(b, secondName)]),
    pool: f.pool,
    piiKey: TEST_PII_KEY,
    policy: staticPolicyReader(policy),
  });
  const running = worker.run();
  try {
    await body({ first, second: secondName, calls, taskQueue });
  } finally {
    worker.shutdown();
    await running;
    await setDown(f.sandbox.url, false);
  }
}

/** The first sandbox answering every charge creation 503 (down), or not. */
const setDown = (url: string, down: boolean) =>
  sandboxControl(url, '/sandbox/faults', { errorRate: { deposit: down ? 1 : 0 } });

function depositInput(over: Partial<DepositInput> = {}): DepositInput {
  n += 1;
  return {
    txid: `9${Date.now()}${n}`,
    merchant: 'sandbox-merchant',
    client: { externalId: `user-${n}`, cpf: PERSON, email: 'ana@example.com', name: 'Ana Souza' },
    amountCentavos: 15_000,
    ...over,
  };
}

/** What the API does: start-or-attach and get the QR in one round trip. */
const askQr = (input: DepositInput, taskQueue: string) =>
  f.env.client.workflow.executeUpdateWithStart(qrCodeUpdate, {
    args: [
      {
        amountCentavos: input.amountCentavos,
        payerCpf: input.client.cpf,
        merchant: input.merchant,
        requestId: 'req-1',
      },
    ],
    startWorkflowOperation: new WithStartWorkflowOperation('depositWorkflow', {
      workflowId: depositWorkflowId(input.txid),
      taskQueue,
      args: [{ ...input, requestId: 'req-1' }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });

const handleOf = (input: DepositInput) => f.env.client.workflow.getHandle(depositWorkflowId(input.txid));
const stateOf = (input: DepositInput): Promise<DepositState> => handleOf(input).query(depositStateQuery);
const count = (calls: string[], endpoint: string) => calls.filter((e) => e === endpoint).length;

async function rowDetails(input: DepositInput): Promise<Record<string, unknown>> {
  const { rows } = await f.pool.query<{ details: Record<string, unknown> }>(
    'SELECT details FROM flows WHERE workflow_id = $1',
    [depositWorkflowId(input.txid)],
  );
  return rows[0]?.details ?? {};
}

describe('deposits routed across connectors', () => {
  it('the first down: the QR comes from the second in the same request, and its inquiry and payment go there', async () => {
    await withRouting({ failures: 5, coolDownMs: 30_000 }, async (r) => {
      await setDown(f.sandbox.url, true);
      const input = depositInput();
      const answer = await askQr(input, r.taskQueue);
      expect(answer.created).toBe(true);
      expect(answer.qr.payload).toMatch(/\S+/);
      // The first was asked and failed; the second made the charge.
      expect(count(r.calls.first, 'deposit')).toBe(1);
      expect(count(r.calls.second, 'deposit')).toBe(1);
      expect((await stateOf(input)).connector).toBe(r.second);
      expect((await rowDetails(input)).connector).toBe(r.second);
      const [breaker] = await connectorBreakers(f.pool, [r.first], new Date());
      expect(breaker).toMatchObject({ state: 'closed', failures: 1 });
      expect(failovers().filter((e) => e.meta.connector === r.first)).toHaveLength(1);

      await sandboxControl(second.url, `/sandbox/deposits/${input.txid}/pay`, {
        payerName: 'Ana Souza',
        payerCpf: PERSON,
      });
      const handle = handleOf(input);
      await handle.signal(providerNotificationSignal, { type: 'deposit', action: 'updated', id: input.txid });
      const done = await handle.result();
      expect(done).toMatchObject({ status: 'completed', connector: r.second });
      expect(done.payment?.e2eId).toMatch(/\w+/);
      expect(count(r.calls.second, 'inquiry')).toBeGreaterThanOrEqual(1);
      expect(count(r.calls.first, 'inquiry')).toBe(0);
      expect(await rowDetails(input)).toMatchObject({ connector: r.second, e2eId: done.payment?.e2eId });
      await recordHistory(handle, 'deposit-routed-failover-paid');
    });
  });

  it('after N failures the breaker opens: the next deposit does not ask the first; after the cool-down it is tried again', async () => {
    await withRouting({ failures: 2, coolDownMs: 2_000 }, async (r) => {
      await setDown(f.sandbox.url, true);
      for (let i = 0; i < 2; i += 1) {
        const input = depositInput();
        await askQr(input, r.taskQueue);
        expect((await stateOf(input)).connector).toBe(r.second);
      }
      expect(count(r.calls.first, 'deposit')).toBe(2);
      const [opened] = await connectorBreakers(f.pool, [r.first], new Date());
      expect(opened).toMatchObject({ state: 'open', failures: 2 });

      // Open: the first sandbox sees no call at all for the next deposit.
      const firstCalls = r.calls.first.length;
      const skipped = depositInput();
      await askQr(skipped, r.taskQueue);
      expect((await stateOf(skipped)).connector).toBe(r.second);
      expect(r.calls.first.length).toBe(firstCalls);

      // The first comes back; once the cool-down passed, the next deposit tries it, and its
      // success closes the breaker.
      await setDown(f.sandbox.url, false);
      await waitUntil(
        async () => (await connectorBreakers(f.pool, [r.first], new Date()))[0],
        (b) => b?.state === 'half_open',
        { timeoutMs: 10_000 },
      );
      const tried = depositInput();
      await askQr(tried, r.taskQueue);
      expect((await stateOf(tried)).connector).toBe(r.first);
      expect(count(r.calls.first, 'deposit')).toBe(3);
      const [closed] = await connectorBreakers(f.pool, [r.first], new Date());
      expect(closed).toMatchObject({ state: 'closed', failures: 0 });
    });
  });

  it('every connector open: the first is asked anyway, and makes the QR once it is back', async () => {
    await withRouting({ failures: 1, coolDownMs: 60_000 }, async (r) => {
      await setDown(f.sandbox.url, true);
      await setDown(second.url, true);
      try {
        const input = depositInput();
        expectActivityFailure({
          workflowId: depositWorkflowId(input.txid),
          activityType: 'createChargeAndRecordAwaitingPayment',
          error: /HTTP 503/,
        });
        const qr = askQr(input, r.taskQueue);
        // Both asked once and down: both open for a minute, and the charge is retried meanwhile.
        await waitUntil(
          () => connectorBreakers(f.pool, [r.first, r.second], new Date()),
          (bs) => bs.every((b) => b.state === 'open'),
          { timeoutMs: 10_000 },
        );
        const secondCalls = count(r.calls.second, 'deposit');
        await setDown(f.sandbox.url, false);
        await qr;
        expect((await stateOf(input)).connector).toBe(r.first);
        // The open second was not asked again: only the first is, when all are open.
        expect(count(r.calls.second, 'deposit')).toBe(secondCalls);
        const [first] = await connectorBreakers(f.pool, [r.first], new Date());
        expect(first).toMatchObject({ state: 'closed', failures: 0 });
      } finally {
        await setDown(second.url, false);
      }
    });
  });

  it('a business refusal does not fail over: the deposit fails and the second is never asked', async () => {
    await withRouting({ failures: 5, coolDownMs: 30_000 }, async (r) => {
      const input = depositInput();
      expectActivityFailure({
        workflowId: depositWorkflowId(input.txid),
        activityType: 'createChargeAndRecordAwaitingPayment',
        error: /./,
      });
      // The first already holds this txid for another amount: it refuses it (DUPLICATE_TRANSACTION).
      await connectorFor(f.sandbox.url).createCharge({
        payer: input.client,
        amountCentavos: 999,
        txid: input.txid,
        merchant: input.merchant,
      });
      const err = await askQr(input, r.taskQueue).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
      const done = await handleOf(input).result();
      expect(done).toMatchObject({ status: 'failed', reason: 'DUPLICATE_TRANSACTION' });
      expect(done.connector).toBeUndefined();
      expect(count(r.calls.second, 'deposit')).toBe(0);
      const [breaker] = await connectorBreakers(f.pool, [r.first], new Date());
      expect(breaker).toMatchObject({ state: 'closed', failures: 0 });
    });
  });

  it("the reconciliation's sweep asks each deposit's own connector, and the first provider for one from before routing", async () => {
    // A database of its own: the sweep takes every waiting row it finds.
    const url = await freshDatabase();
    await migrate(url);
    const own = createPool(url, 2);
    const calls = { first: [] as string[], second: [] as string[] };
    const a = connectorFor(f.sandbox.url, { onCall: (e) => calls.first.push(e.endpoint) });
    const b = connectorFor(second.url, { onCall: (e) => calls.second.push(e.endpoint) });
    const secondName = `second-${randomBytes(3).toString('hex')}`;
    try {
      // Each deposit made and paid at its own sandbox, its row waiting since a minute ago.
      const routed = depositInput();
      const before = depositInput();
      for (const [input, sandboxUrl, details] of [
        [routed, second.url, { connector: secondName }],
        [before, f.sandbox.url, {}],
      ] as const) {
        await connectorFor(sandboxUrl).createCharge({
          payer: input.client,
          amountCentavos: input.amountCentavos,
          txid: input.txid,
          merchant: input.merchant,
        });
        await sandboxControl(sandboxUrl, `/sandbox/deposits/${input.txid}/pay`, {
          payerName: 'Ana Souza',
          payerCpf: PERSON,
        });
        await own.query(
          `INSERT INTO flows (workflow_id, type, business_id, status, details, seq, created_at, updated_at)
           VALUES ($1, 'deposit', $2, 'awaiting_payment', $3, 1, now() - interval '1 minute', now() - interval '1 minute')`,
          [depositWorkflowId(input.txid), input.txid, JSON.stringify(details)],
        );
      }
      const { reconcileDue } = createReconciliationActivities({
        provider: a,
        collectors: connectorRegistry([a, named(b, secondName)]),
        pool: own,
        temporal: { client: f.env.client, taskQueue: f.taskQueue },
        reconciliation: { scheduleMs: [60_000], maxPerSecond: 50, intervalMs: 200 },
      });
      const swept = (await new MockActivityEnvironment().run(reconcileDue)) as SweepResult;
      // Both found paid (their flows do not exist: the hint goes nowhere), each where it was made.
      expect(swept).toMatchObject({ checked: 2, found: 2, failed: 0 });
      expect(count(calls.second, 'inquiry')).toBe(1);
      expect(count(calls.first, 'inquiry')).toBe(1);
    } finally {
      await own.end();
    }
  });

  it('the first down and an API Pix PSP second: the QR is its cob, and the deposit completes when paid there', async () => {
    const psp = await startApiPixForTest();
    const id = randomBytes(3).toString('hex');
    const first = `first-${id}`;
    const apiPixName = `api-pix-${id}`;
    const firstCalls: string[] = [];
    const pspCalls: string[] = [];
    const a = connectorFor(f.sandbox.url, { onCall: (e) => firstCalls.push(e.endpoint) });
    const apiPix = createApiPixConnector({
      name: apiPixName,
      baseUrl: psp.url,
      tokenUrl: psp.tokenUrl,
      clientId: psp.clientId,
      clientSecret: psp.clientSecret,
      ...psp.tls,
      pixKey: psp.pixKey,
      onCall: (e) => pspCalls.push(e.endpoint),
    });
    const taskQueue = `${f.taskQueue}-api-pix-${id}`;
    const worker = await createTestWorker({
      connection: f.env.nativeConnection,
      client: f.env.client,
      taskQueue,
      provider: a,
      collectors: connectorRegistry([named(a, first), apiPix]),
      pool: f.pool,
      piiKey: TEST_PII_KEY,
      policy: staticPolicyReader(
        policyWith({
          deposits: {
            routing: {
              connectors: [first, apiPixName],
              breaker: { failures: 5, windowMs: 60_000, coolDownMs: 30_000 },
            },
          },
        }),
      ),
    });
    const running = worker.run();
    try {
      await setDown(f.sandbox.url, true);
      const input = depositInput();
      const answer = await askQr(input, taskQueue);
      expect(answer.qr.txid).toBe(input.txid);
      expect(count(firstCalls, 'deposit')).toBe(1);
      expect(count(pspCalls, 'cob_put')).toBe(1);
      expect((await stateOf(input)).connector).toBe(apiPixName);
      expect(failovers().filter((e) => e.meta.connector === first)).toHaveLength(1);

      await psp.pay(toApiPixTxid(input.txid), { payer: 'holder' });
      const handle = handleOf(input);
      await handle.signal(providerNotificationSignal, { type: 'deposit', action: 'updated', id: input.txid });
      const done = await handle.result();
      expect(done).toMatchObject({ status: 'completed', connector: apiPixName });
      expect(count(pspCalls, 'cob_get')).toBeGreaterThanOrEqual(1);
      expect(count(firstCalls, 'inquiry')).toBe(0);
      await recordHistory(handle, 'deposit-routed-api-pix-paid');
    } finally {
      worker.shutdown();
      await running;
      await setDown(f.sandbox.url, false);
      apiPix.close();
      await psp.close();
    }
  });

  it('a routing naming a connector the worker does not have: skipped, and said once', async () => {
    const unknown = `nowhere-${randomBytes(3).toString('hex')}`;
    const said = expectSdkLog(
      (e) =>
        e.message ===
          "the deposits' routing names a connector this worker does not have (or that does not collect): skipped" &&
        e.meta.connector === unknown,
    );
    await withRouting({ failures: 5, coolDownMs: 30_000, unknownFirst: unknown }, async (r) => {
      for (let i = 0; i < 2; i += 1) {
        const input = depositInput();
        await askQr(input, r.taskQueue);
        expect((await stateOf(input)).connector).toBe(r.first);
      }
      expect(said()).toHaveLength(1);
      expect(await connectorBreakers(f.pool, [unknown], new Date())).toEqual([
        { connector: unknown, state: 'closed', failures: 0 },
      ]);
    });
  });

  it("a deposit the first connector serves takes no half-open connector's try after it", async () => {
    await withRouting({ failures: 1, coolDownMs: 1_000 }, async (r) => {
      // The second opened two seconds ago: half-open now, its one try free.
      const settings = { failures: 1, windowMs: 60_000, coolDownMs: 1_000 };
      await recordChargeOutcome(f.pool, r.second, false, settings, new Date(Date.now() - 2_000));
      const input = depositInput();
      await askQr(input, r.taskQueue);
      expect((await stateOf(input)).connector).toBe(r.first);
      expect(count(r.calls.second, 'deposit')).toBe(0);
      // Still free for the next deposit that comes to it.
      expect(await claimHalfOpenTry(f.pool, r.second, new Date(), 30_000)).toBe(true);
    });
  });
});
