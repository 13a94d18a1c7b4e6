import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  setWorkflowOptions,
  workflowInfo,
} from '@temporalio/workflow';
import type { createWithdrawalActivities, PayoutSent } from '../activities/withdrawal';
import type { createWithdrawalRuleActivities } from '../activities/withdrawal-rules';
import { canonicalJson } from '../common/canonical-json';
import { type BiometricsOutcome, biometricsOutcomeSignal } from '../contracts/biometrics';
import { type FlowRecord, resolveTimings } from '../contracts/flow';
import { pixKeyProblem } from '../contracts/pix-key';
import type { WithdrawalRefusal } from '../contracts/rules';
import {
  PAYOUT_REJECTED,
  type StepUpCause,
  WITHDRAWAL_CONFLICT,
  type WithdrawalInput,
  type WithdrawalRequest,
  type WithdrawalState,
  withdrawalFinalStatuses,
  withdrawalRequestUpdate,
  withdrawalStateQuery,
} from '../contracts/withdrawal';
import { isStepUpProven } from './decision-proofs';
import {
  isoNow,
  LOCAL_LOOK_OPTIONS,
  listenForProviderHints,
  lookAsLocalActivityFirst,
  PROVIDER_CALL_OPTIONS,
  type ProviderHint,
  paymentRecord,
  trackFlow,
  waitForOutcome,
} from './flow-lifecycle';
import {
  deadlineOf,
  deadlineRecorder,
  passPayoutControls,
  payoutControlDetails,
  takePayoutDecisions,
  watchDeadline,
} from './payout-controls';

type WithdrawalActivities = ReturnType<typeof createWithdrawalActivities>;
type RuleActivities = ReturnType<typeof createWithdrawalRuleActivities>;

// The rules read and write our own Postgres (a provider call only for a stale KYC answer): a
// local activity, inside the first workflow task, which the caller's answer waits for.
// Every payout runs the activities below, so they go by their names, without a summary: one is
// kept, encrypted, in each event that schedules the activity.
const { checkPayoutRules } = proxyLocalActivities<RuleActivities>(PROVIDER_CALL_OPTIONS);
const { requestStepUp } = proxyActivities<RuleActivities>({
  ...PROVIDER_CALL_OPTIONS,
  summary: "Ask for the person's biometric identification (step-up)",
});

// Sending money: retried forever on unknown outcomes, which is safe because sendPayout looks
// the transaction up before any second attempt. Business rejections are non-retryable.
const { sendPayout, checkPayout } = proxyActivities<WithdrawalActivities>(PROVIDER_CALL_OPTIONS);
// The look a hint wakes runs as a local activity first (flow-lifecycle.ts says why).
const { checkPayout: checkPayoutLocally } = proxyLocalActivities<WithdrawalActivities>(LOCAL_LOOK_OPTIONS);
// Only when checkPayout found the receipt not rendered yet: the provider renders it with a lag,
// and an empty invoice is retried for up to a day.
const { storeReceipt } = proxyActivities<WithdrawalActivities>({
  startToCloseTimeout: '30s',
  scheduleToCloseTimeout: '24h',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30s' },
  summary: 'Fetch the receipt image and store it',
});

/**
 * Withdrawal: validate the payee key, pass the money rules (refused, or a biometric step-up
 * first) and the payout controls (the deadline watched from then on, operators' approval of a
 * large payout, the operator's authorization), send the payout exactly once, learn the outcome
 * (webhook hint, then inquiry + receipt status; reconciliation's hint when webhooks are lost),
 * and on success store the receipt image.
 */
