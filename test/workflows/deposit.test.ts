import { WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type DepositFingerprint,
  type DepositInput,
  depositStateQuery,
  depositWorkflowId,
  qrCodeUpdate,
} from '../../contracts/deposit';
import { providerNotificationSignal } from '../../contracts/shared';
import { type FlowEnv, startFlowEnv, TEST_PII_KEY, waitForState } from '../helpers/flow-env';
import { recordHistory } from '../helpers/histories';
import { expectActivityFailure } from '../helpers/sdk-log';
import { createTestWorker } from '../helpers/worker';

// Deposits on the time-skipping server, with the real activities against the sandbox.

let f: FlowEnv;
let n = 0;

beforeAll(async () => {
  f = await startFlowEnv();
});
afterAll(async () => {
  await f?.close();
});
// Each test starts at the server's (skipped) time: QR expiries are made by the sandbox's clock.
beforeEach(async () => {
  await f.syncSandboxClock();
});

function depositInput(over: Partial<DepositInput> = {}): DepositInput {
  n += 1;
  return {
    txid: `${Date.now()}${n}`,
    merchant: 'sandbox-merchant',
    client: { externalId: `user-${n}`, cpf: '63401825771', email: 'ana@example.com', name: 'Ana Souza' },
    amountCentavos: 15_000,
    timings: { pollScheduleMs: [60_000, 120_000, 300_000] },
    ...over,
  };
}

const fingerprint = (i: DepositInput): DepositFingerprint => ({
  amountCentavos: i.amountCentavos,
  payerCpf: i.client.cpf,
  merchant: i.merchant,
});

/** What the API does: start-or-attach and get the QR in one round trip. */
async function createWithQr(input: DepositInput, asked: DepositFingerprint = fingerprint(input)) {
  return (await answerQr(input, asked)).qr;
}

