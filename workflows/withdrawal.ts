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
import type { createWithdrawalActivities, PayoutCheck } from '../activities/withdrawal';
import type { createWithdrawalRuleActivities, PayoutRulesAnswer } from '../activities/withdrawal-rules';
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
  type WithdrawalStatus,
  withdrawalFinalStatuses,
  withdrawalRequestUpdate,
  withdrawalStateQuery,
} from '../contracts/withdrawal';
import { isStepUpProven } from './decision-proofs';
import {
  awaitHint,
  FlowTracker,
  isLocalActivityFailure,
  isoNow,
  LOCAL_LOOK_OPTIONS,
  listenForProviderHints,
  PROVIDER_CALL_OPTIONS,
  type ProviderHint,
  paymentRecord,
} from './flow-lifecycle';
import {
  type DeadlineWatch,
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
const { checkPayoutRulesAndRecordValidating } = proxyLocalActivities<RuleActivities>(PROVIDER_CALL_OPTIONS);
const { requestStepUp } = proxyActivities<RuleActivities>({
  ...PROVIDER_CALL_OPTIONS,
  summary: "Ask for the person's biometric identification (step-up)",
});

// Sending money: retried forever on unknown outcomes, which is safe because the send looks the
// transaction up before any second attempt. Business rejections are non-retryable.
const { sendPayoutAndRecord, checkPayoutAndRecordCompleted } =
  proxyActivities<WithdrawalActivities>(PROVIDER_CALL_OPTIONS);
// The look a hint wakes runs as a local activity first (flow-lifecycle.ts says why).
const { checkPayoutAndRecordCompleted: checkPayoutLocally } =
  proxyLocalActivities<WithdrawalActivities>(LOCAL_LOOK_OPTIONS);
// Only when the look found the receipt not rendered yet: the provider renders it with a lag,
// and an empty invoice is retried for up to a day.
const { storeReceipt } = proxyActivities<WithdrawalActivities>({
  startToCloseTimeout: '30s',
  scheduleToCloseTimeout: '24h',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30s' },
  summary: 'Fetch the receipt image and store it',
});

/**
 * Withdrawal: validate the payee key, screen it under the money rules (refused, or a biometric
 * step-up first), pass the payout controls (the deadline watched from then on, operators'
 * approval of a large payout, the operator's authorization), send the payout exactly once, learn
 * its outcome (webhook hint, then inquiry + receipt status; reconciliation's hint when webhooks
 * are lost), and on success keep the receipt image.
 */
export async function withdrawalWorkflow(input: WithdrawalInput): Promise<WithdrawalState> {
  const flow = openWithdrawal(input);
  const keyProblem = pixKeyProblem(input.pixKey, input.pixType);
  if (keyProblem) return flow.finish('failed', `invalid_pix_key: ${keyProblem}`);

  const verdict = await screen(input, flow);
  if (verdict.verdict === 'refused') return flow.finish('refused', verdict.reason);
  flow.deadline = watchDeadline(flow, verdict.controls);
  if (verdict.verdict === 'step_up') {
    const refusal = await stepUp(input, flow, verdict.cause);
    if (refusal) return flow.finish('refused', refusal);
  }
  const refusal = await passPayoutControls(input, flow, verdict.controls);
  if (refusal) return flow.finish('refused', refusal);

  const rejected = await send(input, flow);
  if (rejected) return flow.finish('failed', rejected);
  const outcome = await awaitOutcome(input, flow);
  // No outcome after days: hand it to an operator instead of polling forever.
  if (!outcome) return flow.finish('stuck', 'no_final_outcome_before_deadline');
  if (outcome.outcome === 'failed') return flow.finish('failed', outcome.reason);
  return flow.complete(await keepReceipt(input, flow, outcome));
}
// A payout's outcome comes within seconds: a withdrawal ends on the build it started on.
setWorkflowOptions({ versioningBehavior: 'PINNED' }, withdrawalWorkflow);

/**
 * The statuses the PixflowStatus search attribute shows (and every one after): a payout waiting
 * for a person (its owner's identification, the approvers, the authorization) or stopped for an
 * operator. A plain payout shows none: its row does.
 */
const statusesInSearch: readonly WithdrawalStatus[] = [
  'awaiting_biometrics',
  'awaiting_approval',
  'awaiting_authorization',
  'stuck',
];

/** A withdrawal's status changes, and the deadline watched from the rules' verdict on. */
class WithdrawalFlow extends FlowTracker<WithdrawalStatus, WithdrawalState> {
  readonly hint: ProviderHint = listenForProviderHints(this.state);
  deadline?: DeadlineWatch;

  constructor(input: WithdrawalInput) {
    super(
      paymentRecord('withdrawal', input.transactionId, input),
      initialState(input),
      withdrawalFinalStatuses,
      0,
      statusesInSearch,
    );
  }

  protected override details() {
    return withdrawalDetails(this.state);
  }

  /** Ends the withdrawal: the deadline watch stops first, so its last mark's row comes before. */
  override async finish(status: WithdrawalStatus, reason?: string): Promise<WithdrawalState> {
    await this.deadline?.stop();
    return super.finish(status, reason);
  }

  /** Ends it completed: its row written by the look that found it so (`written`), or now. */
  async complete(written: FlowRecord | undefined): Promise<WithdrawalState> {
    if (!written) return this.finish('completed');
    await this.deadline?.stop();
    await this.wrote({ ...written, status: 'completed' });
    return this.settle();
  }
}

function initialState(input: WithdrawalInput): WithdrawalState {
  return {
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
}

/** The withdrawal's flow, answering its state query, its repeated requests and payout decisions. */
function openWithdrawal(input: WithdrawalInput): WithdrawalFlow {
  const flow = new WithdrawalFlow(input);
  setHandler(withdrawalStateQuery, () => flow.state);
  takePayoutDecisions(flow);
  answerRepeatedRequests(input, flow.state);
  return flow;
}

/**
 * Screen: the money rules' verdict, under the policy version it names (kept in the state and the
 * flows row). The rules write the `validating` row with the daily limit's count.
 */
async function screen(input: WithdrawalInput, flow: WithdrawalFlow): Promise<PayoutRulesAnswer> {
  const verdict = await checkPayoutRulesAndRecordValidating(input, flow.nextRow('validating'));
  flow.state.policyVersion = verdict.policyVersion;
  // A brand that sets rules of its own: its overrides' version, laid on the operator's.
  if (verdict.brandPolicyVersion !== undefined) flow.state.brandPolicyVersion = verdict.brandPolicyVersion;
  return verdict;
}

/**
 * Send: the payout goes exactly once. `sending` shows at once (the caller's answer says so); the
 * send writes its row before it sends and `processing` after. Answers why the provider rejected
 * the payout (nothing was sent), or undefined once it was sent.
 */
async function send(input: WithdrawalInput, flow: WithdrawalFlow): Promise<string | undefined> {
  flow.show('sending');
  const sending = flow.nextRow('sending');
  const processing = flow.nextRow('processing');
  try {
    flow.state.e2eId = (await sendPayoutAndRecord(input, sending, processing)).e2eId;
  } catch (err) {
    // Any failure but the provider's refusal (a response pixflow cannot read) leaves the
    // outcome unknown: the run fails for an operator.
    const status = rejectedStatus(err);
    if (status === undefined) throw err;
    return `payout_rejected: HTTP ${status}`;
  }
  await flow.wrote(processing);
  return undefined;
}

type PayoutOutcome = PayoutCheck & { outcome: 'completed' | 'failed'; row: FlowRecord };

/**
 * Outcome: a payout just sent is still processing, so it looks on each hint (the outcome
 * notification; reconciliation sends one if the provider's is lost; as for deposits, no timer of
 * its own) until the outcome, or the withdrawal deadline (undefined).
 */
async function awaitOutcome(
  input: WithdrawalInput,
  flow: WithdrawalFlow,
): Promise<PayoutOutcome | undefined> {
  const deadline = Date.now() + resolveTimings(input.timings).withdrawalDeadlineMs;
  while (await awaitOutcomeHint(flow, deadline)) {
    const check = await lookAtPayout(input.transactionId, flow);
    if (check.outcome !== 'processing') return { ...check, outcome: check.outcome };
  }
  return undefined;
}

/**
 * The next hint, or false at the withdrawal deadline. While the payout deadline's watch waits for
 * a mark due before then, its timer already bounds the wait: this one starts none of its own (a
 * Temporal action and two events fewer a payout), only once the watch has marked the deadline
 * missed.
 */
async function awaitOutcomeHint(flow: WithdrawalFlow, deadline: number): Promise<boolean> {
  const watch = flow.deadline;
  const dueAt = Date.parse(flow.state.deadline?.dueAt ?? '');
  while (watch?.running() && dueAt <= deadline) {
    await condition(() => flow.hint.pending || !watch.running());
    if (flow.hint.pending) {
      flow.hint.pending = false;
      return true;
    }
  }
  return awaitHint(flow.hint, deadline, 'Payout outcome, until the withdrawal deadline');
}

/**
 * One look at the payout, first as a local activity. A completed payout whose receipt is ready
 * has the receipt stored and its `completed` row (`row`) written by the same look.
 */
async function lookAtPayout(transactionId: string, flow: WithdrawalFlow) {
  const { state } = flow;
  state.inquiries += 1;
  const row = flow.nextRow('completed');
  let check: PayoutCheck;
  try {
    check = await checkPayoutLocally(transactionId, row);
  } catch (err) {
    if (!isLocalActivityFailure(err)) throw err;
    check = await checkPayoutAndRecordCompleted(transactionId, row);
  }
  state.receiptStatus = check.receiptStatus;
  state.e2eId = check.e2eId ?? state.e2eId;
  return { ...check, row };
}

/**
 * Receipt: the completed payout's receipt image is kept (stored by the look that found it ready,
 * or fetched now). Answers the `completed` row the look wrote, if it did.
 */
async function keepReceipt(
  input: WithdrawalInput,
  flow: WithdrawalFlow,
  outcome: PayoutOutcome,
): Promise<FlowRecord | undefined> {
  const { state } = flow;
  state.paidAt = outcome.paidAt;
  state.receiptStored = outcome.receiptStored;
  if (outcome.recorded) return outcome.row;
  if (!state.receiptStored) {
    await storeReceipt(input.transactionId);
    state.receiptStored = true;
  }
  return undefined;
}

/** What the withdrawal's flows row says besides its status and reason. */
function withdrawalDetails(state: WithdrawalState): Record<string, unknown> {
  return {
    e2eId: state.e2eId,
    receiptStatus: state.receiptStatus,
    stepUp: state.stepUp,
    policyVersion: state.policyVersion,
    brandPolicyVersion: state.brandPolicyVersion,
    ...payoutControlDetails(state),
  };
}

/**
 * Money moves once per transactionId: a different request for it is refused, nothing is sent.
 * The answer says what the rules decided (refused, a step-up link, or on its way): the state once
 * the withdrawal has left `validating`.
 */
function answerRepeatedRequests(input: WithdrawalInput, state: WithdrawalState) {
  const { timings: _timings, ...asked } = input;
  const request = canonicalJson(asked satisfies WithdrawalRequest);
  const validator = (again: WithdrawalRequest) => {
    if (canonicalJson(again) !== request) throw new Error(WITHDRAWAL_CONFLICT);
  };
  setHandler(
    withdrawalRequestUpdate,
    async () => {
      await condition(() => state.status !== 'validating');
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
  flow: WithdrawalFlow,
  cause: StepUpCause,
): Promise<WithdrawalRefusal | undefined> {
  const { state } = flow;
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
  await flow.moveTo('awaiting_biometrics', cause);
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

/** The provider's HTTP status when the send's failure says it refused the payout. */
function rejectedStatus(err: unknown): unknown {
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  if (!(cause instanceof ApplicationFailure) || cause.type !== PAYOUT_REJECTED) return undefined;
  return cause.details?.[0] ?? 'unknown';
}
