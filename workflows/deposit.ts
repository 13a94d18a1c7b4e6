import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import type { createDepositActivities } from '../activities/deposit';
import {
  DEPOSIT_CONFLICT,
  DEPOSIT_FAILED,
  type DepositHoldReason,
  type DepositInput,
  type DepositQrRequest,
  type DepositResolutionRequest,
  type DepositState,
  depositFinalStatuses,
  depositNotHeld,
  depositStateQuery,
  LOCAL_INQUIRY_PATCH,
  PAYER_CHECK_PATCH,
  qrCodeUpdate,
  resolutionUpdate,
} from '../contracts/deposit';
import {
  isLocalActivityFailure,
  isoNow,
  LOOK_HERE_OPTIONS,
  listenForProviderHints,
  lookHereFirst,
  PROVIDER_RETRY,
  paymentRecord,
  trackFlow,
  waitForOutcome,
} from './flow-lifecycle';

type DepositActivities = ReturnType<typeof createDepositActivities>;

// A local activity: the API's caller waits for the QR, and a local activity runs inside the
// workflow task that accepted the update, so the answer needs no activity task round trip
// through the server (bench/README.md measures the difference). Safe to re-run if the task is
// retried: the provider answers the same QR for the same txid and body. Every deposit runs both
// activities, so they go by their names, without a summary: one is kept, encrypted, in each
// event that schedules the activity (about 160 bytes each).
const { createDepositQr } = proxyLocalActivities<DepositActivities>({
  startToCloseTimeout: '30s',
  // The caller waits for the QR: give up after a few minutes rather than hang.
  scheduleToCloseTimeout: '5m',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '30s' },
});
const { inquireDeposit } = proxyActivities<DepositActivities>({
  startToCloseTimeout: '30s',
  retry: PROVIDER_RETRY,
});
// The inquiry a hint wakes: here first (flow-lifecycle.ts says why), else through the server.
const { inquireDeposit: inquireDepositHere } = proxyLocalActivities<DepositActivities>(LOOK_HERE_OPTIONS);

/**
 * Deposit: create the Pix QR (handed to the API through the `qrCode` update as soon as it
 * exists), then wait for payment. A notification is only a hint to look: payment is proven by
 * the deposit inquiry. A lost notification is made up for by reconciliation, which looks the
 * deposit up on its schedule and sends the hint; one last look after expiry, then `expired`. A payment the rules
 * hold (someone else paid it) is `held` until an operator's `resolution`: `completed` when
 * accepted, `to_return` when the money is to go back.
 */
export async function depositWorkflow(input: DepositInput): Promise<DepositState> {
  // The result leaves out the QR: its history keeps it already (the local activity's marker and
  // the update's answer), and a query of the closed flow still shows it.
  const { qr: _qr, ...result } = await runDeposit(input);
  return result;
}

