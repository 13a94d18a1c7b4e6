import { randomUUID } from 'node:crypto';
import { Client, Connection, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDecisionProofActivities } from '../../activities/decision-proofs';
import { withdrawalResponseSchema } from '../../api/withdrawals-schemas';
import { loadConfig } from '../../common/config';
import { cpfHash } from '../../common/pii';
import { biometricsOutcomeSignal } from '../../contracts/biometrics';
import { DECISION_REFUSED } from '../../contracts/decision';
import { depositWorkflowId, resolutionUpdate } from '../../contracts/deposit';
import { livenessProgressSignal, type OnboardingState, reviewSignal } from '../../contracts/onboarding';
import { payoutDecisionUpdate, type WithdrawalInput } from '../../contracts/withdrawal';
import { recordDecision, refusedDecisionsOf } from '../../db/operator-decisions';
import {
  type ApiEnv,
  eventually,
  freshCpf,
  json,
  onboardApproved,
  PII_KEY,
  peopleAt,
  startApiEnv,
} from '../api/support';
import { verifiedWithKnownPayee } from '../helpers/customers';
import { onboard } from '../helpers/people';
import { expectSdkLog } from '../helpers/sdk-log';

// Decisions that move money or decide a person, sent straight to Temporal by a client that holds
// no pixflow credential (no API key, no back-office session, not even the payload codec's key):
// the flows refuse them, nothing moves, and each refusal is counted. The same decisions made
// through the API count, once.

const APPROVAL_ABOVE = 100_000;
/** Each refusal is logged by the worker: the flow, the kind and why, never who or whose. */
const refusalsLogged = expectSdkLog((x) => x.message === 'decision refused');

let e: ApiEnv;
/** An attacker's client: Temporal's address, nothing of pixflow's. */
let bare: Client;
let connection: Connection;
let ana: string;
let n = 0;

beforeAll(async () => {
  // Reconciliation every second: a paid deposit is found without a webhook.
  e = await startApiEnv(
    { pollScheduleMs: [1_000] },
    {
      env: {
        PAYOUT_APPROVAL_ABOVE_CENTAVOS: String(APPROVAL_ABOVE),
        BIOMETRIC_STEP_UP_CENTAVOS: '0',
        WITHDRAWAL_DAILY_LIMIT_CENTAVOS: '100000000',
      },
    },
  );
  const { WEBHOOK_SECRET, WEBHOOK_PARTNER_ID } = loadConfig({});
  await e.sandboxControl('/sandbox/notifications', {
    url: `${e.url}/webhooks/provider/${WEBHOOK_SECRET}`,
    partnerId: WEBHOOK_PARTNER_ID,
  });
  connection = await Connection.connect({ address: inject('temporalAddress') });
  bare = new Client({ connection });
  ana = (await onboard(await peopleAt(e))).cpf;
});
afterAll(async () => {
  await connection?.close();
  await e?.close();
});

const payoutsSent = async (transactionId: string): Promise<number> => {
  const state = (await (await fetch(`${e.sandbox.url}/sandbox/state`)).json()) as {
    counters: { payouts: Record<string, number> };
  };
  return state.counters.payouts[transactionId] ?? 0;
};