export async function withdrawalWorkflow(input: WithdrawalInput): Promise<WithdrawalState> {
  const timings = resolveTimings(input.timings);
  const state: WithdrawalState = {
    status: 'validating',
    transactionId: input.transactionId,
    amountCentavos: input.amountCentavos,
    receiptStored: false,
    notifications: 0,
    inquiries: 0,
    startedAt: isoNow(),
    updatedAt: isoNow(),
    ...(input.requestedBy ? { requestedBy: input.requestedBy.toLowerCase() } : {}),
  };
  const details = () => withdrawalDetails(state);
  const flow = trackFlow({
    record: paymentRecord('withdrawal', input.transactionId, input),
    state,
    finalStatuses: withdrawalFinalStatuses,
    details,
  });
  setHandler(withdrawalStateQuery, () => state);
  takePayoutDecisions(state, () => flow.moveTo('awaiting_approval'));
  // The caller's answer says what the rules decided (refused, a step-up link, or on its way): it
  // waits until the withdrawal has left `validating`.
  answerRepeatedRequests(input, state, () => state.status !== 'validating');
  const hint = listenForProviderHints(state);

  const keyProblem = pixKeyProblem(input.pixKey, input.pixType);
  if (keyProblem) return flow.finish('failed', `invalid_pix_key: ${keyProblem}`);

  const verdict = await checkPayoutRules(input, flow.nextRow('validating'));
  if (verdict.verdict === 'refused') return flow.finish('refused', verdict.reason);
  const { controls } = verdict;
  // The deadline runs from the person's request, whatever the flow waits for.
  state.deadline = deadlineOf(state.startedAt, controls);
  const watch = watchDeadline(state, () => !flow.isFinal(), deadlineRecorder(state, flow.nextRow, details));
  const finish = async (status: WithdrawalState['status'], reason?: string) => {
    await watch.stop();
    return flow.finish(status, reason);
  };

  if (verdict.verdict === 'step_up') {
    const refusal = await stepUp(input, state, verdict.cause, (s, r) => flow.moveTo(s, r));
    if (refusal) return finish('refused', refusal);
  }
  // sendPayout writes the `sending` row itself before it sends, and `processing` after.
  const refusal = await passPayoutControls(input, state, controls, {
    moveTo: (s) => flow.moveTo(s),
    showSending: () => flow.showStatus('sending'),
  });
  if (refusal) return finish('refused', refusal);

  let sent: PayoutSent;
  const sending = { ...flow.nextRow('sending'), details: details() };
  const processingRow = flow.rowAfter('processing');
  try {
    sent = await sendPayout(input, sending, processingRow);
  } catch (err) {
    // The provider refused the payout on create: nothing was sent, so the withdrawal fails.
    // Any other failure (a response pixflow cannot read) leaves the outcome unknown: the run
    // fails for an operator.
    const status = rejectedStatus(err);
    if (status !== undefined) return finish('failed', `payout_rejected: HTTP ${status}`);
    throw err;
  }
  state.e2eId = sent.e2eId;
  await flow.recorded('processing', processingRow);

  // A payout just sent is still processing: the first look waits for the outcome notification
  // (reconciliation sends one if the provider's is lost; as for deposits, no timer of its own).
  const outcome = await payoutOutcome(input.transactionId, state, hint, timings.withdrawalDeadlineMs, () =>
    flow.rowAfter('completed'),
  );
  // No outcome after days: hand it to an operator instead of polling forever.
  if (!outcome) return finish('stuck', 'no_final_outcome_before_deadline');
  if (outcome.outcome === 'failed') return finish('failed', outcome.reason);
  state.paidAt = outcome.paidAt;
  state.receiptStored = outcome.receiptStored;
  if (outcome.recorded) {
    await watch.stop();
    return flow.finishRecorded('completed', outcome.completedRow);
  }
  if (!state.receiptStored) {
    await storeReceipt(input.transactionId);
    state.receiptStored = true;
  }
  return finish('completed');
}
// A payout's outcome comes within seconds: a withdrawal ends on the build it started on.
setWorkflowOptions({ versioningBehavior: 'PINNED' }, withdrawalWorkflow);

/**
 * Looks at the payout on each hint until its outcome or the deadline (undefined). A completed
 * payout whose receipt is ready comes with the `completed` row (`nextRow`) its look wrote.
 */
function payoutOutcome(
  transactionId: string,
  state: WithdrawalState,
  hint: ProviderHint,
  deadlineMs: number,
  nextRow: () => FlowRecord,
) {
  return waitForOutcome({
    hint,
    deadline: Date.now() + deadlineMs,
    summary: 'Payout outcome, until the withdrawal deadline',
    look: async () => {
      state.inquiries += 1;
      const completedRow = nextRow();
      const check = await lookAsLocalActivityFirst(
        checkPayoutLocally,
        checkPayout,
        transactionId,
        completedRow,
      );
      state.receiptStatus = check.receiptStatus;
      state.e2eId = check.e2eId ?? state.e2eId;
      return check.outcome === 'processing' ? undefined : { ...check, completedRow };
    },
  });
}

