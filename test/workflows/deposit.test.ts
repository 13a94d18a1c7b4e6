import {
  WithStartWorkflowOperation,
  type WorkflowHandle,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { ApplicationFailure, type Payload } from '@temporalio/common';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { payerIsClient } from '../../activities/deposit';
import { FlowStatusKey } from '../../common/search-attributes';
import { UnclassifiedAnswerError } from '../../connectors/errors';
import {
  DEPOSIT_REFUSED,
  type DepositFingerprint,
  type DepositInput,
  depositStateQuery,
  depositWorkflowId,
  qrCodeUpdate,
  resolutionUpdate,
} from '../../contracts/deposit';
import { providerNotificationSignal } from '../../contracts/flow';
import { verifiedDepositor } from '../helpers/customers';
import {
  downAtFirst,
  type FlowEnv,
  onOwnWorker,
  startFlowEnv,
  TEST_PII_KEY,
  waitForState,
} from '../helpers/flow-env';
import { historyBytes, patchMarkers, recordHistory } from '../helpers/histories';
import { newCpf } from '../helpers/people';
import { expectActivityFailure, expectSdkLog } from '../helpers/sdk-log';
import { testDataConverter } from '../helpers/temporal';
import { defaultRules } from '../helpers/worker';

// Deposits on the time-skipping server, with the real activities against the sandbox.

let f: FlowEnv;
let n = 0;

/** The person of these deposits, verified: the rules let their deposits through. */
/** The depositor: a CPF of this run's own, which no other test file's onboarding moves. */
const PERSON = newCpf();

beforeAll(async () => {
  f = await startFlowEnv();
  await verifiedDepositor(f.pool, TEST_PII_KEY, PERSON);
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
    client: { externalId: `user-${n}`, cpf: PERSON, email: 'ana@example.com', name: 'Ana Souza' },
    amountCentavos: 15_000,
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

function answerQr(
  input: DepositInput,
  asked: DepositFingerprint = fingerprint(input),
  requestId = 'req-1',
  taskQueue = f.taskQueue,
) {
  return f.env.client.workflow.executeUpdateWithStart(qrCodeUpdate, {
    args: [{ ...asked, requestId }],
    startWorkflowOperation: new WithStartWorkflowOperation('depositWorkflow', {
      workflowId: depositWorkflowId(input.txid),
      taskQueue,
      args: [{ ...input, requestId }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
}

const pay = (txid: string, payerCpf = PERSON) =>
  f.sandboxControl(`/sandbox/deposits/${txid}/pay`, { payerName: 'Ana Souza', payerCpf });
const handleOf = (input: DepositInput) => f.env.client.workflow.getHandle(depositWorkflowId(input.txid));

/** Someone who is not the person. */
const OTHER_PAYER = '52998224725';

/** Every payload of the flow's history, opened with the codec, as one text. */
async function plainHistory(handle: WorkflowHandle): Promise<string> {
  const history = await handle.fetchHistory();
  const codec = testDataConverter.payloadCodecs[0]!;
  const texts: string[] = [];
  const walk = async (node: unknown): Promise<void> => {
    if (!node || typeof node !== 'object' || ArrayBuffer.isView(node)) return;
    const maybe = node as Payload;
    if (maybe.metadata && maybe.data) {
      const [open] = await codec.decode([maybe]);
      texts.push(Buffer.from(open?.data ?? []).toString());
      return;
    }
    for (const value of Object.values(node)) await walk(value);
  };
  await walk(history);
  return texts.join('\n');
}

/** The flow's inquiries by where they ran: local activities (their markers) and activity tasks. */
async function inquiriesOf(handle: WorkflowHandle) {
  const events = (await handle.fetchHistory()).events ?? [];
  const typeOf = (e: (typeof events)[number]) => {
    const data = e.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data;
    return data
      ? (JSON.parse(Buffer.from(data).toString()) as { activity_type?: string }).activity_type
      : undefined;
  };
  return {
    local: events.filter((e) => typeOf(e) === 'inquireDepositAndRecordCompleted').length,
    tasks: events.filter(
      (e) =>
        e.activityTaskScheduledEventAttributes?.activityType?.name === 'inquireDepositAndRecordCompleted',
    ).length,
  };
}

/** The API's update-with-start, to a flow on `taskQueue`. */
const startOn = (taskQueue: string, input: DepositInput) =>
  answerQr(input, fingerprint(input), 'req-1', taskQueue);

describe('deposit flow', () => {
  it('returns the QR at once, then completes on the notification, confirmed by the inquiry', async () => {
    const input = depositInput();
    const qr = await createWithQr(input);
    expect(qr.txid).toBe(input.txid);
    expect(qr.amountCentavos).toBe(15_000);
    expect(qr.payload).toMatch(/^000201/);
    // The image is drawn by the API from the payload: none of its kilobytes enter history.
    expect(qr).not.toHaveProperty('image');
    const handle = handleOf(input);
    expect((await handle.query(depositStateQuery)).status).toBe('awaiting_payment');
    // The QR's local activity wrote the flows row too: the row is there when the answer arrives,
    // and the flow has run the rules' and the QR's local activities (two markers), not a third
    // for the row.
    const { rows } = await f.pool.query('SELECT status, seq FROM flows WHERE workflow_id = $1', [
      handle.workflowId,
    ]);
    expect(rows).toEqual([{ status: 'awaiting_payment', seq: 1 }]);
    const markers = ((await handle.fetchHistory()).events ?? []).filter(
      (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
    );
    expect(markers).toHaveLength(2);

    await pay(input.txid);
    await handle.signal(providerNotificationSignal, { type: 'deposit', action: 'updated', id: input.txid });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.payment?.e2eId).toMatch(/\w+/);
    expect(result.payment?.payerCpfMasked).toBe(`***.${PERSON.slice(3, 6)}.${PERSON.slice(6, 9)}-**`);
    expect(result.notifications).toBe(1);
    // The hint's inquiry ran in the task the hint woke, as a local activity: no activity task.
    expect(await inquiriesOf(handle)).toEqual({ local: 1, tasks: 0 });
    // That inquiry also wrote the completed row, with the payment's details: three local
    // activities in all, none of its own for the last row.
    const allMarkers = ((await handle.fetchHistory()).events ?? []).filter(
      (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
    );
    expect(allMarkers).toHaveLength(3);
    const done = await f.pool.query('SELECT status, seq, details FROM flows WHERE workflow_id = $1', [
      handle.workflowId,
    ]);
    expect(done.rows).toEqual([
      {
        status: 'completed',
        seq: 2,
        details: {
          // The connector that made the charge, which its inquiries asked.
          connector: 'identity-payments',
          policyVersion: 1,
          e2eId: result.payment?.e2eId,
          paidAt: result.payment?.paidAt,
          payerIsClient: true,
        },
      },
    ]);
    // Encrypted payloads included: a paid deposit's history fits in 6 KB.
    expect(await historyBytes(handle)).toBeLessThanOrEqual(6 * 1024);
    await recordHistory(handle, 'deposit-paid');
  });

  it("shows no status in PixflowStatus, but keeps current one an earlier release's API set at its start", async () => {
    const statusesShown = async (handle: WorkflowHandle) =>
      ((await handle.fetchHistory()).events ?? []).flatMap((e) => {
        const field =
          e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.[
            FlowStatusKey.name
          ];
        return field?.data ? [JSON.parse(Buffer.from(field.data).toString()) as string] : [];
      });
    const payAndFinish = async (input: DepositInput) => {
      const handle = handleOf(input);
      await pay(input.txid);
      await handle.signal(providerNotificationSignal, { type: 'deposit', action: 'updated', id: input.txid });
      expect((await handle.result()).status).toBe('completed');
      return handle;
    };
    const plain = depositInput();
    await createWithQr(plain);
    const quiet = await payAndFinish(plain);
    expect(await statusesShown(quiet)).toEqual([]);
    expect((await quiet.describe()).typedSearchAttributes.get(FlowStatusKey)).toBeUndefined();

    // The API of the release before set the first status at the start: the run keeps it true.
    // (The wait for the first one's result may have skipped time: the QR's clock follows.)
    await f.syncSandboxClock();
    const earlier = depositInput();
    await f.env.client.workflow.executeUpdateWithStart(qrCodeUpdate, {
      args: [{ ...fingerprint(earlier), requestId: 'req-1' }],
      startWorkflowOperation: new WithStartWorkflowOperation('depositWorkflow', {
        workflowId: depositWorkflowId(earlier.txid),
        taskQueue: f.taskQueue,
        args: [{ ...earlier, requestId: 'req-1' }],
        workflowIdConflictPolicy: 'USE_EXISTING',
        typedSearchAttributes: [{ key: FlowStatusKey, value: 'creating' }],
      }),
    });
    const kept = await payAndFinish(earlier);
    expect(await statusesShown(kept)).toEqual(['awaiting_payment', 'completed']);
    expect((await kept.describe()).typedSearchAttributes.get(FlowStatusKey)).toBe('completed');
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
      async lookUpDeposit(txid: string) {
        const tx = await f.provider.lookUpDeposit(txid);
        calls += 1;
        if (calls === 1) {
          firstRead();
          await held;
        }
        return tx;
      },
    };
    await onOwnWorker(f, 'held', { provider }, async (queue) => {
      const input = depositInput();
      await startOn(queue, input);
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
    });
  });

  it("paid with every hint lost (no notification, no reconciliation): the look at the QR's expiry finds it", async () => {
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

  it("never paid: one look at the QR's expiry (reconciliation's looks are outside the flow), then expired", async () => {
    const input = depositInput();
    const qr = await createWithQr(input);
    const result = await handleOf(input).result();
    expect(result.status).toBe('expired');
    expect(result.reason).toBe('qr_expired_unpaid');
    expect(new Date(result.finishedAt!).getTime()).toBeGreaterThanOrEqual(new Date(qr.expiresAt).getTime());
    // Nothing woke it before the QR expired: one inquiry, the last look.
    expect(result.inquiries).toBe(1);
    expect(await inquiriesOf(handleOf(input))).toEqual({ local: 1, tasks: 0 });
    await recordHistory(handleOf(input), 'deposit-expired-one-look');
  });

  it('a txid the provider refuses ends failed and the update reports it', async () => {
    const input = depositInput();
    // Occupy the txid at the provider with another body: our create is then a 409 DUPLICATE_TRANSACTION.
    await f.provider.createCharge({ payer: input.client, amountCentavos: 1, txid: input.txid });
    const refused = expectActivityFailure({
      workflowId: depositWorkflowId(input.txid),
      activityType: 'createChargeAndRecordAwaitingPayment',
      error: /duplicate transaction/,
    });
    await expect(createWithQr(input)).rejects.toThrow();
    const result = await handleOf(input).result();
    expect(result).toMatchObject({ status: 'failed', reason: 'DUPLICATE_TRANSACTION' });
    expect(refused()).toHaveLength(1);
  });
});

describe('a deposit the rules refuse', () => {
  it('ends refused in its first task, before the provider hears of it: reason and policy version in its state, row and update failure', async () => {
    // Nobody onboarded this person: deposits need a verified one.
    const input = depositInput({
      client: { externalId: 'user-x', cpf: newCpf(), email: 'x@example.com', name: 'Xavier Lima' },
    });
    const failed = await answerQr(input).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(WorkflowUpdateFailedError);
    const cause = (failed as WorkflowUpdateFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe(DEPOSIT_REFUSED);
    expect((cause as ApplicationFailure).details?.[0]).toEqual({
      reason: 'not_verified',
      verification: 'none',
      policyVersion: 1,
    });
    const result = await handleOf(input).result();
    expect(result).toMatchObject({
      status: 'refused',
      reason: 'not_verified',
      policyVersion: 1,
      refusal: { reason: 'not_verified', verification: 'none' },
    });
    expect(result.qr).toBeUndefined();
    const { rows } = await f.pool.query('SELECT status, reason, details FROM flows WHERE workflow_id = $1', [
      depositWorkflowId(input.txid),
    ]);
    expect(rows).toMatchObject([
      { status: 'refused', reason: 'not_verified', details: { policyVersion: 1 } },
    ]);
    // Nothing was created at the provider for its txid.
    expect(await f.provider.lookUpDeposit(input.txid)).toEqual({ state: 'not_found' });
    await recordHistory(handleOf(input), 'deposit-refused');
  });
});

describe('deposit paid by someone else', () => {
  it('the payer is the person when the CPFs are the same digits, or when the payer CPF is empty', () => {
    expect(payerIsClient('63401825771', '63401825771')).toBe(true);
    expect(payerIsClient('634.018.257-71', '63401825771')).toBe(true);
    expect(payerIsClient('', '63401825771')).toBe(true);
    expect(payerIsClient(undefined, '63401825771')).toBe(true);
    expect(payerIsClient(OTHER_PAYER, '63401825771')).toBe(false);
  });

  it('a resolution for a deposit that is not held is refused and changes nothing', async () => {
    const input = depositInput();
    await createWithQr(input);
    const handle = handleOf(input);
    const err = await handle
      .executeUpdate(resolutionUpdate, { args: [{ decision: 'accept', by: 'ops', reason: 'why not' }] })
      .catch((e: Error) => e);
    expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((err as WorkflowUpdateFailedError).cause?.message).toBe(
      'the deposit is awaiting_payment: only a held deposit takes a resolution',
    );
    const state = await handle.query(depositStateQuery);
    expect(state.status).toBe('awaiting_payment');
    expect(state.resolution).toBeUndefined();
    // Paid by the person, it completes at once: never held.
    await pay(input.txid);
    await handle.signal(providerNotificationSignal, { type: 'deposit', action: 'updated', id: input.txid });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.payment?.payerIsClient).toBe(true);
    // The 1.0 baseline: no patch marker.
    expect(await patchMarkers(handle)).toEqual([]);
    expect(await plainHistory(handle)).not.toContain(OTHER_PAYER);
  });

  it("paid with no payer CPF (the contract allows it empty): the person's own, completed", async () => {
    const input = depositInput();
    await createWithQr(input);
    const handle = handleOf(input);
    await pay(input.txid, '');
    await handle.signal(providerNotificationSignal, { type: 'deposit', action: 'updated', id: input.txid });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.payment?.payerIsClient).toBe(true);
    expect(result.payment?.payerCpfMasked).toBeUndefined();
  });

  it('with HOLD_THIRD_PARTY_DEPOSITS off, a payment by someone else is credited, and says so', async () => {
    await onOwnWorker(
      f,
      'no-hold',
      { rules: { ...defaultRules(), holdThirdPartyDeposits: false } },
      async (queue) => {
        const input = depositInput();
        await startOn(queue, input);
        const handle = handleOf(input);
        await pay(input.txid, OTHER_PAYER);
        await handle.signal(providerNotificationSignal, {
          type: 'deposit',
          action: 'updated',
          id: input.txid,
        });
        const done = await waitForState(
          () => handle.query(depositStateQuery),
          (s) => s.status === 'completed',
        );
        expect(done.payment?.payerIsClient).toBe(false);
        expect(done.reason).toBeUndefined();
      },
    );
  });

  it('an inquiry status pixflow cannot read is never "unpaid": the deposit waits, with an alert, until one it reads', async () => {
    let unreadable = true;
    let calls = 0;
    const provider = {
      ...f.provider,
      async lookUpDeposit(txid: string) {
        calls += 1;
        if (unreadable) {
          throw new UnclassifiedAnswerError(
            'provider deposit_inquiry: status "QUASE" is not a value pixflow knows',
            {
              op: 'deposit_inquiry',
              field: 'status',
            },
          );
        }
        return f.provider.lookUpDeposit(txid);
      },
    };
    await onOwnWorker(f, 'inquiry-unreadable', { provider }, async (queue) => {
      const input = depositInput();
      await startOn(queue, input);
      const handle = handleOf(input);
      const failed = expectActivityFailure({
        workflowId: handle.workflowId,
        activityType: 'inquireDepositAndRecordCompleted',
        error: /is not a value pixflow knows/,
      });
      const told = expectSdkLog(
        ({ message, meta }) =>
          message.startsWith('provider answer pixflow cannot read') && meta.workflowId === handle.workflowId,
      );
      await pay(input.txid);
      await handle.signal(providerNotificationSignal, { type: 'deposit', action: 'updated', id: input.txid });
      await waitForState(
        () => Promise.resolve(calls),
        (c) => c >= 5,
      );
      expect((await handle.query(depositStateQuery)).status).toBe('awaiting_payment');
      const { rows } = await f.pool.query(
        `SELECT facts FROM alerts WHERE rule = 'provider_unclassified' AND flow_id = $1`,
        [handle.workflowId],
      );
      expect(rows).toEqual([{ facts: { op: 'deposit_inquiry', field: 'status' } }]);
      unreadable = false;
      expect((await handle.result()).status).toBe('completed');
      expect(failed().length).toBeGreaterThanOrEqual(1);
      expect(told().map((e) => e.meta.field)).toContain('status');
    });
  });

  it('an inquiry the provider fails three times here is made through the server, and the payment is found', async () => {
    const lookUpDeposit = downAtFirst(3, f.provider.lookUpDeposit.bind(f.provider));
    const provider = { ...f.provider, lookUpDeposit: lookUpDeposit.call };
    await onOwnWorker(f, 'inquiry-falls-back', { provider }, async (queue) => {
      const input = depositInput();
      await startOn(queue, input);
      const handle = handleOf(input);
      const failed = expectActivityFailure({
        workflowId: handle.workflowId,
        activityType: 'inquireDepositAndRecordCompleted',
        error: /provider down/,
      });
      await pay(input.txid);
      await handle.signal(providerNotificationSignal, { type: 'deposit', action: 'updated', id: input.txid });
      const done = await waitForState(
        () => handle.query(depositStateQuery),
        (s) => s.status === 'completed',
      );
      expect(done).toMatchObject({ status: 'completed', inquiries: 1 });
      expect(lookUpDeposit.calls()).toBe(4);
      expect(failed()).toHaveLength(3);
      // The local activity's three attempts are one marker (its failure); the activity task succeeded.
      expect(await inquiriesOf(handle)).toEqual({ local: 1, tasks: 1 });
    });
  });
});
