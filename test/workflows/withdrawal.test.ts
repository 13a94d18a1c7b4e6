import { generate as generateCpf } from '@fnando/cpf';
import {
  WithStartWorkflowOperation,
  type WorkflowHandle,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpfHash } from '../../common/pii';
import { biometricsWorkflowId } from '../../contracts/biometrics';
import { providerNotificationSignal } from '../../contracts/flow';
import {
  type WithdrawalInput,
  withdrawalRequestUpdate,
  withdrawalStateQuery,
  withdrawalWorkflowId,
} from '../../contracts/withdrawal';
import { verifiedWithKnownPayee } from '../helpers/customers';
import {
  downAtFirst,
  type FlowEnv,
  onOwnWorker,
  startFlowEnv,
  TEST_PII_KEY,
  waitForState,
} from '../helpers/flow-env';
import { historyBytes, patchMarkers, recordHistory } from '../helpers/histories';
import { expectActivityFailure, expectSdkLog } from '../helpers/sdk-log';
import { defaultPayoutControls } from '../helpers/worker';

// Withdrawals on the time-skipping server, with the real activities against the sandbox.

let f: FlowEnv;
let n = 0;

beforeAll(async () => {
  // A short provider timeout lets the "acts, then answers too late" fault look like a timeout.
  f = await startFlowEnv({ providerTimeoutMs: 1_000 });
});
afterAll(async () => {
  await f?.close();
});

const CPF = generateCpf();

function withdrawalInput(over: Partial<WithdrawalInput> = {}): WithdrawalInput {
  n += 1;
  return {
    transactionId: `wd-${Date.now()}-${n}`,
    merchant: 'sandbox-merchant',
    client: { externalId: `user-${n}`, cpf: CPF, email: 'ana@example.com', name: 'Ana Souza' },
    pixKey: 'ana@example.com',
    pixType: 'EMAIL',
    amountCentavos: 25_050,
    ...over,
  };
}

/** Starts a withdrawal the money rules let through: a verified person paying to a known payee. */
async function start(input: WithdrawalInput) {
  await verifiedWithKnownPayee(f.pool, TEST_PII_KEY, input);
  return startUnprepared(input);
}

function startUnprepared(input: WithdrawalInput) {
  return f.env.client.workflow.start('withdrawalWorkflow', {
    taskQueue: f.taskQueue,
    workflowId: withdrawalWorkflowId(input.transactionId),
    args: [input],
  });
}

async function sandboxState() {
  const res = await fetch(`${f.sandbox.url}/sandbox/state`);
  return (await res.json()) as {
    counters: { payouts: Record<string, number>; requests: Record<string, number> };
    faults: unknown;
  };
}

/** The names of the activities a flow ran through the server, in order. */
async function scheduledActivities(handle: WorkflowHandle) {
  const events = (await handle.fetchHistory()).events ?? [];
  return events
    .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
    .filter((name): name is string => Boolean(name));
}

/** The flow's status events in the outbox, in order. */
async function statusEvents(workflowId: string): Promise<string[]> {
  const { rows } = await f.pool.query(
    `SELECT type FROM events WHERE stream_id = $1 AND type NOT LIKE 'withdrawal.deadline_%' ORDER BY seq`,
    [workflowId],
  );
  return rows.map((r: { type: string }) => r.type);
}

const processing = (handle: WorkflowHandle) =>
  waitForState(
    () => handle.query(withdrawalStateQuery),
    (s) => s.status === 'processing',
  );

/** Once the payout is processing: the provider settles it and its notification arrives. */
async function settleAndNotify(handle: WorkflowHandle, transactionId: string) {
  await processing(handle);
  await f.sandboxControl(`/sandbox/withdrawals/${transactionId}/settle`);
  await handle.signal(providerNotificationSignal, { type: 'withdraw', action: 'updated', id: transactionId });
}