function answerQr(input: DepositInput, asked: DepositFingerprint = fingerprint(input), requestId = 'req-1') {
  return f.env.client.workflow.executeUpdateWithStart(qrCodeUpdate, {
    args: [{ ...asked, requestId }],
    startWorkflowOperation: new WithStartWorkflowOperation('depositWorkflow', {
      workflowId: depositWorkflowId(input.txid),
      taskQueue: f.taskQueue,
      args: [{ ...input, requestId }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
}

const pay = (txid: string) =>
  f.sandboxControl(`/sandbox/deposits/${txid}/pay`, { payerName: 'Ana Souza', payerCpf: '63401825771' });
const handleOf = (input: DepositInput) => f.env.client.workflow.getHandle(depositWorkflowId(input.txid));

describe('deposit flow', () => {
  it('returns the QR at once, then completes on the notification, confirmed by the inquiry', async () => {
    const input = depositInput();
    const qr = await createWithQr(input);
    expect(qr.txid).toBe(input.txid);
    expect(qr.amountCentavos).toBe(15_000);
    expect(qr.payload).toMatch(/^000201/);
    expect(qr.image).toMatch(/^data:image\/png;base64,/);
    const handle = handleOf(input);
    expect((await handle.query(depositStateQuery)).status).toBe('awaiting_payment');
    // The QR's local activity wrote the flows row too: the row is there when the answer arrives,
    // and the flow has run that one local activity (one marker), not a second for the row.
    const { rows } = await f.pool.query('SELECT status, seq FROM flows WHERE workflow_id = $1', [
      handle.workflowId,
    ]);
    expect(rows).toEqual([{ status: 'awaiting_payment', seq: 1 }]);
    const markers = ((await handle.fetchHistory()).events ?? []).filter(
      (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
    );
    expect(markers).toHaveLength(1);

    await pay(input.txid);
    await handle.signal(providerNotificationSignal, { type: 'deposit', action: 'updated', id: input.txid });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.payment?.e2eId).toMatch(/\w+/);
    expect(result.payment?.payerCpfMasked).toBe('***.018.257-**');
    expect(result.notifications).toBe(1);
    await recordHistory(handle, 'deposit-paid');
  });

  it('the same txid and request answers the same QR; another amount is a conflict', async () => {
    const input = depositInput();
    const first = await answerQr(input, fingerprint(input), 'req-first');
    const again = await answerQr(input, fingerprint(input), 'req-again');
    // Only the request that started the flow is told it created it (the API's 201 against 200).
    expect(first.created).toBe(true);
    expect(again.created).toBe(false);
    expect(again.qr).toEqual(first.qr);
    for (const asked of [
      { ...fingerprint(input), amountCentavos: 99 },
      { ...fingerprint(input), payerCpf: '53868402586' },
    ]) {
      const err = await createWithQr(input, asked).catch((e: Error) => e);
      expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
      expect((err as WorkflowUpdateFailedError).cause?.message).toMatch(/different deposit/);
    }
  });

  it('a notification is only a hint: unpaid at the inquiry, the flow keeps waiting', async () => {
    const input = depositInput();
    await createWithQr(input);
    const handle = handleOf(input);
    await handle.signal(providerNotificationSignal, { type: 'deposit', action: 'updated', id: input.txid });
    const waiting = await waitForState(
      () => handle.query(depositStateQuery),
      (s) => s.inquiries >= 1,
    );
    expect(waiting.status).toBe('awaiting_payment');
    await pay(input.txid);
    await handle.signal(providerNotificationSignal, { type: 'deposit', action: 'updated', id: input.txid });
    expect((await handle.result()).status).toBe('completed');
    await recordHistory(handle, 'deposit-hint-then-paid');
  });

  it('a hint that arrives while the flow is inquiring makes it look again after that inquiry', async () => {
    // The first inquiry reads "unpaid", then is held while the deposit is paid and a second
    // hint arrives; only a look after that inquiry can see the payment.
    let releaseFirst: () => void = () => {};
    const held = new Promise<void>((r) => {
      releaseFirst = r;
    });
    let firstRead: () => void = () => {};
    const readUnpaid = new Promise<void>((r) => {
      firstRead = r;
    });
    let calls = 0;
    const provider = {
      ...f.provider,
      async getDeposit(txid: string) {
        const tx = await f.provider.getDeposit(txid);
        calls += 1;
        if (calls === 1) {
          firstRead();
          await held;
        }
        return tx;
      },
    };
    const taskQueue = `${f.taskQueue}-held`;
    const worker = await createTestWorker({
      connection: f.env.nativeConnection,
      client: f.env.client,
      taskQueue,
      provider,
      pool: f.pool,
      piiKey: TEST_PII_KEY,
    });
    const running = worker.run();
    try {
      const input = depositInput();
      await f.env.client.workflow.executeUpdateWithStart(qrCodeUpdate, {
        args: [{ ...fingerprint(input), requestId: 'req-1' }],
        startWorkflowOperation: new WithStartWorkflowOperation('depositWorkflow', {
          workflowId: depositWorkflowId(input.txid),
          taskQueue,
          args: [{ ...input, requestId: 'req-1' }],
          workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      });
      const handle = handleOf(input);
      const hint = { type: 'deposit', action: 'updated', id: input.txid } as const;
      await handle.signal(providerNotificationSignal, hint);
      await readUnpaid;
      await pay(input.txid);
      await handle.signal(providerNotificationSignal, hint);
      releaseFirst();
      const done = await waitForState(
        () => handle.query(depositStateQuery),
        (s) => s.status === 'completed',
      );
      expect(done).toMatchObject({ status: 'completed', inquiries: 2, notifications: 2 });
      // Both looks were woken by hints: no reconciliation timer fired.
      const events = (await handle.fetchHistory()).events ?? [];
      expect(events.filter((e) => e.timerFiredEventAttributes)).toHaveLength(0);
    } finally {
      worker.shutdown();
      await running;
    }
  });

  it('paid with the notification lost: reconciliation finds it by polling', async () => {
    const input = depositInput();
    await createWithQr(input);
    await pay(input.txid);
    const result = await handleOf(input).result();
    expect(result.status).toBe('completed');
    expect(result.notifications).toBe(0);
    expect(result.inquiries).toBeGreaterThanOrEqual(1);
  });

  it('a notification repeated five times completes it once', async () => {
    const input = depositInput();
    await createWithQr(input);
    await pay(input.txid);
    const handle = handleOf(input);
    for (let i = 0; i < 5; i++) {
      await handle.signal(providerNotificationSignal, { type: 'deposit', action: 'updated', id: input.txid });
    }
    const result = await handle.result();
    expect(result.status).toBe('completed');
    const { rows } = await f.pool.query('SELECT status FROM flows WHERE workflow_id = $1', [
      handle.workflowId,
    ]);
    expect(rows).toEqual([{ status: 'completed' }]);
  });

  it('never paid: checks once more after the QR expiry, then ends expired', async () => {
    const input = depositInput();
    const qr = await createWithQr(input);
    const result = await handleOf(input).result();
    expect(result.status).toBe('expired');
    expect(result.reason).toBe('qr_expired_unpaid');
    expect(new Date(result.finishedAt!).getTime()).toBeGreaterThanOrEqual(new Date(qr.expiresAt).getTime());
    // 30 minutes on the schedule 1, 2, 5, 5, ... minutes, plus the last look after expiry.
    expect(result.inquiries).toBeGreaterThanOrEqual(7);
    await recordHistory(handleOf(input), 'deposit-expired');
  });

  it('a txid the provider refuses ends failed and the update reports it', async () => {
    const input = depositInput();
    // Occupy the txid at the provider with another body: our create is then a 409 DUPLICATE_TRANSACTION.
    await f.provider.createDeposit({ client: input.client, amountCentavos: 1, txid: input.txid });
    const refused = expectActivityFailure({
      workflowId: depositWorkflowId(input.txid),
      activityType: 'createDepositQr',
      error: /duplicate transaction/,
    });
    await expect(createWithQr(input)).rejects.toThrow();
    const result = await handleOf(input).result();
    expect(result).toMatchObject({ status: 'failed', reason: 'DUPLICATE_TRANSACTION' });
    expect(refused()).toHaveLength(1);
  });
});
