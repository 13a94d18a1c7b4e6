import {
  ActivityFailure,
  ApplicationFailure,
  patched,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { createWithdrawalActivities, PayoutCheck, PayoutSent } from '../activities/withdrawal';
import { canonicalJson } from '../common/canonical-json';
import { resolveTimings } from '../contracts/shared';
import {
  PAYOUT_REJECTED,
  WITHDRAWAL_CONFLICT,
  type WithdrawalInput,
  type WithdrawalRequest,
  type WithdrawalState,
  withdrawalFinalStatuses,
  withdrawalRequestUpdate,
  withdrawalStateQuery,
} from '../contracts/withdrawal';
import { pixKeyProblem } from '../provider/pix-key';
import {
  isoNow,
  listenForProviderHints,
  PROVIDER_RETRY,
  paymentRecord,
  trackFlow,
  waitForOutcome,
} from './flow-lifecycle';

type WithdrawalActivities = ReturnType<typeof createWithdrawalActivities>;

// Sending money: retried forever on unknown outcomes, which is safe because sendPayout looks
// the transaction up before any second attempt. Business rejections are non-retryable.
const { sendPayout } = proxyActivities<WithdrawalActivities>({
  startToCloseTimeout: '30s',
  retry: PROVIDER_RETRY,
  summary: 'Send the payout (exactly once: a retry looks it up first)',
});
const { checkPayout } = proxyActivities<WithdrawalActivities>({
  startToCloseTimeout: '30s',
  retry: PROVIDER_RETRY,
  summary: 'Read the payout outcome (inquiry + receipt status; stores a ready receipt)',
});
// Only when checkPayout found the receipt not rendered yet: the provider renders it with a lag,
// and an empty invoice is retried for up to a day.
const { storeReceipt } = proxyActivities<WithdrawalActivities>({
  startToCloseTimeout: '30s',
  scheduleToCloseTimeout: '24h',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30s' },
  summary: 'Fetch the receipt image and store it',
});

/**
 * Withdrawal: validate the payee key, send the payout exactly once, learn the outcome (webhook
 * hint, then inquiry + receipt status; polling when webhooks are lost), and on success store
 * the receipt image.
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
  };
  const flow = trackFlow({
    record: paymentRecord('withdrawal', input.transactionId, input),
    state,
    finalStatuses: withdrawalFinalStatuses,
    details: () => ({ e2eId: state.e2eId, receiptStatus: state.receiptStatus }),
  });
  setHandler(withdrawalStateQuery, () => state);
  answerRepeatedRequests(input, state);
  const hint = listenForProviderHints(state);

  // A composite key's first part is checked only in runs started since that rule: older
  // histories replay with the rule they ran under.
  const checkCompositeKeyPart = patched('composite-key-part-checked');
  const keyProblem = pixKeyProblem(input.pixKey, input.pixType, { checkCompositeKeyPart });
  if (keyProblem) return flow.finish('failed', `invalid_pix_key: ${keyProblem}`);

  // sendPayout writes the `sending` row itself before it sends: this first workflow task, which
  // the caller's answer waits for, then runs no activity.
  flow.moveToRecordedByActivity('sending');
  let sent: PayoutSent;
  try {
    sent = await sendPayout(input, flow.rowForActivity('sending'));
  } catch (err) {
    // The provider refused the payout on create: nothing was sent, so the withdrawal fails.
    // Any other failure (a response pixflow cannot read) leaves the outcome unknown: the run
    // fails for an operator.
    const status = rejectedStatus(err);
    if (status !== undefined) return flow.finish('failed', `payout_rejected: HTTP ${status}`);
    throw err;
  }
  state.e2eId = sent.e2eId;
  await flow.moveTo('processing');

  // A payout just sent is still processing: the first look waits for the outcome notification
  // or the first reconciliation poll, whichever comes first.
  const outcome = await waitForOutcome({
    hint,
    pollScheduleMs: timings.pollScheduleMs,
    deadline: Date.now() + timings.withdrawalDeadlineMs,
    summary: 'Wait for the outcome notification or the next reconciliation poll',
    look: async (): Promise<PayoutCheck | undefined> => {
      state.inquiries += 1;
      const check = await checkPayout(input.transactionId);
      state.receiptStatus = check.receiptStatus;
      state.e2eId = check.e2eId ?? state.e2eId;
      return check.outcome === 'processing' ? undefined : check;
    },
  });
  // No outcome after days: hand it to an operator instead of polling forever.
  if (!outcome) return flow.finish('stuck', 'no_final_outcome_before_deadline');
  if (outcome.outcome === 'failed') return flow.finish('failed', outcome.reason);
  state.paidAt = outcome.paidAt;
  state.receiptStored = outcome.receiptStored;
  if (!state.receiptStored) {
    await storeReceipt(input.transactionId);
    state.receiptStored = true;
  }
  return flow.finish('completed');
}

/** Money moves once per transactionId: a different request for it is refused, nothing is sent. */
function answerRepeatedRequests(input: WithdrawalInput, state: WithdrawalState) {
  const { timings: _timings, ...asked } = input;
  const request = canonicalJson(asked satisfies WithdrawalRequest);
  setHandler(withdrawalRequestUpdate, () => state, {
    validator: (again: WithdrawalRequest) => {
      if (canonicalJson(again) !== request) throw new Error(WITHDRAWAL_CONFLICT);
    },
  });
}

/** The provider's HTTP status when a sendPayout failure says it refused the payout. */
function rejectedStatus(err: unknown): unknown {
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  if (!(cause instanceof ApplicationFailure) || cause.type !== PAYOUT_REJECTED) return undefined;
  return cause.details?.[0] ?? 'unknown';
}