async function runDeposit(input: DepositInput): Promise<DepositState> {
  const state: DepositState = {
    status: 'creating',
    txid: input.txid,
    amountCentavos: input.amountCentavos,
    notifications: 0,
    inquiries: 0,
    startedAt: isoNow(),
    updatedAt: isoNow(),
  };
  const flow = trackFlow({
    record: paymentRecord('deposit', input.txid, input),
    state,
    finalStatuses: depositFinalStatuses,
    details: () => ({
      e2eId: state.payment?.e2eId,
      paidAt: state.payment?.paidAt,
      payerIsClient: state.payment?.payerIsClient,
      resolution: state.resolution,
    }),
  });
  setHandler(depositStateQuery, () => state);
  answerQrRequests(input, state);
  const resolved = answerResolutions(input, state);
  const hint = listenForProviderHints(state);
  let hold: DepositHoldReason | undefined;

  /** Asks the provider whether the deposit is paid; keeps the payment, and the rules' hold, when it is. */
  const lookForPayment = async (): Promise<true | undefined> => {
    state.inquiries += 1;
    // Since the payer check, the inquiry gets the client's CPF (already in this input) to tell
    // whether the person paid; older runs replay the inquiry they made.
    const check = !patched(PAYER_CHECK_PATCH)
      ? await inquireDeposit(input.txid)
      : patched(LOCAL_INQUIRY_PATCH)
        ? await lookHereFirst(inquireDepositHere, inquireDeposit, input.txid, input.client.cpf)
        : await inquireDeposit(input.txid, input.client.cpf);
    if (!check.paid) return undefined;
    state.payment = {
      e2eId: check.e2eId ?? '',
      payerName: check.payerName,
      payerCpfMasked: check.payerCpfMasked,
      paidAt: check.paidAt,
      ...(check.payerIsClient === undefined ? {} : { payerIsClient: check.payerIsClient }),
    };
    hold = check.hold;
    return true;
  };

  // The QR first: the caller is waiting on it. The same local activity writes the deposit's
  // flows row as awaiting payment once the QR exists, so the answer waits for one activity.
  try {
    state.qr = await createDepositQr(input, flow.rowForActivity('awaiting_payment'));
  } catch (err) {
    const reason = qrFailureReason(err);
    if (reason === undefined) throw err;
    return flow.finish('failed', reason);
  }
  flow.moveToRecordedByActivity('awaiting_payment');

  // No reconciliation timer of its own: the sweep sends the hint when it finds the deposit paid
  // (runs started with polls keep their timers' commands: only the durations differ, which
  // replay does not compare, and every saved history still replays).
  await waitForOutcome({
    hint,
    deadline: new Date(state.qr.expiresAt).getTime(),
    look: lookForPayment,
  });
  if (!(state.payment || (await lookForPayment()))) return flow.finish('expired', 'qr_expired_unpaid');
  if (!hold) return flow.finish('completed');

  // Not credited: an operator decides. No deadline: the money is here, and only a person may
  // say whether it stays.
  await flow.moveTo('held', hold);
  await condition(() => state.resolution !== undefined);
  const accepted = state.resolution?.decision === 'accept';
  await flow.moveTo(accepted ? 'completed' : 'to_return', accepted ? undefined : hold);
  resolved.done = true;
  return flow.settle();
}

/**
 * The `resolution` update: an operator's decision on a held deposit, refused unless the deposit
 * is held and not decided yet. It answers once the status it leads to is recorded.
 */
function answerResolutions(input: DepositInput, state: DepositState): { done: boolean } {
  const resolved = { done: false };
  setHandler(
    resolutionUpdate,
    async ({ decision, by, reason }) => {
      state.resolution = { decision, by, reason, at: isoNow() };
      await condition(() => resolved.done);
      return { txid: input.txid, decision, by, reason, status: state.status };
    },
    {
      validator: (asked: DepositResolutionRequest) => {
        if (state.status !== 'held' || state.resolution) {
          throw new Error(depositNotHeld(state.status, state.resolution?.decision));
        }
        if (asked.decision !== 'accept' && asked.decision !== 'return') {
          throw new Error('decision must be accept or return');
        }
      },
    },
  );
  return resolved;
}

/**
 * The `qrCode` update: the same txid must mean the same deposit (another amount, payer or
 * merchant is a conflict); the answer waits for the QR, or fails with the deposit.
 */
function answerQrRequests(input: DepositInput, state: DepositState) {
  setHandler(
    qrCodeUpdate,
    async (asked) => {
      await condition(() => state.qr !== undefined || state.status === 'failed');
      if (!state.qr) throw ApplicationFailure.nonRetryable(state.reason ?? 'deposit failed', DEPOSIT_FAILED);
      return { qr: state.qr, created: asked.requestId !== undefined && asked.requestId === input.requestId };
    },
    {
      validator: (asked: DepositQrRequest) => {
        if (
          asked.amountCentavos !== input.amountCentavos ||
          asked.payerCpf !== input.client.cpf ||
          asked.merchant !== input.merchant
        ) {
          throw new Error(DEPOSIT_CONFLICT);
        }
      },
    },
  );
}

/** Why the QR could not be created, when the provider said so or never answered; else undefined. */
function qrFailureReason(err: unknown): string | undefined {
  if (!isLocalActivityFailure(err)) return undefined;
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return (cause instanceof ApplicationFailure ? cause.type : undefined) ?? 'provider_unavailable';
}
