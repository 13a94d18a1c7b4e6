import { WorkflowUpdateFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withdrawalResponseSchema } from '../../api/withdrawals-schemas';
import { createWorkerMetrics } from '../../common/metrics';
import {
  PAYOUT_ALREADY_APPROVED_BY,
  PAYOUT_APPROVER_IS_REQUESTER,
  PAYOUT_NOT_AWAITING_APPROVAL,
  PAYOUT_REFUSAL_NEEDS_REASON,
  type PayoutDecision,
  payoutDecisionUpdate,
  type WithdrawalInput,
} from '../../contracts/withdrawal';
import { verifiedWithKnownPayee } from '../helpers/customers';
import { provenDecision } from '../helpers/decisions';
import { recordHistory } from '../helpers/histories';
import { type ApiEnv, eventually, freshCpf, PII_KEY, startApiEnv } from './support';

// The payout controls on the real stack (API over HTTP, worker, Temporal dev server, Postgres,
// the sandbox, the events relay): four eyes on a large payout, and the deadline's marks as
// events, flows row details and the worker's metric.

const APPROVAL_ABOVE = 100_000;
const REQUESTER = 'Requester.Ops@example.com';

let e: ApiEnv;
const metrics = createWorkerMetrics();
let n = 0;

beforeAll(async () => {
  e = await startApiEnv(
    {},
    {
      env: {
        PAYOUT_APPROVAL_ABOVE_CENTAVOS: String(APPROVAL_ABOVE),
        // A short deadline the test can wait out: at risk after 4 s, missed after 8 s.
        PAYOUT_DEADLINE: '8s',
        PAYOUT_AT_RISK_SHARE: '0.5',
        BIOMETRIC_STEP_UP_CENTAVOS: '0',
        WITHDRAWAL_DAILY_LIMIT_CENTAVOS: '100000000',
      },
      eventsRelay: {},
      countPayoutDeadline: (mark) => metrics.countPayoutDeadline(mark),
    },
  );
});
afterAll(async () => {
  await e?.close();
});

type Withdrawal = ReturnType<typeof withdrawalResponseSchema.parse>;

/** A withdrawal of a verified person to a payee paid before: only the payout controls stand in its way. */
const withdraw = async (over: Record<string, unknown> = {}): Promise<Withdrawal> => {
  n += 1;
  const cpf = freshCpf();
  const body = {
    transactionId: `controls-${Date.now()}-${n}`,
    client: { externalId: `user-${n}`, cpf, email: 'ana@example.com', name: 'Ana Souza' },
    pixKey: 'ana@example.com',
    pixType: 'EMAIL',
    amountCentavos: 10_000,
    ...over,
  };
  await verifiedWithKnownPayee(e.pool, PII_KEY, {
    ...body,
    merchant: 'sandbox-merchant',
  } as WithdrawalInput);
  const res = await e.call('POST', '/v1/withdrawals', { body });
  expect(res.status).toBe(202);
  return withdrawalResponseSchema.parse(await res.json());
};

const stateOf = async (transactionId: string) =>
  withdrawalResponseSchema.parse(await (await e.call('GET', `/v1/withdrawals/${transactionId}`)).json())
    .state;

const payoutsSent = async (transactionId: string): Promise<number> => {
  const state = (await (await fetch(`${e.sandbox.url}/sandbox/state`)).json()) as {
    counters: { payouts: Record<string, number> };
  };
  return state.counters.payouts[transactionId] ?? 0;
};

/** A decision as the back office sends it: recorded first, then naming its record. */
const decide = async (w: Withdrawal, d: PayoutDecision) =>
  e.temporal.workflow.getHandle(w.workflowId).executeUpdate(payoutDecisionUpdate, {
    args: [await provenDecision(e.pool, w.workflowId, 'withdrawal.decision', d.operator, d)],
  });

/** The validator's refusal: the update fails with the contract's message, nothing changes. */
async function expectRefusedDecision(w: Withdrawal, d: PayoutDecision, message: string) {
  const err = await decide(w, d).catch((x: unknown) => x);
  expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
  expect(String((err as WorkflowUpdateFailedError).cause?.message)).toBe(message);
}