/** What the withdrawal's flows row says besides its status and reason. */
function withdrawalDetails(state: WithdrawalState): Record<string, unknown> {
  return {
    e2eId: state.e2eId,
    receiptStatus: state.receiptStatus,
    stepUp: state.stepUp,
    ...payoutControlDetails(state),
  };
}

/**
 * Money moves once per transactionId: a different request for it is refused, nothing is sent.
 * The answer is the state once `answerable` holds.
 */
function answerRepeatedRequests(input: WithdrawalInput, state: WithdrawalState, answerable: () => boolean) {
  const { timings: _timings, ...asked } = input;
  const request = canonicalJson(asked satisfies WithdrawalRequest);
  const validator = (again: WithdrawalRequest) => {
    if (canonicalJson(again) !== request) throw new Error(WITHDRAWAL_CONFLICT);
  };
  setHandler(
    withdrawalRequestUpdate,
    async () => {
      await condition(answerable);
      return state;
    },
    { validator },
  );
}

/** What a step-up's identification outcome means for the withdrawal: undefined, send it. */
const STEP_UP_REFUSAL: Record<BiometricsOutcome['outcome'], WithdrawalRefusal | undefined> = {
  passed: undefined,
  failed: 'biometrics_failed',
  expired: 'biometrics_timeout',
  unavailable: 'biometrics_unavailable',
};

/** How long past the link's expiry the withdrawal waits for the identification to say so itself. */
const STEP_UP_GRACE_MS = 60_000;

/**
 * The biometric step-up: the person's identification, started after this withdrawal was asked,
 * decides whether it is sent. Answers the refusal reason, or undefined when it passed.
 */
async function stepUp(
  input: WithdrawalInput,
  state: WithdrawalState,
  cause: StepUpCause,
  moveTo: (status: 'awaiting_biometrics', reason: string) => Promise<unknown>,
): Promise<WithdrawalRefusal | undefined> {
  let outcome: BiometricsOutcome['outcome'] | undefined;
  let noStepUp = false;
  // The outcome counts once the identification this withdrawal asked for is found to have
  // recorded it: a signal from anywhere else changes nothing (refused and counted).
  setHandler(biometricsOutcomeSignal, async (o: BiometricsOutcome) => {
    await condition(() => state.stepUp !== undefined || noStepUp);
    if (outcome !== undefined || !state.stepUp) return;
    const claim = {
      cpf: input.client.cpf,
      biometricsWorkflowId: state.stepUp.biometricsWorkflowId,
      runId: o.runId,
      outcome: o.outcome,
      askedAt: state.startedAt,
    };
    if (await isStepUpProven(claim)) outcome ??= o.outcome;
  });
  try {
    const link = await requestStepUp({
      cpf: input.client.cpf,
      waiter: workflowInfo().workflowId,
      askedAt: state.startedAt,
      ...(input.timings ? { timings: input.timings } : {}),
    });
    state.stepUp = { cause, ...link };
  } catch (err) {
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.nonRetryable) {
      noStepUp = true;
      return 'biometrics_unavailable';
    }
    throw err;
  }
  await moveTo('awaiting_biometrics', cause);
  const waitFrom = Date.now();
  const left = Date.parse(state.stepUp.expiresAt ?? '') - Date.now();
  const decided = await condition(() => outcome !== undefined, Math.max(left, 1) + STEP_UP_GRACE_MS, {
    summary: 'Biometric identification outcome, until the link expires',
  });
  // The deadline shows the person's part of the wait apart from pixflow's and the provider's.
  if (state.deadline) state.deadline.waitedForPersonMs += Date.now() - waitFrom;
  const ended = decided && outcome ? outcome : 'expired';
  state.stepUp.outcome = ended;
  return STEP_UP_REFUSAL[ended];
}

/** The provider's HTTP status when a sendPayout failure says it refused the payout. */
function rejectedStatus(err: unknown): unknown {
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  if (!(cause instanceof ApplicationFailure) || cause.type !== PAYOUT_REJECTED) return undefined;
  return cause.details?.[0] ?? 'unknown';
}
