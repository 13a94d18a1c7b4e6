import {
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import type { createPayoutControlActivities } from '../activities/payout-controls';
import type { PayoutControls, WithdrawalRefusal } from '../contracts/rules';
import {
  PAYOUT_ALREADY_APPROVED_BY,
  PAYOUT_APPROVER_IS_REQUESTER,
  PAYOUT_NOT_AWAITING_APPROVAL,
  PAYOUT_REFUSAL_NEEDS_REASON,
  type PayoutApprovals,
  type PayoutDeadline,
  type PayoutDecision,
  payoutDecisionUpdate,
  type WithdrawalInput,
  type WithdrawalState,
  type WithdrawalStatus,
} from '../contracts/withdrawal';
import { requireProof } from './decision-proofs';
import { type FlowTracker, isoNow, POSTGRES_WRITE_OPTIONS, PROVIDER_CALL_OPTIONS } from './flow-lifecycle';

// The payout controls of a withdrawal (docs/payout-controls.md): the prize deadline watched
// beside the flow, four eyes on a large payout, and the operator's authorization before sending.
// Each is a phase the withdrawal runs with its flow (the state and its status changes).

/** A withdrawal's status changes and state, as workflows/withdrawal.ts tracks them. */
export type WithdrawalFlow = FlowTracker<WithdrawalStatus, WithdrawalState>;

type ControlActivities = ReturnType<typeof createPayoutControlActivities>;

// A mark is one write in our own Postgres: a local activity, as a status change's row.
const { recordPayoutDeadline } = proxyLocalActivities<ControlActivities>(POSTGRES_WRITE_OPTIONS);
// Its attempts are bounded by PAYOUT_AUTHORIZATION_TIMEOUT_MS inside; a failure of its own
// (a worker without the URL) is retried.
const { authorizePayout } = proxyActivities<ControlActivities>({
  ...PROVIDER_CALL_OPTIONS,
  startToCloseTimeout: '2m',
  summary: "Ask the operator's backend whether the payout may go",
});

/** The deadline of a withdrawal asked at `startedAt`, under `controls`. */
function deadlineOf(startedAt: string, controls: PayoutControls): PayoutDeadline {
  const asked = Date.parse(startedAt);
  return {
    dueAt: new Date(asked + controls.deadlineMs).toISOString(),
    atRiskAt: new Date(asked + Math.round(controls.atRiskShare * controls.deadlineMs)).toISOString(),
    waitedForPersonMs: 0,
  };
}

/** What the flows row's details say of the controls (the back office reads these keys). */
export function payoutControlDetails(state: WithdrawalState): Record<string, unknown> {
  const { deadline, approval, authorization } = state;
  return {
    ...(deadline
      ? {
          dueAt: deadline.dueAt,
          atRiskAt: deadline.atRiskAt,
          deadlineState: deadline.state,
          waitedForPersonMs: deadline.waitedForPersonMs,
        }
      : {}),
    ...(approval
      ? {
          approvalsRequired: approval.required,
          approvedBy: approval.approvals.map((a) => a.operator),
          refusedBy: approval.refusedBy,
          refusal: approval.refusal,
        }
      : {}),
    requestedBy: state.requestedBy,
    authorization,
  };
}

/**
 * The deadline's watch: `stop` ends it and waits for a mark being recorded; `running` while its
 * timer still waits for a mark to come.
 */
export interface DeadlineWatch {
  stop(): Promise<void>;
  running(): boolean;
}

/**
 * Sets the withdrawal's deadline under `controls` (from the person's request, whatever the flow
 * waits for) and watches it beside the flow: at atRiskAt, then at dueAt, a withdrawal still open
 * is marked (its row as it stands, the details saying so, an event and a metric). Stop it before
 * the flow's final row, so that row comes after any mark.
 */
export function watchDeadline(flow: WithdrawalFlow, controls: PayoutControls): DeadlineWatch {
  const { state } = flow;
  const deadline = deadlineOf(state.startedAt, controls);
  state.deadline = deadline;
  const scope = new CancellationScope();
  const markAt = async (at: string, mark: 'at_risk' | 'missed', summary: string) => {
    await sleep(Math.max(Date.parse(at) - Date.now(), 1), { summary });
    if (flow.isFinal()) return;
    deadline.state = mark;
    // Once due, the mark is recorded even when the flow ends meanwhile.
    const row = flow.nextRow(state.status, state.reason);
    await CancellationScope.nonCancellable(() => recordPayoutDeadline(row, mark));
  };
  let running = true;
  const watching = scope
    .run(async () => {
      await markAt(deadline.atRiskAt, 'at_risk', 'Payout deadline: at risk');
      await markAt(deadline.dueAt, 'missed', 'Payout deadline: missed');
    })
    .catch((err: unknown) => {
      if (!isCancellation(err)) throw err;
    })
    .finally(() => {
      running = false;
    });
  return {
    async stop() {
      scope.cancel();
      await watching;
    },
    running: () => running,
  };
}

/**
 * Takes the back office's decisions on this payout (payoutDecisionUpdate). The validator refuses
 * what four eyes forbid while nothing changes; then the decision must be proven (the record the
 * back office wrote when it checked the operator), and the rules hold again after that read. An
 * approval is written to the flows row before the update answers.
 */
export function takePayoutDecisions(flow: WithdrawalFlow) {
  const { state } = flow;
  const validator = (d: PayoutDecision) => {
    const approval = state.approval;
    const operator = d.operator.toLowerCase();
    if (
      state.status !== 'awaiting_approval' ||
      !approval ||
      approval.refusedBy !== undefined ||
      approval.approvals.length >= approval.required
    )
      throw new Error(PAYOUT_NOT_AWAITING_APPROVAL);
    if (d.decision === 'refuse') {
      if (!d.reason?.trim()) throw new Error(PAYOUT_REFUSAL_NEEDS_REASON);
      return;
    }
    if (operator === state.requestedBy) throw new Error(PAYOUT_APPROVER_IS_REQUESTER);
    if (approval.approvals.some((a) => a.operator === operator)) throw new Error(PAYOUT_ALREADY_APPROVED_BY);
  };
  setHandler(
    payoutDecisionUpdate,
    async (d: PayoutDecision) => {
      const operator = d.operator.toLowerCase();
      await requireProof({
        kind: 'withdrawal.decision',
        decisionId: d.decisionId,
        operator,
        decision: d.decision,
        reason: d.reason,
      });
      // Another decision may have landed while the proof was read.
      try {
        validator(d);
      } catch (err) {
        throw ApplicationFailure.nonRetryable((err as Error).message, 'PayoutDecisionRefused');
      }
      const approval = state.approval;
      if (!approval) return state;
      if (d.decision === 'refuse') {
        // The flow ends refused and writes its row.
        approval.refusedBy = operator;
        approval.refusal = d.reason?.trim();
        return state;
      }
      approval.approvals.push({ operator, at: isoNow() });
      await flow.moveTo('awaiting_approval');
      return state;
    },
    { validator },
  );
}

/**
 * After the rules and any step-up: four eyes on a large payout, then the operator's
 * authorization. Answers the refusal, or undefined when the payout may go.
 */
export async function passPayoutControls(
  input: WithdrawalInput,
  flow: WithdrawalFlow,
  controls: PayoutControls,
): Promise<WithdrawalRefusal | undefined> {
  return (await awaitApproval(input, flow, controls)) ?? (await authorize(input, flow, controls));
}

/**
 * Four eyes: a payout above the approval amount waits in `awaiting_approval` (no time limit; the
 * deadline watch goes on) until enough different operators approve it, or one refuses it.
 * Answers the refusal, or undefined when it may go.
 */
async function awaitApproval(
  input: WithdrawalInput,
  flow: WithdrawalFlow,
  controls: PayoutControls,
): Promise<WithdrawalRefusal | undefined> {
  if (!(controls.approvalAboveCentavos > 0 && input.amountCentavos > controls.approvalAboveCentavos))
    return undefined;
  const approval: PayoutApprovals = { required: controls.approvers, approvals: [] };
  flow.state.approval = approval;
  await flow.moveTo('awaiting_approval');
  await condition(() => approval.refusedBy !== undefined || approval.approvals.length >= approval.required);
  return approval.refusedBy !== undefined ? 'operator_refused' : undefined;
}

/**
 * The operator's authorization, when configured: answers the refusal, or undefined when the
 * payout may go (approved, or no answer where it fails open). The caller's answer comes at once,
 * saying the backend is being asked: one told `sending` is never then told `refused`.
 */
async function authorize(
  input: WithdrawalInput,
  flow: WithdrawalFlow,
  controls: PayoutControls,
): Promise<WithdrawalRefusal | undefined> {
  if (!controls.askAuthorization) return undefined;
  const { state } = flow;
  await flow.moveTo('awaiting_authorization');
  const answer = await authorizePayout(input, state.approval?.approvals.map((a) => a.operator) ?? []);
  switch (answer.outcome) {
    case 'approved':
      state.authorization = { decision: 'approve' };
      return undefined;
    case 'denied':
      state.authorization = { decision: 'deny', reason: answer.reason };
      return 'authorization_denied';
    case 'unanswered':
      state.authorization = { decision: 'no_answer', reason: answer.problem };
      return answer.send ? undefined : 'authorization_unavailable';
  }
}
