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
import type { FlowRecord } from '../contracts/flow';
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
} from '../contracts/withdrawal';
import { requireProof } from './decision-proofs';
import { isoNow, POSTGRES_WRITE_OPTIONS, PROVIDER_CALL_OPTIONS } from './flow-lifecycle';

// The payout controls of a withdrawal (docs/payout-controls.md): the prize deadline watched
// beside the flow, four eyes on a large payout, and the operator's authorization before sending.

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
export function deadlineOf(startedAt: string, controls: PayoutControls): PayoutDeadline {
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
 * Watches the deadline beside the flow: at atRiskAt, then at dueAt, a withdrawal still open is
 * marked (its row, an event and a metric by `record`). `stop` ends the watch and waits for a mark
 * being recorded, so the flow's final row comes after it.
 */
export function watchDeadline(
  state: WithdrawalState,
  isOpen: () => boolean,
  record: (mark: 'at_risk' | 'missed') => Promise<void>,
): { stop(): Promise<void> } {
  const deadline = state.deadline;
  const scope = new CancellationScope();
  const markAt = async (at: string, mark: 'at_risk' | 'missed', summary: string) => {
    await sleep(Math.max(Date.parse(at) - Date.now(), 1), { summary });
    if (!isOpen() || !deadline) return;
    deadline.state = mark;
    // Once due, the mark is recorded even when the flow ends meanwhile.
    await CancellationScope.nonCancellable(() => record(mark));
  };
  const watching = scope
    .run(async () => {
      if (!deadline) return;
      await markAt(deadline.atRiskAt, 'at_risk', 'Payout deadline: at risk');
      await markAt(deadline.dueAt, 'missed', 'Payout deadline: missed');
    })
    .catch((err: unknown) => {
      if (!isCancellation(err)) throw err;
    });
  return {
    async stop() {
      scope.cancel();
      await watching;
    },
  };
}

/** Records a deadline mark: the flows row as it stands (details saying so) and its event. */
export function deadlineRecorder(
  state: WithdrawalState,
  row: (status: WithdrawalState['status']) => FlowRecord,
  details: () => Record<string, unknown>,
) {
  return (mark: 'at_risk' | 'missed') =>
    recordPayoutDeadline({ ...row(state.status), reason: state.reason, details: details() }, mark);
}

/**
 * Takes the back office's decisions on this payout (payoutDecisionUpdate). The validator refuses
 * what four eyes forbid while nothing changes; then the decision must be proven (the record the
 * back office wrote when it checked the operator), and the rules hold again after that read. An
 * approval is written to the flows row (`written`) before the update answers.
 */
export function takePayoutDecisions(state: WithdrawalState, written: () => Promise<unknown>) {
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
      await written();
      return state;
    },
    { validator },
  );
}

/**
 * After the rules and any step-up: four eyes on a large payout, then the operator's
 * authorization; the payout shows `sending` once both let it go. Answers the refusal, or undefined when the payout may go.
 */
export async function passPayoutControls(
  input: WithdrawalInput,
  state: WithdrawalState,
  controls: PayoutControls,
  flow: {
    moveTo: (status: 'awaiting_approval' | 'awaiting_authorization') => Promise<unknown>;
    showSending: () => void;
  },
): Promise<WithdrawalRefusal | undefined> {
  const unapproved = await awaitApproval(input, state, controls, flow.moveTo);
  if (unapproved) return unapproved;
  // The caller's answer comes at once, saying the backend is being asked: one told `sending` is
  // never then told `refused`.
  if (controls.askAuthorization) await flow.moveTo('awaiting_authorization');
  const denied = await authorize(input, state, controls);
  if (!denied) flow.showSending();
  return denied;
}

/**
 * Four eyes: a payout above the approval amount waits in `awaiting_approval` (no time limit; the
 * deadline watch goes on) until enough different operators approve it, or one refuses it.
 * Answers the refusal, or undefined when it may go.
 */
async function awaitApproval(
  input: WithdrawalInput,
  state: WithdrawalState,
  controls: PayoutControls,
  moveTo: (status: 'awaiting_approval') => Promise<unknown>,
): Promise<WithdrawalRefusal | undefined> {
  if (!(controls.approvalAboveCentavos > 0 && input.amountCentavos > controls.approvalAboveCentavos))
    return undefined;
  const approval: PayoutApprovals = { required: controls.approvers, approvals: [] };
  state.approval = approval;
  await moveTo('awaiting_approval');
  await condition(() => approval.refusedBy !== undefined || approval.approvals.length >= approval.required);
  return approval.refusedBy !== undefined ? 'operator_refused' : undefined;
}

/**
 * The operator's authorization, when configured: answers the refusal, or undefined when the
 * payout may go (approved, or no answer where it fails open).
 */
async function authorize(
  input: WithdrawalInput,
  state: WithdrawalState,
  controls: PayoutControls,
): Promise<WithdrawalRefusal | undefined> {
  if (!controls.askAuthorization) return undefined;
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