describe('withdrawal flow', () => {
  it('completes with its receipt stored, retrying while the receipt is empty', async () => {
    await f.sandboxControl('/sandbox/faults', { receiptLagCalls: 2 });
    const input = withdrawalInput();
    const notReady = expectActivityFailure({
      workflowId: withdrawalWorkflowId(input.transactionId),
      activityType: 'storeReceipt',
      error: /receipt of .* not ready yet/,
    });
    const handle = await start(input);
    await settleAndNotify(handle, input.transactionId);
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', receiptStored: true, receiptStatus: 4 });
    const { rows } = await f.pool.query('SELECT image FROM withdrawal_receipts WHERE transaction_id = $1', [
      input.transactionId,
    ]);
    const png = rows[0].image as Buffer;
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect((await sandboxState()).counters.payouts[input.transactionId]).toBe(1);
    // The receipt was not ready when the look (here, a local activity) saw the payout completed:
    // storeReceipt waited for it.
    expect(await scheduledActivities(handle)).toEqual(['sendPayoutAndRecord', 'storeReceipt']);
    expect(notReady()).toHaveLength(1);
    // Encrypted payloads included: a completed withdrawal's history fits in 8 KB.
    expect(await historyBytes(handle)).toBeLessThanOrEqual(8 * 1024);
    await recordHistory(handle, 'withdrawal-completed');
  });

  it('fails with the provider reason', async () => {
    const input = withdrawalInput({ pixKey: '+5511987654321', pixType: 'PHONE' });
    const handle = await start(input);
    await processing(handle);
    await f.sandboxControl(`/sandbox/withdrawals/${input.transactionId}/fail`, { reason: 'account closed' });
    await handle.signal(providerNotificationSignal, {
      type: 'withdraw',
      action: 'updated',
      id: input.transactionId,
    });
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'failed', reason: 'account closed', receiptStored: false });
    await recordHistory(handle, 'withdrawal-failed');
  });

  it("the provider's notification lost, reconciliation's hint makes it look, and it completes", async () => {
    await f.sandboxControl('/sandbox/faults', { receiptLagCalls: 0 });
    const input = withdrawalInput({
      pixKey: `${CPF};00000000;0001;123456;CACC`,
      pixType: 'ACCOUNT',
    });
    const handle = await start(input);
    await processing(handle);
    await f.sandboxControl(`/sandbox/withdrawals/${input.transactionId}/settle`);
    // What the sweep sends a flow it finds settled (test/integration/reconciliation.test.ts).
    await handle.signal(providerNotificationSignal, {
      type: 'withdraw',
      action: 'updated',
      id: input.transactionId,
      source: 'reconciliation',
    });
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', notifications: 1, receiptStored: true });
    expect(result.policyVersion).toBeGreaterThanOrEqual(1);
    // The receipt was ready: the look, a local activity in the task the hint started, stored it
    // from the same read, with no storeReceipt call and no activity task.
    expect(await scheduledActivities(handle)).toEqual(['sendPayoutAndRecord']);
    const { rows } = await f.pool.query(
      'SELECT length(image) AS n FROM withdrawal_receipts WHERE transaction_id = $1',
      [input.transactionId],
    );
    expect(rows[0]?.n).toBeGreaterThan(100);
    // Every state change is in the flows table, each written by the work it follows, with no
    // activity of its own: `validating` by the rules' local activity, `sending` and `processing`
    // by the send, `completed` by the look that found the payout paid and its receipt ready. Each
    // row names the rules' version the withdrawal was decided under.
    const flow = await f.pool.query('SELECT status, seq, details FROM flows WHERE business_id = $1', [
      input.transactionId,
    ]);
    expect(flow.rows).toEqual([
      {
        status: 'completed',
        seq: 4,
        details: expect.objectContaining({
          e2eId: result.e2eId,
          receiptStatus: 4,
          policyVersion: result.policyVersion,
        }),
      },
    ]);
    expect(await statusEvents(handle.workflowId)).toEqual([
      'withdrawal.validating',
      'withdrawal.sending',
      'withdrawal.processing',
      'withdrawal.completed',
    ]);
    const markers = ((await handle.fetchHistory()).events ?? []).filter(
      (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
    );
    // The money rules and the look: two local activities, none for a row alone.
    expect(markers).toHaveLength(2);
    // The 1.0 baseline: no patch marker.
    expect(await patchMarkers(handle)).toEqual([]);
    await recordHistory(handle, 'withdrawal-reconciliation-hint');
  });

  it('a look the provider fails three times here is made through the server, and the payout completes', async () => {
    await f.sandboxControl('/sandbox/faults', { receiptLagCalls: 0 });
    const payoutReceipt = downAtFirst(3, f.provider.payoutReceipt.bind(f.provider));
    const provider = { ...f.provider, payoutReceipt: payoutReceipt.call };
    await onOwnWorker(f, 'look-falls-back', { provider }, async (taskQueue) => {
      const input = withdrawalInput();
      await verifiedWithKnownPayee(f.pool, TEST_PII_KEY, input);
      const failed = expectActivityFailure({
        workflowId: withdrawalWorkflowId(input.transactionId),
        activityType: 'checkPayoutAndRecordCompleted',
        error: /provider down/,
      });
      const handle = await f.env.client.workflow.start('withdrawalWorkflow', {
        taskQueue,
        workflowId: withdrawalWorkflowId(input.transactionId),
        args: [input],
      });
      await settleAndNotify(handle, input.transactionId);
      expect(await handle.result()).toMatchObject({ status: 'completed', receiptStored: true, inquiries: 1 });
      expect(payoutReceipt.calls()).toBe(4);
      expect(failed()).toHaveLength(3);
      // The three tries here are one marker (their failure); then one activity task succeeded.
      expect(await scheduledActivities(handle)).toEqual([
        'sendPayoutAndRecord',
        'checkPayoutAndRecordCompleted',
      ]);
      expect((await sandboxState()).counters.payouts[input.transactionId]).toBe(1);
    });
  });

  it('a deadline mark written while the payout is sent does not hide its processing status', async () => {
    // The mark takes the flows row's next seq while the send runs: the send's `processing` row
    // then loses to it in Postgres, and the workflow writes the change again after the mark.
    const input = withdrawalInput();
    const markWritten = () =>
      waitForState(
        async () =>
          (await f.pool.query('SELECT details FROM flows WHERE business_id = $1', [input.transactionId]))
            .rows[0],
        (row) => row?.details?.deadlineState === 'at_risk',
      );
    const sendPayout = f.provider.sendPayout.bind(f.provider);
    const provider = {
      ...f.provider,
      sendPayout: async (...args: Parameters<typeof sendPayout>) => {
        await markWritten();
        return sendPayout(...args);
      },
    };
    // At risk 1.2 s after the request: while sendPayout waits for the mark; due long after.
    const payoutControls = { ...defaultPayoutControls(), deadlineMs: 120_000, atRiskShare: 0.01 };
    await onOwnWorker(f, 'mark-while-sending', { provider, payoutControls }, async (taskQueue) => {
      await verifiedWithKnownPayee(f.pool, TEST_PII_KEY, input);
      const handle = await f.env.client.workflow.start('withdrawalWorkflow', {
        taskQueue,
        workflowId: withdrawalWorkflowId(input.transactionId),
        args: [input],
      });
      const state = await processing(handle);
      expect(state.deadline?.state).toBe('at_risk');
      const row = await f.pool.query('SELECT status, seq, details FROM flows WHERE business_id = $1', [
        input.transactionId,
      ]);
      // validating 1, sending 2, processing 3 (handed to the send, lost to the mark), the mark 4,
      // processing again 5.
      expect(row.rows).toEqual([
        { status: 'processing', seq: 5, details: expect.objectContaining({ deadlineState: 'at_risk' }) },
      ]);
      await settleAndNotify(handle, input.transactionId);
      expect(await handle.result()).toMatchObject({ status: 'completed', deadline: { state: 'at_risk' } });
      expect(await statusEvents(handle.workflowId)).toEqual([
        'withdrawal.validating',
        'withdrawal.sending',
        'withdrawal.processing',
        'withdrawal.completed',
      ]);
      expect((await sandboxState()).counters.payouts[input.transactionId]).toBe(1);
    });
  });

  it('update-with-start answers the state once started, the same request again, and refuses another', async () => {
    const input = withdrawalInput();
    const { timings: _t, ...request } = input;
    const ask = (asked: typeof request) =>
      f.env.client.workflow.executeUpdateWithStart(withdrawalRequestUpdate, {
        args: [asked],
        startWorkflowOperation: new WithStartWorkflowOperation('withdrawalWorkflow', {
          taskQueue: f.taskQueue,
          workflowId: withdrawalWorkflowId(input.transactionId),
          args: [input],
          workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      });
    await verifiedWithKnownPayee(f.pool, TEST_PII_KEY, input);
    const first = await ask(request);
    expect(first).toMatchObject({ transactionId: input.transactionId, amountCentavos: input.amountCentavos });
    expect(['validating', 'sending']).toContain(first.status);
    // Same request, keys in another order: the same flow's state.
    const { pixKey, ...rest } = request;
    const again = await ask({ pixKey, ...rest });
    expect(again.transactionId).toBe(input.transactionId);
    const refused = await ask({ ...request, amountCentavos: request.amountCentavos + 1 }).catch((e) => e);
    expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(String(refused.cause?.message)).toMatch(/different withdrawal/);
    const handle = f.env.client.workflow.getHandle(withdrawalWorkflowId(input.transactionId));
    await settleAndNotify(handle, input.transactionId);
    expect(await handle.result()).toMatchObject({
      status: 'completed',
      amountCentavos: input.amountCentavos,
    });
    // The refused request sent nothing: one payout, of the first request's amount.
    expect((await sandboxState()).counters.payouts[input.transactionId]).toBe(1);
    await recordHistory(handle, 'withdrawal-update-with-start');
  });

  it('refused by the money rules: a person never verified, nothing sent, its row refused', async () => {
    const input = withdrawalInput({ client: { ...withdrawalInput().client, cpf: generateCpf() } });
    const handle = await startUnprepared(input);
    expect(await handle.result()).toMatchObject({ status: 'refused', reason: 'not_verified' });
    expect((await sandboxState()).counters.payouts[input.transactionId] ?? 0).toBe(0);
    expect(await scheduledActivities(handle)).toEqual([]);
    const row = await f.pool.query('SELECT status, reason FROM flows WHERE business_id = $1', [
      input.transactionId,
    ]);
    expect(row.rows).toEqual([{ status: 'refused', reason: 'not_verified' }]);
    await recordHistory(handle, 'withdrawal-refused');
  });

  it('step-up: no identification within the link lifetime (30 minutes, skipped) is refused biometrics_timeout', async () => {
    // The provider counts the person as onboarded: their liveness links are biometric identifications.
    await f.provider.startLiveness(CPF, {
      correlationId: crypto.randomUUID(),
      plan: 'plan_basic',
      event: 'signup',
    });
    await f.sandboxControl('/sandbox/liveness/complete', { document: CPF });
    await f.sandboxControl('/sandbox/liveness/review', { document: CPF, decision: 'approve' });
    await f.syncSandboxClock();
    const input = withdrawalInput({ amountCentavos: 500_001 });
    const handle = await start(input);
    const waiting = await waitForState(
      () => handle.query(withdrawalStateQuery),
      (s) => s.status === 'awaiting_biometrics',
    );
    expect(waiting.stepUp).toMatchObject({
      cause: 'amount_above_step_up',
      url: expect.stringMatching(/^http/),
    });
    const result = await handle.result();
    expect(result).toMatchObject({
      status: 'refused',
      reason: 'biometrics_timeout',
      stepUp: { outcome: 'expired' },
    });
    expect(Date.parse(result.finishedAt ?? '') - Date.parse(result.startedAt)).toBeGreaterThanOrEqual(
      30 * 60_000,
    );
    // The deadline shows that wait as the person's, apart from pixflow's and the provider's.
    const waited = result.deadline?.waitedForPersonMs ?? 0;
    expect(waited).toBeGreaterThan(29 * 60_000);
    expect(waited).toBeLessThanOrEqual(Date.parse(result.finishedAt ?? '') - Date.parse(result.startedAt));
    expect((await sandboxState()).counters.payouts[input.transactionId] ?? 0).toBe(0);
    await recordHistory(handle, 'withdrawal-step-up-timeout');
  });

  it('step-up: the provider gives a person it never onboarded no identification, refused biometrics_unavailable', async () => {
    const input = withdrawalInput({
      client: { ...withdrawalInput().client, cpf: generateCpf() },
      amountCentavos: 500_001,
    });
    input.pixKey = input.client.cpf;
    input.pixType = 'CPF';
    const unavailable = expectActivityFailure({
      workflowId: biometricsWorkflowId(cpfHash(input.client.cpf, TEST_PII_KEY)),
      activityType: 'requestBiometricLink',
      error: /link of type onboarding/,
    });
    const noStepUp = expectActivityFailure({
      workflowId: withdrawalWorkflowId(input.transactionId),
      activityType: 'requestStepUp',
      error: /not_onboarded_at_provider/,
    });
    const result = await (await start(input)).result();
    expect(result).toMatchObject({ status: 'refused', reason: 'biometrics_unavailable' });
    expect(unavailable()).toHaveLength(1);
    expect(noStepUp()).toHaveLength(1);
    expect((await sandboxState()).counters.payouts[input.transactionId] ?? 0).toBe(0);
  });

  it('an invalid key fails before any provider call', async () => {
    const before = (await sandboxState()).counters.requests.withdraw ?? 0;
    const input = withdrawalInput({ pixKey: '12345678901', pixType: 'CPF' });
    const result = await (await start(input)).result();
    expect(result.status).toBe('failed');
    expect(result.reason).toMatch(/^invalid_pix_key/);
    expect((await sandboxState()).counters.requests.withdraw ?? 0).toBe(before);
  });

  it('a composite key with an empty key part fails before any provider call', async () => {
    const before = (await sandboxState()).counters.requests.withdraw ?? 0;
    const input = withdrawalInput({ pixKey: ';60701190;0001;1234567;CACC', pixType: 'ACCOUNT' });
    const result = await (await start(input)).result();
    expect(result).toMatchObject({ status: 'failed' });
    expect(result.reason).toMatch(/^invalid_pix_key: ACCOUNT key: the key part/);
    expect((await sandboxState()).counters.requests.withdraw ?? 0).toBe(before);
  });

  it('a payout the provider refuses ends failed with its reason, nothing sent, its row failed', async () => {
    // The sandbox answers 403 for a merchant it does not know: a 4xx on create, non-retryable.
    const input = withdrawalInput({ merchant: 'unknown-merchant' });
    const refused = expectActivityFailure({
      workflowId: withdrawalWorkflowId(input.transactionId),
      activityType: 'sendPayoutAndRecord',
      error: /HTTP 403: unknown merchant/,
    });
    const result = await (await start(input)).result();
    expect(result).toMatchObject({ status: 'failed', reason: 'payout_rejected: HTTP 403' });
    expect(refused()).toHaveLength(1);
    expect((await sandboxState()).counters.payouts[input.transactionId] ?? 0).toBe(0);
    const row = await f.pool.query('SELECT status, reason FROM flows WHERE business_id = $1', [
      input.transactionId,
    ]);
    expect(row.rows[0]).toMatchObject({ status: 'failed', reason: 'payout_rejected: HTTP 403' });
  });

  for (const mode of ['timeout', 'error'] as const) {
    it(`creation retried after ${mode === 'timeout' ? 'a timeout' : 'a 5xx'} (the payout did happen) does not pay twice`, async () => {
      await f.sandboxControl('/sandbox/faults', {
        actThenFail: { withdraw: { mode, count: 1, delayMs: 3_000 } },
      });
      const input = withdrawalInput({ pixKey: 'a4b7c2d1-1111-4a2b-9c3d-123456789abc', pixType: 'EVP' });
      const failedSends = expectActivityFailure({
        workflowId: withdrawalWorkflowId(input.transactionId),
        activityType: 'sendPayoutAndRecord',
        error: mode === 'timeout' ? /no answer within 1000 ms/ : /HTTP 500: sandbox fault/,
      });
      const handle = await start(input);
      // While the send is held, the flows table already says `sending`: the send writes the
      // row before it calls the provider.
      await waitForState(
        async () =>
          (await f.pool.query('SELECT status, seq FROM flows WHERE business_id = $1', [input.transactionId]))
            .rows[0],
        (row) => row?.status === 'sending' && row.seq === 2,
      );
      await processing(handle);
      await settleAndNotify(handle, input.transactionId);
      const result = await handle.result();
      expect(result.status).toBe('completed');
      const state = await sandboxState();
      expect(state.counters.payouts[input.transactionId]).toBe(1);
      // It really was retried: the send's started event records a second attempt.
      const events = (await handle.fetchHistory()).events ?? [];
      const scheduled = events.find(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'sendPayoutAndRecord',
      );
      const started = events.find(
        (e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled?.eventId),
      );
      const attempt = started?.activityTaskStartedEventAttributes?.attempt ?? 0;
      expect(attempt).toBeGreaterThanOrEqual(2);
      // Every attempt before the last one failed, and the worker warned of each.
      expect(failedSends()).toHaveLength(attempt - 1);
      await recordHistory(handle, `withdrawal-create-retried-${mode}`);
    });
  }

  it('a create answer pixflow cannot read leaves it sending, with an alert: looked up, never failed, paid once', async () => {
    await f.sandboxControl('/sandbox/faults', { actThenFail: { withdraw: { mode: 'garbled', count: 1 } } });
    const input = withdrawalInput();
    const workflowId = withdrawalWorkflowId(input.transactionId);
    const unreadable = expectActivityFailure({
      workflowId,
      activityType: 'sendPayoutAndRecord',
      error: /a 2xx answer pixflow cannot read/,
    });
    // The worker's log line naming what it could not read.
    const told = expectSdkLog(
      ({ message, meta }) =>
        message.startsWith('provider answer pixflow cannot read') && meta.workflowId === workflowId,
    );
    const handle = await start(input);
    await settleAndNotify(handle, input.transactionId);
    expect((await handle.result()).status).toBe('completed');
    expect(unreadable()).toHaveLength(1);
    expect(told().map((e) => [e.meta.op, e.meta.field])).toEqual([['withdraw', '(body)']]);
    expect((await sandboxState()).counters.payouts[input.transactionId]).toBe(1);
    expect(await statusEvents(workflowId)).not.toContain('withdrawal.failed');
    const { rows } = await f.pool.query(
      `SELECT facts FROM alerts WHERE rule = 'provider_unclassified' AND flow_id = $1`,
      [workflowId],
    );
    expect(rows).toEqual([{ facts: { op: 'withdraw', field: '(body)' } }]);
  });

  it('a payout the provider already holds (its answer lost before pixflow knew) is looked up, not sent again', async () => {
    const input = withdrawalInput();
    // The provider has it already: the doc dialect answers the repeat 409, the other 400.
    await f.provider.sendPayout({ ...input, payee: input.client });
    const handle = await start(input);
    await settleAndNotify(handle, input.transactionId);
    expect((await handle.result()).status).toBe('completed');
    expect((await sandboxState()).counters.payouts[input.transactionId]).toBe(1);
    const { rows } = await f.pool.query(
      'SELECT length(image) AS bytes FROM withdrawal_receipts WHERE transaction_id = $1',
      [input.transactionId],
    );
    expect(rows[0]?.bytes).toBeGreaterThan(0);
  });
});
