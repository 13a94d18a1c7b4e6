import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { createWithdrawalActivities, PayoutSent } from '../activities/withdrawal';
import { canonicalJson } from '../common/canonical-json';
import { pixKeyProblem } from '../provider/pix-key';
import {
  conflictReasons,
  PAYOUT_REJECTED,
  providerNotificationSignal,
  type WithdrawalRequest,
  type WithdrawalState,
  type WithdrawalStatus,
  withdrawalRequestUpdate,
  withdrawalStateQuery,
} from './definitions';
import { flowRecorder, isoNow } from './flow-record';
import type { WithdrawalInput } from './inputs';
import { PROVIDER_RETRY, pollDelay, timings } from './timings';

type Acts = ReturnType<typeof createWithdrawalActivities>;

// Sending money: retried forever on unknown outcomes, which is safe because sendPayout looks
// the transaction up before any second attempt. Business rejections are non-retryable.
const { sendPayout } = proxyActivities<Acts>({
  startToCloseTimeout: '30s',
  retry: PROVIDER_RETRY,
  summary: 'Send the payout (exactly once: a retry looks it up first)',
});
const { checkPayout } = proxyActivities<Acts>({
  startToCloseTimeout: '30s',
  retry: PROVIDER_RETRY,
  summary: 'Read the payout outcome (inquiry + receipt status; stores a ready receipt)',
});
// Only when checkPayout found the receipt not rendered yet: the provider renders it with a lag,
// and an empty invoice is retried for up to a day.
const { storeReceipt } = proxyActivities<Acts>({
  startToCloseTimeout: '30s',
  scheduleToCloseTimeout: '24h',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30s' },
  summary: 'Fetch the receipt image and store it',
});

const FINAL: WithdrawalStatus[] = ['completed', 'failed', 'stuck'];

/**
 * Withdrawal: validate the payee key, send the payout exactly once, learn the outcome (webhook
 * hint, then inquiry + receipt status; polling when webhooks are lost), and on success store
 * the receipt image.
 */
export async function withdrawalWorkflow(input: WithdrawalInput): Promise<WithdrawalState> {
  const t = timings(input.timings);
  const record = flowRecorder({
    type: 'withdrawal',
    businessId: input.transactionId,
    cpf: input.client.cpf,
    merchant: input.merchant,
    amountCentavos: input.amountCentavos,
  });
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
  let hint = false;

  setHandler(withdrawalStateQuery, () => state);
  const { timings: _t, ...asked } = input;
  const request = canonicalJson(asked satisfies WithdrawalRequest);
  setHandler(withdrawalRequestUpdate, () => state, {
    // Money moves once per transactionId: a different request for it is refused, nothing is sent.
    validator: (again: WithdrawalRequest) => {
      if (canonicalJson(again) !== request) {
        throw new Error(conflictReasons.withdrawal);
      }
    },
  });
  setHandler(providerNotificationSignal, (n) => {
    state.notifications += 1;
    if (n.action === 'updated') hint = true;
  });

  // The new status in the state, and what its record says.
  const enter = (status: WithdrawalStatus, reason?: string) => {
    state.status = status;
    state.reason = reason;
    state.updatedAt = isoNow();
    if (FINAL.includes(status)) state.finishedAt = state.updatedAt;
    return { reason, details: { e2eId: state.e2eId, receiptStatus: state.receiptStatus } };
  };
  const move = (status: WithdrawalStatus, reason?: string) => record(status, enter(status, reason));
  const finish = async (status: WithdrawalStatus, reason?: string) => {
    await move(status, reason);
    await condition(allHandlersFinished);
    return state;
  };

  const keyProblem = pixKeyProblem(input.pixKey, input.pixType);
  if (keyProblem) return finish('failed', `invalid_pix_key: ${keyProblem}`);

  // sendPayout writes the `sending` row itself before it sends: this first workflow task, which
  // the caller's answer waits for, then runs no activity.
  record.show('sending', enter('sending'));
  let sent: PayoutSent;
  try {
    sent = await sendPayout(input, record.row('sending'));
  } catch (err) {
    // The provider refused the payout on create: nothing was sent, so the withdrawal fails.
    // Any other failure (a response pixflow cannot read) leaves the outcome unknown: the run
    // fails for an operator.
    const status = rejectedStatus(err);
    if (status !== undefined) return finish('failed', `payout_rejected: HTTP ${status}`);
    throw err;
  }
  state.e2eId = sent.e2eId;
  await move('processing');

  // A payout just sent is still processing: the first look waits for the outcome notification
  // or the first reconciliation poll, whichever comes first.
  const deadline = Date.now() + t.withdrawalDeadlineMs;
  for (let n = 0; ; n++) {
    const left = deadline - Date.now();
    // No outcome after days: hand it to an operator instead of polling forever.
    if (left <= 0) return finish('stuck', 'no_final_outcome_before_deadline');
    await condition(() => hint, Math.min(pollDelay(t.pollScheduleMs, n), left), {
      summary: 'Wait for the outcome notification or the next reconciliation poll',
    });
    hint = false;
    state.inquiries += 1;
    const check = await checkPayout(input.transactionId);
    state.receiptStatus = check.receiptStatus;
    state.e2eId = check.e2eId ?? state.e2eId;
    if (check.outcome === 'failed') return finish('failed', check.reason);
    if (check.outcome === 'completed') {
      state.paidAt = check.paidAt;
      state.receiptStored = check.receiptStored;
      break;
    }
  }

  if (!state.receiptStored) {
    await storeReceipt(input.transactionId);
    state.receiptStored = true;
  }
  return finish('completed');
}

/** The provider's HTTP status when a sendPayout failure says it refused the payout. */
function rejectedStatus(err: unknown): unknown {
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  if (!(cause instanceof ApplicationFailure) || cause.type !== PAYOUT_REJECTED) return undefined;
  return cause.details?.[0] ?? 'unknown';
}