/** The update failed in the flow, refused for want of a proof. */
async function expectUnproven(sent: Promise<unknown>) {
  const err = await sent.catch((x: unknown) => x);
  expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (err as WorkflowUpdateFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect((cause as ApplicationFailure).type).toBe(DECISION_REFUSED);
}

describe('a decision sent straight to Temporal changes nothing, and is counted', () => {
  it('decidePayout: two made-up approvers release nothing; the sandbox holds no payout', async () => {
    n += 1;
    const cpf = freshCpf();
    const body = {
      transactionId: `proofs-${Date.now()}-${n}`,
      client: { externalId: `user-${n}`, cpf, email: 'ana@example.com', name: 'Ana Souza' },
      pixKey: 'ana@example.com',
      pixType: 'EMAIL',
      amountCentavos: APPROVAL_ABOVE + 1,
    };
    await verifiedWithKnownPayee(e.pool, PII_KEY, {
      ...body,
      merchant: 'sandbox-merchant',
    } as WithdrawalInput);
    const res = await e.call('POST', '/v1/withdrawals', { body });
    expect(res.status).toBe(202);
    const w = withdrawalResponseSchema.parse(await res.json());
    expect(w.state.status).toBe('awaiting_approval');
    const handle = bare.workflow.getHandle(w.workflowId);

    // The door: two approvals that name nobody pixflow checked.
    for (const operator of ['nobody-1@invalid', 'nobody-2@invalid'])
      await expectUnproven(
        handle.executeUpdate(payoutDecisionUpdate, { args: [{ operator, decision: 'approve' }] }),
      );
    // A made-up record id, and a real record for another flow, prove nothing either.
    await expectUnproven(
      handle.executeUpdate(payoutDecisionUpdate, {
        args: [{ operator: 'nobody-3@invalid', decision: 'approve', decisionId: randomUUID() }],
      }),
    );
    const elsewhere = await recordDecision(e.pool, {
      workflowId: 'withdrawal-some-other-payout',
      kind: 'withdrawal.decision',
      decision: 'approve',
      operatorId: null,
      operatorEmail: 'approver@ops.example',
      operatorRole: 'approver',
      authenticatedBy: 'session:elsewhere',
    });
    await expectUnproven(
      handle.executeUpdate(payoutDecisionUpdate, {
        args: [{ operator: 'approver@ops.example', decision: 'approve', decisionId: elsewhere }],
      }),
    );

    const after = withdrawalResponseSchema.parse(
      await (await e.call('GET', `/v1/withdrawals/${w.transactionId}`)).json(),
    ).state;
    expect(after.status).toBe('awaiting_approval');
    expect(after.approval?.approvals).toEqual([]);
    const row = await e.pool.query('SELECT status, details FROM flows WHERE workflow_id = $1', [
      w.workflowId,
    ]);
    expect(row.rows[0]).toMatchObject({ status: 'awaiting_approval', details: { approvedBy: [] } });
    expect(await payoutsSent(w.transactionId)).toBe(0);
    expect(await refusedDecisionsOf(e.pool, w.workflowId)).toEqual({ unproven: 2, unknown: 1, mismatch: 1 });
    const logged = refusalsLogged().filter((x) => x.meta.workflowId === w.workflowId);
    expect(logged.map((x) => x.meta.cause)).toEqual(['unproven', 'unproven', 'unknown', 'mismatch']);
    expect(JSON.stringify(logged.map((x) => x.meta))).not.toMatch(/nobody|approver@|ana@/);
  });

  it('a held deposit: a bare resolution leaves it held; the API resolution then counts', async () => {
    const res = await e.call('POST', '/v1/deposits', {
      body: {
        amountCentavos: 15_000,
        client: { externalId: 'user-held', cpf: ana, email: 'ana@example.com', name: 'Ana Souza' },
      },
    });
    expect(res.status).toBe(201);
    const { txid } = (await res.json()) as { txid: string };
    await e.sandboxControl(`/sandbox/deposits/${txid}/pay`, { payerName: 'Someone', payerCpf: freshCpf() });
    const read = async () =>
      (
        await json<{ state: { status: string; resolution?: unknown } }>(
          await e.call('GET', `/v1/deposits/${txid}`),
        )
      ).state;
    await eventually(read, (s) => s.status === 'held');

    await expectUnproven(
      bare.workflow.getHandle(depositWorkflowId(txid)).executeUpdate(resolutionUpdate, {
        args: [{ decision: 'accept', by: 'nobody@invalid', reason: 'mine' }],
      }),
    );
    expect(await read()).toMatchObject({ status: 'held' });
    expect((await read()).resolution).toBeUndefined();
    expect(await refusedDecisionsOf(e.pool, depositWorkflowId(txid))).toEqual({ unproven: 1 });

    const decision = { decision: 'return', by: 'ops@example.com', reason: 'payer unknown to the person' };
    const resolved = await e.call('POST', `/v1/deposits/${txid}/resolution`, { body: decision });
    expect(resolved.status).toBe(200);
    expect(await resolved.json()).toMatchObject({ ...decision, status: 'to_return' });
    const recorded = await e.pool.query(
      'SELECT kind, decision, operator_role, authenticated_by FROM operator_decisions WHERE workflow_id = $1',
      [depositWorkflowId(txid)],
    );
    expect(recorded.rows).toEqual([
      {
        kind: 'deposit.resolution',
        decision: 'return',
        operator_role: 'api_key',
        authenticated_by: expect.stringMatching(/^api_key:/),
      },
    ]);
  });

  it('an onboarding review: a bare review is ignored and counted; the API review then decides', async () => {
    const cpf = freshCpf();
    const started = await e.call('POST', '/v1/onboardings', {
      body: { cpf, plan: 'plan_basic', event: 'signup' },
    });
    expect(started.status).toBe(201);
    const { workflowId } = (await started.json()) as { workflowId: string };
    const stateOf = async () =>
      (await json<{ state: OnboardingState }>(await e.call('GET', `/v1/onboardings/${cpf}`))).state;
    await eventually(stateOf, (s) => s.status === 'awaiting_liveness');
    // The provider's progress stays a hint, taken as it comes.
    await bare.workflow
      .getHandle(workflowId)
      .signal(livenessProgressSignal, { statusVerification: 'manual_approve_pending' });
    await eventually(stateOf, (s) => s.status === 'awaiting_review');

    await bare.workflow
      .getHandle(workflowId)
      .signal(reviewSignal, { decision: 'approve', by: 'nobody@invalid', reason: 'looks fine' });
    await eventually(
      () => refusedDecisionsOf(e.pool, workflowId),
      (c) => c.unproven === 1,
    );
    const still = await stateOf();
    expect(still.status).toBe('awaiting_review');
    expect(still.review).toBeUndefined();

    const review = { decision: 'refuse', by: 'ops@example.com', reason: 'documents do not match' };
    expect((await e.call('POST', `/v1/onboardings/${cpf}/review`, { body: review })).status).toBe(202);
    const done = await eventually(stateOf, (s) => s.status === 'rejected');
    expect(done.review).toEqual(review);
    expect(await refusedDecisionsOf(e.pool, workflowId)).toEqual({ unproven: 1 });
  });
});

describe("a step-up's outcome counts only as its identification recorded it", () => {
  it('a bare "passed" leaves the withdrawal awaiting biometrics; the person\'s own identification sends it once', async () => {
    const cpf = freshCpf();
    await onboardApproved(e, cpf);
    const key = { pixKey: `${cpf.slice(0, 4)}@example.com`, pixType: 'EMAIL' };
    expect((await e.call('POST', `/v1/customers/${cpf}/accounts`, { body: key })).status).toBe(201);
    const res = await e.call('POST', '/v1/withdrawals', {
      body: {
        transactionId: `proofs-step-up-${Date.now()}`,
        client: { externalId: 'user-step-up', cpf, email: 'ana@example.com', name: 'Ana Souza' },
        amountCentavos: 10_000,
        ...key,
      },
    });
    expect(res.status).toBe(202);
    const w = withdrawalResponseSchema.parse(await res.json());
    expect(w.state).toMatchObject({
      status: 'awaiting_biometrics',
      stepUp: { cause: 'first_payout_to_account' },
    });
    const identification = w.state.stepUp?.biometricsWorkflowId ?? '';
    // A made-up run, and the identification's own run while it is still open: neither recorded "passed".
    const { runId: openRun } = await bare.workflow.getHandle(identification).describe();
    for (const runId of ['made-up-run', openRun ?? ''])
      await bare.workflow
        .getHandle(w.workflowId)
        .signal(biometricsOutcomeSignal, { outcome: 'passed', runId });
    await eventually(
      () => refusedDecisionsOf(e.pool, w.workflowId),
      (c) => c.unknown === 2,
    );
    const stateNow = async () =>
      withdrawalResponseSchema.parse(await (await e.call('GET', `/v1/withdrawals/${w.transactionId}`)).json())
        .state;
    expect(await stateNow()).toMatchObject({ status: 'awaiting_biometrics' });
    expect((await stateNow()).stepUp?.outcome).toBeUndefined();
    expect(await payoutsSent(w.transactionId)).toBe(0);

    await e.sandboxControl('/sandbox/liveness/complete', { document: cpf });
    await eventually(
      () => payoutsSent(w.transactionId),
      (c) => c === 1,
    );
    expect((await stateNow()).stepUp?.outcome).toBe('passed');
    expect(await refusedDecisionsOf(e.pool, w.workflowId)).toEqual({ unknown: 2 });
    const kinds = await e.pool.query('SELECT DISTINCT kind FROM refused_decisions WHERE workflow_id = $1', [
      w.workflowId,
    ]);
    expect(kinds.rows).toEqual([{ kind: 'withdrawal.step_up' }]);
  });
});

describe('a recorded decision counts once', () => {
  it('taken by one check (a retried check included); any other use is refused as replayed', async () => {
    const workflowId = `withdrawal-replay-${randomUUID()}`;
    const decisionId = await recordDecision(e.pool, {
      workflowId,
      kind: 'withdrawal.decision',
      decision: 'approve',
      operatorId: null,
      operatorEmail: 'Approver@Ops.Example',
      operatorRole: 'approver',
      authenticatedBy: 'session:test',
    });
    const counted: string[] = [];
    const { verifyDecision } = createDecisionProofActivities({
      pool: e.pool,
      hashCpf: (cpf) => cpfHash(cpf, PII_KEY),
      countRefusedDecision: (kind, cause) => counted.push(`${kind} ${cause}`),
    });
    const claim = {
      kind: 'withdrawal.decision',
      decisionId,
      operator: 'approver@ops.example',
      decision: 'approve',
    } as const;
    const checkAt = (runId: string, activityId: string) =>
      new MockActivityEnvironment({
        activityId,
        workflowExecution: { workflowId, runId },
      }).run(verifyDecision, claim);
    expect(await checkAt('run-1', '1')).toEqual({ proven: true });
    expect(await checkAt('run-1', '1')).toEqual({ proven: true });
    expect(await checkAt('run-1', '2')).toEqual({ proven: false, cause: 'replayed' });
    expect(await checkAt('run-2', '1')).toEqual({ proven: false, cause: 'replayed' });
    // Another decision or reason than the record's is not this record's.
    const other = new MockActivityEnvironment({
      activityId: '3',
      workflowExecution: { workflowId, runId: 'run-1' },
    });
    expect(await other.run(verifyDecision, { ...claim, decision: 'refuse', reason: 'no' })).toEqual({
      proven: false,
      cause: 'mismatch',
    });
    expect(await refusedDecisionsOf(e.pool, workflowId)).toEqual({ replayed: 2, mismatch: 1 });
    // The worker's metric counts them too (pixflow_refused_decisions_total).
    expect(counted).toEqual([
      'withdrawal.decision replayed',
      'withdrawal.decision replayed',
      'withdrawal.decision mismatch',
    ]);
  });
});
