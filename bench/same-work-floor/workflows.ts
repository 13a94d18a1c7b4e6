import {
  allHandlersFinished,
  condition,
  defineSignal,
  defineUpdate,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import type { Qr, SameWorkActivities, SameWorkDepositInput, SameWorkWithdrawalInput } from './activities';

// The same-work floor's workflows: the least a correct durable deposit or payout needs on this
// stack. The caller's update-with-start is answered once one local activity has created the
// charge (or the payout) at the provider and written its row; each notification is a signal,
// answered by one local activity that asks the provider (the inquiry proves the outcome, the
// notification only hints at it) and updates the row. Run by bench/same-work-floor/worker.ts.

export const qrUpdate = defineUpdate<Qr>('qr');
export const payoutUpdate = defineUpdate<string>('payout');
/** The provider notified something about this transaction: look. */
export const notifiedSignal = defineSignal('notified');

export const sameWorkDepositId = (txid: string) => `same-work-deposit-${txid}`;
export const sameWorkWithdrawalId = (transactionId: string) => `same-work-withdrawal-${transactionId}`;

// Local, as pixflow's hot-path activities are: no activity task round trip through the server.
const { createDeposit, settleDeposit, createPayout, settlePayout } = proxyLocalActivities<SameWorkActivities>(
  {
    startToCloseTimeout: '30s',
    scheduleToCloseTimeout: '5m',
  },
);

/** Waits for notifications and looks each time, until the provider says the transaction is done. */
async function lookOnEachNotification(
  notified: () => number,
  look: () => Promise<string>,
  deadline?: number,
): Promise<string> {
  for (let seen = 0; ; ) {
    const hint = () => notified() > seen;
    const hinted =
      deadline === undefined
        ? await condition(hint).then(() => true)
        : await condition(hint, Math.max(1, deadline - Date.now()));
    seen = notified();
    const status = await look();
    // Past the deadline the last look decides, whatever it found.
    if (status !== 'processing' || !hinted) return status;
  }
}

export async function sameWorkDeposit(input: SameWorkDepositInput): Promise<string> {
  let qr: Qr | undefined;
  let notified = 0;
  setHandler(notifiedSignal, () => {
    notified += 1;
  });
  setHandler(qrUpdate, async () => {
    await condition(() => qr !== undefined);
    return qr as Qr;
  });
  qr = await createDeposit(input);
  const status = await lookOnEachNotification(
    () => notified,
    () => settleDeposit(input.txid),
    Date.parse(qr.expiry),
  );
  await condition(allHandlersFinished);
  return status;
}

export async function sameWorkWithdrawal(input: SameWorkWithdrawalInput): Promise<string> {
  let sent = false;
  let notified = 0;
  setHandler(notifiedSignal, () => {
    notified += 1;
  });
  setHandler(payoutUpdate, async () => {
    await condition(() => sent);
    return 'sending';
  });
  await createPayout(input);
  sent = true;
  const status = await lookOnEachNotification(
    () => notified,
    () => settlePayout(input.transactionId),
  );
  await condition(allHandlersFinished);
  return status;
}