const rowOf = async (w: Withdrawal) =>
  (await e.pool.query('SELECT status, reason, details FROM flows WHERE workflow_id = $1', [w.workflowId]))
    .rows[0] as { status: string; reason: string | null; details: Record<string, unknown> };

/** The flow's events through GET /v1/events, oldest first. */
const eventsOf = async (w: Withdrawal) => {
  const res = await e.call('GET', `/v1/events?flow=${encodeURIComponent(w.workflowId)}&limit=100`);
  expect(res.status).toBe(200);
  return (
    (await res.json()) as { items: { type: string; data: { state: { details: Record<string, unknown> } } }[] }
  ).items;
};

describe('four eyes on a large payout', () => {
  it('waits for two different operators, never the requester; sent once after the second approval', async () => {
    const w = await withdraw({ amountCentavos: APPROVAL_ABOVE + 1, requestedBy: REQUESTER });
    expect(w.state).toMatchObject({
      status: 'awaiting_approval',
      approval: { required: 2, approvals: [] },
      requestedBy: REQUESTER.toLowerCase(),
    });
    // The requester may not approve, whatever the case of the address; a refusal needs a reason.
    await expectRefusedDecision(
      w,
      { operator: REQUESTER.toUpperCase(), decision: 'approve' },
      PAYOUT_APPROVER_IS_REQUESTER,
    );
    await expectRefusedDecision(
      w,
      { operator: 'ana@ops.example', decision: 'refuse' },
      PAYOUT_REFUSAL_NEEDS_REASON,
    );
    await expectRefusedDecision(
      w,
      { operator: 'ana@ops.example', decision: 'refuse', reason: '  ' },
      PAYOUT_REFUSAL_NEEDS_REASON,
    );

    const first = await decide(w, { operator: 'Ana@Ops.Example', decision: 'approve' });
    expect(first).toMatchObject({
      status: 'awaiting_approval',
      approval: { approvals: [{ operator: 'ana@ops.example' }] },
    });
    await expectRefusedDecision(
      w,
      { operator: 'ana@ops.example', decision: 'approve' },
      PAYOUT_ALREADY_APPROVED_BY,
    );
    // One approval of two: nothing sent, and the back office sees who approved.
    expect(await rowOf(w)).toMatchObject({
      status: 'awaiting_approval',
      details: {
        approvalsRequired: 2,
        approvedBy: ['ana@ops.example'],
        requestedBy: REQUESTER.toLowerCase(),
        dueAt: w.state.deadline?.dueAt,
      },
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(await payoutsSent(w.transactionId)).toBe(0);

    await decide(w, { operator: 'bruno@ops.example', decision: 'approve' });
    await eventually(
      () => payoutsSent(w.transactionId),
      (c) => c === 1,
    );
    await expectRefusedDecision(
      w,
      { operator: 'carla@ops.example', decision: 'approve' },
      PAYOUT_NOT_AWAITING_APPROVAL,
    );
    await eventually(
      () => stateOf(w.transactionId),
      (s) => s.status === 'processing',
    );
    await e.sandboxControl(`/sandbox/withdrawals/${w.transactionId}/settle`);
    const done = await eventually(
      () => stateOf(w.transactionId),
      (s) => s.status === 'completed',
      { timeoutMs: 30_000 },
    );
    expect(done.approval?.approvals.map((a) => a.operator)).toEqual(['ana@ops.example', 'bruno@ops.example']);
    expect(await payoutsSent(w.transactionId)).toBe(1);
    const types = (
      await eventually(
        () => eventsOf(w),
        (es) => es.some((x) => x.type === 'withdrawal.completed'),
      )
    ).map((x) => x.type);
    expect(types).toContain('withdrawal.awaiting_approval');
    expect(types.indexOf('withdrawal.awaiting_approval')).toBeLessThan(
      types.indexOf('withdrawal.processing'),
    );
    await recordHistory(e.temporal.workflow.getHandle(w.workflowId), 'withdrawal-four-eyes-approved');
  });

  it('a refusal with its reason ends it refused, operator_refused, nothing sent', async () => {
    const w = await withdraw({ amountCentavos: APPROVAL_ABOVE + 1 });
    expect(w.state.status).toBe('awaiting_approval');
    await decide(w, { operator: 'ana@ops.example', decision: 'approve' });
    await decide(w, { operator: 'bruno@ops.example', decision: 'refuse', reason: 'payee under review' });
    const refused = await e.temporal.workflow.getHandle(w.workflowId).result();
    expect(refused).toMatchObject({
      status: 'refused',
      reason: 'operator_refused',
      approval: { refusedBy: 'bruno@ops.example', refusal: 'payee under review' },
    });
    expect(await stateOf(w.transactionId)).toMatchObject({ status: 'refused', reason: 'operator_refused' });
    expect(await rowOf(w)).toMatchObject({
      status: 'refused',
      reason: 'operator_refused',
      details: {
        refusedBy: 'bruno@ops.example',
        refusal: 'payee under review',
        approvedBy: ['ana@ops.example'],
      },
    });
    expect(await payoutsSent(w.transactionId)).toBe(0);
    await recordHistory(e.temporal.workflow.getHandle(w.workflowId), 'withdrawal-four-eyes-refused');
  });

  it('a payout at the bound goes without approval', async () => {
    const w = await withdraw({ amountCentavos: APPROVAL_ABOVE });
    expect(w.state.status).toBe('sending');
    expect(w.state.approval).toBeUndefined();
    await eventually(
      () => payoutsSent(w.transactionId),
      (c) => c === 1,
    );
  });
});

describe('the deadline on the real stack', () => {
  it('a payout the provider never settles is at risk, then missed: events, row details, metric', async () => {
    const w = await withdraw();
    const asked = Date.parse(w.state.startedAt);
    expect(w.state.deadline).toMatchObject({
      dueAt: new Date(asked + 8_000).toISOString(),
      atRiskAt: new Date(asked + 4_000).toISOString(),
      waitedForPersonMs: 0,
    });
    expect(w.state.deadline?.state).toBeUndefined();
    const missed = await eventually(
      () => eventsOf(w),
      (es) => es.some((x) => x.type === 'withdrawal.deadline_missed'),
      { timeoutMs: 30_000 },
    );
    const marks = missed.filter((x) => x.type.startsWith('withdrawal.deadline_'));
    expect(marks.map((x) => x.type)).toEqual(['withdrawal.deadline_at_risk', 'withdrawal.deadline_missed']);
    expect(marks[0]?.data.state.details).toMatchObject({
      deadlineState: 'at_risk',
      dueAt: w.state.deadline?.dueAt,
    });
    expect(marks[1]?.data.state.details).toMatchObject({ deadlineState: 'missed' });
    // Recorded when due, not before.
    const { rows } = await e.pool.query(
      `SELECT type, created_at FROM events WHERE stream_id = $1 AND type LIKE 'withdrawal.deadline_%' ORDER BY seq`,
      [w.workflowId],
    );
    expect((rows[0].created_at as Date).getTime()).toBeGreaterThanOrEqual(asked + 4_000);
    expect((rows[1].created_at as Date).getTime()).toBeGreaterThanOrEqual(asked + 8_000);
    expect(await rowOf(w)).toMatchObject({
      status: 'processing',
      details: {
        deadlineState: 'missed',
        dueAt: w.state.deadline?.dueAt,
        atRiskAt: w.state.deadline?.atRiskAt,
      },
    });
    expect((await stateOf(w.transactionId)).deadline?.state).toBe('missed');
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/pixflow_payout_deadline_total\{state="at_risk"\} [1-9]/);
    expect(text).toMatch(/pixflow_payout_deadline_total\{state="missed"\} [1-9]/);

    // Settled late: completed, and no mark again.
    await e.sandboxControl(`/sandbox/withdrawals/${w.transactionId}/settle`);
    await eventually(
      () => stateOf(w.transactionId),
      (s) => s.status === 'completed',
      { timeoutMs: 30_000 },
    );
    const after = await e.pool.query(
      `SELECT count(*)::int AS n FROM events WHERE stream_id = $1 AND type LIKE 'withdrawal.deadline_%'`,
      [w.workflowId],
    );
    expect(after.rows[0].n).toBe(2);
    expect((await rowOf(w)).details).toMatchObject({ deadlineState: 'missed' });
  });
});
