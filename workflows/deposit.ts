import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  TimeoutFailure,
} from '@temporalio/workflow';
import type { createDepositActivities } from '../activities/deposit';
import {
  conflictReasons,
  type DepositQrRequest,
  type DepositState,
  type DepositStatus,
  depositStateQuery,
  providerNotificationSignal,
  qrCodeUpdate,
} from './definitions';
import { flowRecorder, isoNow } from './flow-record';
import type { DepositInput } from './inputs';
import { PROVIDER_RETRY, pollDelay, timings } from './timings';

// A local activity: the API's caller waits for the QR, and a local activity runs inside the
// workflow task that accepted the update, so the answer needs no activity task round trip
// through the server (bench/README.md measures the difference). Safe to re-run if the task is
// retried: the provider answers the same QR for the same txid and body.
const { createDepositQr } = proxyLocalActivities<ReturnType<typeof createDepositActivities>>({
  startToCloseTimeout: '30s',
  // The caller waits for the QR: give up after a few minutes rather than hang.
  scheduleToCloseTimeout: '5m',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '30s' },
  summary: 'Create the Pix QR code at the provider',
});
const { inquireDeposit } = proxyActivities<ReturnType<typeof createDepositActivities>>({
  startToCloseTimeout: '30s',
  retry: PROVIDER_RETRY,
  summary: 'Deposit inquiry: has it been paid?',
});

const FINAL: DepositStatus[] = ['completed', 'expired', 'failed'];

/**
 * Deposit: create the Pix QR (handed to the API through the `qrCode` update as soon as it
 * exists), then wait for payment. A notification is only a hint to look: payment is proven by
 * the deposit inquiry. Lost notifications are covered by polling the inquiry on a back-off
 * schedule until the QR expires; one last look after expiry, then `expired`.
 */
export async function depositWorkflow(input: DepositInput): Promise<DepositState> {
  const t = timings(input.timings);
  const record = flowRecorder({
    type: 'deposit',
    businessId: input.txid,
    cpf: input.client.cpf,
    merchant: input.merchant,
    amountCentavos: input.amountCentavos,
  });
  const state: DepositState = {
    status: 'creating',
    txid: input.txid,
    amountCentavos: input.amountCentavos,
    notifications: 0,
    inquiries: 0,
    startedAt: isoNow(),
    updatedAt: isoNow(),
  };
  let hint = false;

  setHandler(depositStateQuery, () => state);

  setHandler(
    qrCodeUpdate,
    async (asked) => {
      await condition(() => state.qr !== undefined || state.status === 'failed');
      if (!state.qr) throw ApplicationFailure.nonRetryable(state.reason ?? 'deposit failed', 'DepositFailed');
      return { qr: state.qr, created: asked.requestId !== undefined && asked.requestId === input.requestId };
    },
    {
      // Same txid must mean the same deposit: another amount, payer or merchant is a conflict.
      validator: (asked: DepositQrRequest) => {
        if (
          asked.amountCentavos !== input.amountCentavos ||
          asked.payerCpf !== input.client.cpf ||
          asked.merchant !== input.merchant
        ) {
          throw new Error(conflictReasons.deposit);
        }
      },
    },
  );

  setHandler(providerNotificationSignal, (n) => {
    state.notifications += 1;
    if (n.action === 'updated') hint = true;
  });

  // The new status in the state, and what its record says.
  const enter = (status: DepositStatus, reason?: string) => {
    state.status = status;
    state.reason = reason;
    state.updatedAt = isoNow();
    if (FINAL.includes(status)) state.finishedAt = state.updatedAt;
    return { reason, details: { e2eId: state.payment?.e2eId, paidAt: state.payment?.paidAt } };
  };
  const move = (status: DepositStatus, reason?: string) => record(status, enter(status, reason));

  const paid = async (): Promise<boolean> => {
    state.inquiries += 1;
    const check = await inquireDeposit(input.txid);
    if (!check.paid) return false;
    state.payment = {
      e2eId: check.e2eId ?? '',
      payerName: check.payerName,
      payerCpfMasked: check.payerCpfMasked,
      paidAt: check.paidAt,
    };
    return true;
  };

  // The QR first: the caller is waiting on it. The same local activity writes the deposit's
  // flows row as awaiting payment once the QR exists, so the answer waits for one activity.
  try {
    state.qr = await createDepositQr(input, record.row('awaiting_payment'));
  } catch (err) {
    // A local activity's failure arrives either wrapped in an ActivityFailure or as its cause.
    if (
      err instanceof ActivityFailure ||
      err instanceof ApplicationFailure ||
      err instanceof TimeoutFailure
    ) {
      const cause = err instanceof ActivityFailure ? err.cause : err;
      const reason = cause instanceof ApplicationFailure ? cause.type : undefined;
      await move('failed', reason ?? 'provider_unavailable');
      await condition(allHandlersFinished);
      return state;
    }
    throw err;
  }
  record.show('awaiting_payment', enter('awaiting_payment'));

  const expiresAt = new Date(state.qr.expiresAt).getTime();
  for (let n = 0; ; n++) {
    const untilExpiry = expiresAt - Date.now();
    if (untilExpiry <= 0) break;
    // Wake on a notification, or at the next reconciliation poll, whichever comes first.
    await condition(() => hint, Math.min(pollDelay(t.pollScheduleMs, n), untilExpiry), {
      summary: 'Wait for the payment notification or the next reconciliation poll',
    });
    hint = false;
    if (await paid()) break;
  }
  if (state.payment || (await paid())) await move('completed');
  else await move('expired', 'qr_expired_unpaid');
  await condition(allHandlersFinished);
  return state;
}
