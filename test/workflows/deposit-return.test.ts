import { WithStartWorkflowOperation, type WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../common/logger';
import { maskCpf } from '../../common/mask';
import { cpfHash } from '../../common/pii';
import { type ApiPixConnector, readPixNotifications, toApiPixTxid } from '../../connectors/api-pix';
import { connectorRegistry } from '../../connectors/registry';
import {
  type DepositInput,
  type DepositReturnInput,
  type DepositState,
  depositReturnId,
  depositReturnWorkflowId,
  depositStateQuery,
  depositWorkflowId,
  qrCodeUpdate,
  resolutionUpdate,
} from '../../contracts/deposit';
import { providerNotificationSignal } from '../../contracts/flow';
import { returnableDeposits } from '../../db/deposit-returns';
import { upsertFlowAndEvent } from '../../db/flows';
import { refusedDecisionsOf } from '../../db/operator-decisions';
import { type ApiPixListener, startApiPixListener } from '../../ingress/api-pix-listener';
import { staticPolicyReader } from '../../policy/seed';
import { startDepositReturn, withItsReturn } from '../../starters/deposit-return';
import { type ApiPixForTest, startApiPixForTest } from '../helpers/api-pix';
import { verifiedDepositor } from '../helpers/customers';
import { provenDecision } from '../helpers/decisions';
import { type FlowEnv, startFlowEnv, TEST_PII_KEY, waitForState } from '../helpers/flow-env';
import { apiPixConnectorOf, heldOnApiPix as heldOnPsp } from '../helpers/held-deposits';
import { patchMarkers, recordHistory } from '../helpers/histories';
import { newCpf } from '../helpers/people';
import { policyWith } from '../helpers/policy';
import { expectActivityFailure, expectSdkLog } from '../helpers/sdk-log';
import { createTestWorker } from '../helpers/worker';

// A held deposit's money goes back to its payer through the connector that received it, on an
// operator's `return` or by the rules after the review delay; a connector that cannot return
// leaves it to be returned by hand. On the run's dev server: updates reach the held run there.

let f: FlowEnv;
let n = 0;

beforeAll(async () => {
  f = await startFlowEnv({ temporal: 'dev' });
  await verifiedDepositor(f.pool, TEST_PII_KEY, CLIENT_CPF);
});
afterAll(async () => {
  await f?.close();
});

/** The depositor: a CPF of this run's own, which no other test file's onboarding moves. */
const CLIENT_CPF = newCpf();
const OTHER_PAYER = '52998224725';

function depositInput(): DepositInput {
  n += 1;
  return {
    txid: `${Date.now()}7${n}`,
    merchant: 'sandbox-merchant',
    client: { externalId: `user-${n}`, cpf: CLIENT_CPF, email: 'ana@example.com', name: 'Ana Souza' },
    amountCentavos: 15_000,
  };
}

const flowRow = async (workflowId: string) =>
  (await f.pool.query('SELECT status, reason, details FROM flows WHERE workflow_id = $1', [workflowId]))
    .rows[0] as { status: string; reason: string | null; details: Record<string, unknown> };

/** A deposit started as the API starts it, on `taskQueue`: its QR given. */
async function depositOn(taskQueue: string) {
  const input = depositInput();
  await f.env.client.workflow.executeUpdateWithStart(qrCodeUpdate, {
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
  return { input, handle: f.env.client.workflow.getHandle(depositWorkflowId(input.txid)) };
}

/** A deposit on the first provider, paid from another CPF: held, on `taskQueue`. */
async function heldOnFirstProvider(taskQueue = f.taskQueue) {
  const { input, handle } = await depositOn(taskQueue);
  await f.sandboxControl(`/sandbox/deposits/${input.txid}/pay`, { payerName: 'João', payerCpf: OTHER_PAYER });
  await handle.signal(providerNotificationSignal, { type: 'deposit', action: 'updated', id: input.txid });
  const held = await waitForState(
    () => handle.query(depositStateQuery),
    (s) => s.status === 'held',
  );
  return { input, handle, held };
}

/** An operator's proven decision on the held deposit. */
const decide = async (workflowId: string, decision: 'accept' | 'return', reason: string) =>
  provenDecision(f.pool, workflowId, 'deposit.resolution', 'ops@example.com', {
    decision,
    by: 'ops@example.com',
    reason,
  });

/**
 * A worker of its own whose rules return a held third party's money after `afterMs`, with the
 * API Pix connector beside the first provider when given.
 */
async function withAutoReturn(
  afterMs: number,
  body: (taskQueue: string) => Promise<void>,
  apiPix?: ApiPixConnector,
) {
  const taskQueue = `${f.taskQueue}-auto-${afterMs}`;
  const worker = await createTestWorker({
    connection: f.env.nativeConnection,
    client: f.env.client,
    taskQueue,
    provider: f.provider,
    ...(apiPix ? { collectors: connectorRegistry([f.provider, apiPix]) } : {}),
    pool: f.pool,
    piiKey: TEST_PII_KEY,
    policy: staticPolicyReader(
      policyWith({ deposits: { autoReturnThirdParty: true, autoReturnAfterMs: afterMs } }),
      7,
    ),
  });
  const running = worker.run();
  try {
    await body(taskQueue);
  } finally {
    worker.shutdown();
    await running;
  }
}

describe('a held deposit on the first provider, which cannot return received Pix', () => {
  it("an operator's return leaves it to_return, to be returned by hand, and the state says why", async () => {
    const { handle } = await heldOnFirstProvider();
    const answer = await handle.executeUpdate(resolutionUpdate, {
      args: [await decide(handle.workflowId, 'return', 'payer unknown to the person')],
    });
    expect(answer.status).toBe('to_return');
    const result: DepositState = await handle.result();
    expect(result).toMatchObject({
      status: 'to_return',
      reason: 'third_party_payer',
      resolution: { decision: 'return', by: 'ops@example.com' },
      returnByHand: { connector: 'identity-payments', why: 'connector_cannot_return' },
    });
    expect(result.return).toBeUndefined();
    expect(await flowRow(handle.workflowId)).toMatchObject({
      status: 'to_return',
      reason: 'third_party_payer',
      details: { returnByHand: { connector: 'identity-payments', why: 'connector_cannot_return' } },
    });
    expect((await patchMarkers(handle)).join()).toContain('deposit-returns');
    await recordHistory(handle, 'deposit-held-returned-by-hand');
  });
});

describe('the automatic return of a third party’s money', () => {
  it('with no operator within the review delay, the rules return it, decided by rules under their version', async () => {
    await withAutoReturn(2_000, async (taskQueue) => {
      const { handle } = await heldOnFirstProvider(taskQueue);
      const result: DepositState = await handle.result();
      expect(result).toMatchObject({
        status: 'to_return',
        resolution: { decision: 'return', by: 'rules', policyVersion: 7 },
        returnByHand: { connector: 'identity-payments', why: 'connector_cannot_return' },
      });
      expect(
        Date.parse(result.finishedAt ?? '') - Date.parse(result.resolution?.at ?? ''),
      ).toBeGreaterThanOrEqual(0);
      expect(await flowRow(handle.workflowId)).toMatchObject({
        status: 'to_return',
        details: { resolution: { decision: 'return', by: 'rules' } },
      });
      // A decision after the rules' is refused: the hold is decided.
      const late = await handle
        .executeUpdate(resolutionUpdate, { args: [await decide(handle.workflowId, 'accept', 'too late')] })
        .catch((e: Error) => e);
      expect(late).toBeInstanceOf(Error);
      await recordHistory(handle, 'deposit-held-auto-returned-by-hand');
    });
  });

  it('an operator deciding within the review delay wins: accepted, it completes and nothing is returned', async () => {
    await withAutoReturn(60_000, async (taskQueue) => {
      const { handle } = await heldOnFirstProvider(taskQueue);
      const answer = await handle.executeUpdate(resolutionUpdate, {
        args: [await decide(handle.workflowId, 'accept', 'paid by her husband, documented')],
      });
      expect(answer.status).toBe('completed');
      const result: DepositState = await handle.result();
      expect(result).toMatchObject({ status: 'completed', resolution: { by: 'ops@example.com' } });
      expect(result.return).toBeUndefined();
      expect(result.returnByHand).toBeUndefined();
    });
  });
});

// The API Pix connector against the PSP's emulation (mutual TLS, OAuth), its webhooks taken by
// pixflow's own API Pix listener, which stores them in the inbox and hints the deposit.
describe('a held deposit on an API Pix PSP, which returns received Pix', () => {
  const { EventType } = temporal.api.enums.v1;
  const SECRET = 'return-test-webhook-secret';
  let psp: ApiPixForTest;
  let apiPix: ApiPixConnector;
  let listener: ApiPixListener;
  let queue: string;
  let stopWorker: () => Promise<void>;

  beforeAll(async () => {
    psp = await startApiPixForTest({ returnSettleMs: 300 });
    apiPix = apiPixConnectorOf(psp);
    queue = `${f.taskQueue}-api-pix`;
    listener = await startApiPixListener({
      config: { API_PIX_WEBHOOK_SECRET: SECRET, TEMPORAL_TASK_QUEUE: queue },
      pool: f.pool,
      temporal: f.env.client,
      log: createLogger('api-pix-ingress', 'warn'),
      read: readPixNotifications,
      port: 0,
      host: '127.0.0.1',
      tls: { cert: psp.webhook.serverCert, key: psp.webhook.serverKey, clientCa: psp.webhook.clientCa },
    });
    await apiPix.registerWebhook(`https://localhost:${listener.port}/webhooks/api-pix/${SECRET}`);
    const worker = await createTestWorker({
      connection: f.env.nativeConnection,
      client: f.env.client,
      taskQueue: queue,
      provider: f.provider,
      collectors: connectorRegistry([f.provider, apiPix]),
      pool: f.pool,
      piiKey: TEST_PII_KEY,
    });
    const running = worker.run();
    stopWorker = async () => {
      worker.shutdown();
      await running;
    };
  });
  afterAll(async () => {
    await stopWorker?.();
    await listener?.close();
    apiPix?.close();
    await psp?.close();
  });

  /** A held deposit on the PSP, paid by someone else. */
  async function heldOnApiPix(taskQueue = queue) {
    const input = depositInput();
    const held = await heldOnPsp({
      client: f.env.client,
      psp,
      apiPix,
      taskQueue,
      input,
      payerCpf: OTHER_PAYER,
    });
    return { input, ...held };
  }

  /** The PSP's returns of one received Pix, as its state shows them. */
  const returnsAtPsp = async (e2eId: string) =>
    ((await psp.state()).returns as Array<{ endToEndId: string; id: string; status: string }>).filter(
      (r) => r.endToEndId === e2eId,
    );

  /** Whether the run's wait for its return's outcome ended on a hint (the timer cancelled) or fired. */
  async function returnWaits(handle: WorkflowHandle) {
    const events = (await handle.fetchHistory()).events ?? [];
    return {
      fired: events.filter((e) => e.eventType === EventType.EVENT_TYPE_TIMER_FIRED).length,
      cancelled: events.filter((e) => e.eventType === EventType.EVENT_TYPE_TIMER_CANCELED).length,
    };
  }

  /** A worker routing deposits to the PSP alone, under a connector name of its own (a breaker of its own). */
  async function withRoutedWorker(body: (taskQueue: string, name: string) => Promise<void>) {
    const name = `api-pix-${Date.now().toString(36)}`;
    const routed = apiPixConnectorOf(psp, name);
    const taskQueue = `${queue}-routed-${name}`;
    const worker = await createTestWorker({
      connection: f.env.nativeConnection,
      client: f.env.client,
      taskQueue,
      provider: f.provider,
      collectors: connectorRegistry([f.provider, routed]),
      pool: f.pool,
      piiKey: TEST_PII_KEY,
      policy: staticPolicyReader(
        policyWith({
          deposits: {
            routing: { connectors: [name], breaker: { failures: 5, windowMs: 60_000, coolDownMs: 30_000 } },
          },
        }),
      ),
    });
    const running = worker.run();
    try {
      await body(taskQueue, name);
    } finally {
      worker.shutdown();
      await running;
      routed.close();
    }
  }

  it("a deposit routed to the PSP and paid by someone else is held by the rules, then returned through the PSP on an operator's return", async () => {
    await withRoutedWorker(async (taskQueue, name) => {
      const { input, handle } = await depositOn(taskQueue);
      // Paid at the PSP by someone else: its webhook, through pixflow's listener, wakes the deposit.
      const pix = await psp.pay(toApiPixTxid(input.txid), {
        payer: 'third_party',
        cpf: OTHER_PAYER,
        nome: 'João',
      });
      const held = await waitForState(
        () => handle.query(depositStateQuery),
        (s) => s.status === 'held',
      );
      expect(held).toMatchObject({
        connector: name,
        reason: 'third_party_payer',
        payment: { e2eId: pix.endToEndId },
      });
      const answer = await handle.executeUpdate(resolutionUpdate, {
        args: [await decide(handle.workflowId, 'return', 'payer unknown to the person')],
      });
      expect(answer.status).toBe('return_requested');
      const result: DepositState = await handle.result();
      expect(result).toMatchObject({
        status: 'returned',
        connector: name,
        return: { returnId: depositReturnId(input.txid), state: 'returned', by: 'ops@example.com' },
      });
      expect(await returnsAtPsp(pix.endToEndId)).toEqual([
        expect.objectContaining({ id: depositReturnId(input.txid), status: 'DEVOLVIDO' }),
      ]);
    });
  });

  it('a completed deposit routed to the PSP is returnable from its row; returned on its own flow, its state says so', async () => {
    await withRoutedWorker(async (taskQueue, name) => {
      const { input, handle } = await depositOn(taskQueue);
      const pix = await psp.pay(toApiPixTxid(input.txid));
      const completed = await waitForState(
        () => handle.query(depositStateQuery),
        (s) => s.status === 'completed',
      );
      expect(completed.connector).toBe(name);
      // Offered as the back office offers it: from the person's rows.
      const offeredNow = () =>
        returnableDeposits(f.pool, cpfHash(CLIENT_CPF, TEST_PII_KEY), 'identity-payments');
      const offered = (await offeredNow()).find((d) => d.txid === input.txid);
      expect(offered).toMatchObject({
        connector: name,
        e2eId: pix.endToEndId,
        amountCentavos: input.amountCentavos,
      });
      const d = offered as NonNullable<typeof offered>;
      const proof = await provenDecision(
        f.pool,
        depositReturnWorkflowId(d.txid),
        'deposit.return',
        'ops@example.com',
        {
          decision: 'return',
        },
      );
      const started = await startDepositReturn(f.env.client, taskQueue, {
        txid: d.txid,
        amountCentavos: d.amountCentavos,
        merchant: d.merchant,
        e2eId: d.e2eId,
        connector: d.connector,
        row: { seq: d.seq, details: d.details },
        by: 'ops@example.com',
        decisionId: proof.decisionId,
      });
      await f.env.client.workflow.getHandle(started.workflowId).result();
      // The deposit's run ended completed; its state as the API reads it has the return's.
      const read = await withItsReturn(f.env.client, await handle.query(depositStateQuery));
      expect(read).toMatchObject({
        status: 'returned',
        connector: name,
        return: { returnId: depositReturnId(input.txid), state: 'returned', by: 'ops@example.com' },
      });
      expect(await flowRow(handle.workflowId)).toMatchObject({
        status: 'returned',
        details: { e2eId: pix.endToEndId, connector: name, return: { state: 'returned' } },
      });
      expect((await offeredNow()).map((x) => x.txid)).not.toContain(input.txid);
    });
  });

  it("an operator's return asks the PSP once, even when the ask acted and then failed: returned", async () => {
    const { input, handle, e2eId } = await heldOnApiPix();
    const putsBefore = (await psp.state()).counters.requests.putDevolucao ?? 0;
    // The PSP takes the return, then answers 500: the activity is retried.
    const failed = expectActivityFailure({
      workflowId: handle.workflowId,
      activityType: 'requestDepositReturn',
      error: /./,
    });
    await psp.faults({ actThenFail: { putDevolucao: { mode: 'error', count: 1 } } });
    const answer = await handle.executeUpdate(resolutionUpdate, {
      args: [await decide(handle.workflowId, 'return', 'payer unknown to the person')],
    });
    // Answered once the return is recorded asked; the retry may find it settled already.
    expect(['return_requested', 'returned']).toContain(answer.status);
    const result: DepositState = await handle.result();
    expect(result).toMatchObject({
      status: 'returned',
      reason: 'third_party_payer',
      connector: 'api-pix',
      resolution: { decision: 'return', by: 'ops@example.com' },
      return: {
        returnId: depositReturnId(input.txid),
        amountCentavos: input.amountCentavos,
        state: 'returned',
        by: 'ops@example.com',
        rtrId: expect.stringMatching(/^D/),
        returnedAt: expect.any(String),
      },
    });
    expect(result.returnByHand).toBeUndefined();
    expect(failed()).toHaveLength(1);
    // One devolução at the PSP, asked by one PUT: the retry looked it up and did not ask again.
    expect(await returnsAtPsp(e2eId)).toEqual([
      expect.objectContaining({ id: depositReturnId(input.txid), status: 'DEVOLVIDO' }),
    ]);
    expect((await psp.state()).counters.requests.putDevolucao).toBe(putsBefore + 1);
    expect(await flowRow(handle.workflowId)).toMatchObject({
      status: 'returned',
      details: {
        connector: 'api-pix',
        return: { returnId: depositReturnId(input.txid), state: 'returned', rtrId: result.return?.rtrId },
      },
    });
    const events = await f.pool.query<{ type: string }>(
      'SELECT type FROM events WHERE stream_id = $1 ORDER BY seq',
      [handle.workflowId],
    );
    expect(events.rows.map((e) => e.type)).toEqual(
      expect.arrayContaining(['deposit.held', 'deposit.return_requested', 'deposit.returned']),
    );
  });

  it("the PSP's webhook that the return settled wakes the deposit, which confirms it: returned", async () => {
    const { handle, e2eId } = await heldOnApiPix();
    const answer = await handle.executeUpdate(resolutionUpdate, {
      args: [await decide(handle.workflowId, 'return', 'payer unknown to the person')],
    });
    expect(answer.status).toBe('return_requested');
    const result: DepositState = await handle.result();
    expect(result).toMatchObject({ status: 'returned', return: { state: 'returned' } });
    // The wait for the outcome ended on the hint, before its timer.
    expect(await returnWaits(handle)).toEqual({ fired: 0, cancelled: 1 });
    expect(result.notifications).toBeGreaterThan(1);
    expect(await returnsAtPsp(e2eId)).toHaveLength(1);
    await recordHistory(handle, 'deposit-held-returned-api-pix');
  });

  it('a lost webhook is made up for by the return looked up on its timer: returned', async () => {
    const { handle, e2eId } = await heldOnApiPix();
    // Every webhook lost while it runs: a late one of an earlier test must not take the drop
    // meant for this return's.
    await psp.faults({ webhooks: { dropNext: 1_000, duplicate: 0, delayMs: 0 } });
    let result: DepositState;
    try {
      await handle.executeUpdate(resolutionUpdate, {
        args: [await decide(handle.workflowId, 'return', 'payer unknown to the person')],
      });
      result = await handle.result();
    } finally {
      await psp.faults({ webhooks: { dropNext: 0 } });
    }
    expect(result).toMatchObject({ status: 'returned', return: { state: 'returned' } });
    expect((await returnWaits(handle)).fired).toBeGreaterThanOrEqual(1);
    expect(await returnsAtPsp(e2eId)).toHaveLength(1);
  });

  it('a return the PSP refuses outright (the payer took it all back through MED first) ends return_failed with its reason, asked once', async () => {
    const { handle, e2eId } = await heldOnApiPix();
    await psp.med(e2eId);
    const refused = expectActivityFailure({
      workflowId: handle.workflowId,
      activityType: 'requestDepositReturn',
      error: /./,
    });
    const answer = await handle.executeUpdate(resolutionUpdate, {
      args: [await decide(handle.workflowId, 'return', 'payer unknown to the person')],
    });
    expect(answer.status).toBe('return_failed');
    const result: DepositState = await handle.result();
    expect(result).toMatchObject({
      status: 'return_failed',
      return: { state: 'failed', reason: expect.any(String) },
    });
    expect(result.return?.reason).toMatch(/^BAD_REQUEST: .*PixDevolucaoInvalida/);
    // A refusal is not retried: one attempt, and the PSP holds the MED return alone.
    expect(refused()).toHaveLength(1);
    expect((await returnsAtPsp(e2eId)).map((r) => r.id)).not.toContain(result.return?.returnId);
  });

  it('a return the PSP does not make (NAO_REALIZADO) ends return_failed with its reason', async () => {
    const { handle } = await heldOnApiPix();
    await psp.faults({ failReturnsNext: 1, failReturnsReason: 'Conta do pagador encerrada' });
    await handle.executeUpdate(resolutionUpdate, {
      args: [await decide(handle.workflowId, 'return', 'payer unknown to the person')],
    });
    const result: DepositState = await handle.result();
    expect(result).toMatchObject({
      status: 'return_failed',
      return: { state: 'failed', reason: 'Conta do pagador encerrada' },
    });
    expect(await flowRow(handle.workflowId)).toMatchObject({
      status: 'return_failed',
      details: { return: { state: 'failed', reason: 'Conta do pagador encerrada' } },
    });
    await recordHistory(handle, 'deposit-held-return-failed-api-pix');
  });

  it("a completed deposit's money goes back on a short flow of its own, asked once, on the deposit's row: returned, its payment kept", async () => {
    const input = depositInput();
    await apiPix.createCharge({
      txid: input.txid,
      amountCentavos: input.amountCentavos,
      payer: input.client,
    });
    const pix = await psp.pay(toApiPixTxid(input.txid));
    const depositId = depositWorkflowId(input.txid);
    // The deposit's row as its run left it: completed on the PSP, paid by the person.
    const details = {
      e2eId: pix.endToEndId as string,
      paidAt: '2026-11-28T03:00:00.000Z',
      payerIsClient: true,
      connector: 'api-pix',
    };
    await upsertFlowAndEvent(f.pool, {
      workflowId: depositId,
      type: 'deposit',
      businessId: input.txid,
      status: 'completed',
      cpfHash: cpfHash(CLIENT_CPF, TEST_PII_KEY),
      cpfMasked: maskCpf(CLIENT_CPF),
      merchant: input.merchant,
      amountCentavos: input.amountCentavos,
      reason: null,
      details,
      seq: 3,
      at: new Date(),
      runId: 'the-deposit-run',
    });
    const unproven: DepositReturnInput = {
      txid: input.txid,
      amountCentavos: input.amountCentavos,
      merchant: input.merchant,
      e2eId: details.e2eId,
      connector: 'api-pix',
      row: { seq: 3, details },
      by: 'ops@example.com',
    };
    // Started straight on Temporal, naming no decision the back office recorded: nothing is asked.
    const refusalLogged = expectSdkLog((x) => x.message === 'decision refused');
    const forged = await f.env.client.workflow.start('depositReturnWorkflow', {
      workflowId: `forged-${depositReturnWorkflowId(input.txid)}`,
      taskQueue: queue,
      args: [unproven],
    });
    expect(((await forged.result()) as DepositState).status).toBe('completed');
    expect(await refusedDecisionsOf(f.pool, forged.workflowId)).toEqual({ unproven: 1 });
    expect(refusalLogged()).toHaveLength(1);
    expect(await returnsAtPsp(details.e2eId)).toHaveLength(0);
    expect((await flowRow(depositId)).status).toBe('completed');

    const proof = await provenDecision(
      f.pool,
      depositReturnWorkflowId(input.txid),
      'deposit.return',
      'ops@example.com',
      {
        decision: 'return',
      },
    );
    const askWithProof: DepositReturnInput = { ...unproven, decisionId: proof.decisionId };
    expect((await startDepositReturn(f.env.client, queue, askWithProof)).outcome).toBe('started');
    // Asked again (a second click, another operator): the same return, nothing new.
    expect(await startDepositReturn(f.env.client, queue, askWithProof)).toEqual({
      outcome: 'already',
      workflowId: depositReturnWorkflowId(input.txid),
    });
    const handle = f.env.client.workflow.getHandle(depositReturnWorkflowId(input.txid));
    const result: DepositState = await handle.result();
    expect(result).toMatchObject({
      status: 'returned',
      return: { returnId: depositReturnId(input.txid), state: 'returned', by: 'ops@example.com' },
    });
    expect(await flowRow(depositId)).toMatchObject({
      status: 'returned',
      details: { ...details, return: { state: 'returned', rtrId: result.return?.rtrId } },
    });
    const events = await f.pool.query<{ type: string }>(
      'SELECT type FROM events WHERE stream_id = $1 ORDER BY seq',
      [depositId],
    );
    expect(events.rows.map((e) => e.type)).toEqual([
      'deposit.completed',
      'deposit.return_requested',
      'deposit.returned',
    ]);
    expect(await returnsAtPsp(details.e2eId)).toHaveLength(1);
    expect((await startDepositReturn(f.env.client, queue, askWithProof)).outcome).toBe('already');
    await recordHistory(handle, 'deposit-return-completed-api-pix');
  });

  it('with no operator within the review delay, the rules return it through the PSP under their version', async () => {
    await withAutoReturn(
      1_500,
      async (taskQueue) => {
        const { handle, e2eId } = await heldOnApiPix(taskQueue);
        const result: DepositState = await handle.result();
        expect(result).toMatchObject({
          status: 'returned',
          resolution: { decision: 'return', by: 'rules', policyVersion: 7 },
          return: { state: 'returned', by: 'rules', policyVersion: 7 },
        });
        expect(await returnsAtPsp(e2eId)).toHaveLength(1);
        await recordHistory(handle, 'deposit-held-auto-returned-api-pix');
      },
      apiPix,
    );
  });
});
