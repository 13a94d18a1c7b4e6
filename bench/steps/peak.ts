import { WorkflowNotFoundError } from '@temporalio/client';
import { depositWorkflowId } from '../../contracts/deposit';
import type { Bench } from '../harness';
import { closedLoop, type Launched, type StepResult, step } from '../load';
import { awaitingPayment, completedAt, payDeposit, postDeposit, providerCalls, setAuto } from '../pixflow';
import { cpuPercentBetween, cpuSnapshot, PeakRss } from '../proc';
import { sameWorkDepositId } from '../same-work-floor/workflows';
import { say, settings, sleep } from '../settings';
import { round, type Summary, summarize } from '../stats';
import {
  describeEvidence,
  sampleEvidence,
  type TailEvidence,
  type Timed,
  tailEvidence,
  timedLaunch,
} from '../tail-evidence';
import { launchSameWork, withNotificationsToSameWork } from './same-work';

// The peak: what users meet on a busy day. New deposits at a fixed rate for a long while, with
// the stack's production QR lifetime; half of them never paid (they stay open until their QR
// expires), the others paid by their payer at a random moment 5 to 120 s after the QR was shown,
// and a few of those payments' notifications lost, so that only reconciliation finds them. Just
// before it, the same offering against the same-work floor, for a shorter while.

export interface Peak {
  rate: number;
  /** How long deposits were offered (s). */
  seconds: number;
  offered: number;
  /** Answered 201 within the client's timeout. */
  served: number;
  errorsBy: Record<string, number>;
  timeouts: number;
  serverErrors: number;
  post: Summary;
  paid: number;
  /** Paid deposits whose payment notification was lost. */
  lost: number;
  unpaid: number;
  /** Payments the provider refused (a QR expired before its payer came, say). */
  payRefused: number;
  /** Payment (the provider's clock) → `completed` row, for payments notified. */
  paidToCompleted: Summary;
  paidNotCompleted: number;
  /** The same for payments whose notification was lost: reconciliation's time to find them. */
  lostToCompleted: Summary;
  lostNotCompleted: number;
  /** Seconds from the last payment until every paid deposit was completed (or the wait ran out). */
  waitedSeconds: number;
  workerRssPeak: number;
  /** The provider's count of inquiries while the peak ran, per deposit offered. */
  inquiries: number;
  /** Deposits still awaiting payment at the end (the unpaid ones, until their QR expires). */
  openAtEnd: number;
  /** CPU of each part of the stack over the peak, % of one core. */
  cpuPercent: Record<string, number>;
  stealPct: number;
  /** Unpaid deposits, and when each was created (ms): the ingress figure's targets. */
  unpaidTxids: { txid: string; createdAt: number }[];
  /** What the answers over the p99 waited on, beside a sample of the others (tail-evidence.ts). */
  tail: TailEvidence;
}

interface Payment {
  txid: string;
  lost: boolean;
  /** When the provider says it was paid (ms); undefined when it refused. */
  paidAt: number | undefined;
}

const between = ([lo, hi]: readonly [number, number]) => lo + Math.random() * (hi - lo);

/** Waits until every paid deposit is completed or `settings.peak.detectWaitMs` has passed. */
async function waitForCompletion(b: Bench, txids: string[]) {
  const until = Date.now() + settings.peak.detectWaitMs;
  let done = await completedAt(b, 'deposit', txids);
  while (done.size < txids.length && Date.now() < until) {
    await sleep(2_000);
    done = await completedAt(b, 'deposit', txids);
  }
  return done;
}

function timesToComplete(payments: Payment[], done: Map<string, number>) {
  const paid = payments.filter((p) => p.paidAt !== undefined);
  const times = paid
    .filter((p) => done.has(p.txid))
    .map((p) => (done.get(p.txid) as number) - (p.paidAt as number));
  return { summary: summarize(times), notCompleted: paid.length - times.length };
}

/**
 * New deposits at `rate` for `ms` (the peak's length), each sent by `launch`; each answered one
 * is left unpaid or paid by its payer later (its notification lost or not). Ends once every
 * payer has paid.
 */
export async function offerAndPay(
  b: Bench,
  rate: number,
  ms = settings.peak.ms,
  launch: () => Promise<Launched> = () => postDeposit(b),
) {
  const { unpaidShare, payAfterMs, lostShare } = settings.peak;
  const payments: Promise<Payment>[] = [];
  const unpaidTxids: { txid: string; createdAt: number }[] = [];
  const pay = (txid: string, lost: boolean): Promise<Payment> =>
    sleep(between(payAfterMs)).then(async () => ({
      txid,
      lost,
      paidAt: await payDeposit(b, txid, lost).catch(() => undefined),
    }));
  const offered = await step(rate, ms, launch, async () => [], {
    drainMs: 0,
    onAccepted: (txid, at) => {
      if (Math.random() < unpaidShare) unpaidTxids.push({ txid, createdAt: at });
      else payments.push(pay(txid, Math.random() < lostShare));
    },
  });
  say(
    `   offered ${offered.offered} in ${round((offered.t1 - offered.t0) / 1000)} s; waiting for the last payers...`,
  );
  const paid = await Promise.all(payments);
  return { offered, paid, unpaidTxids };
}

/** What the caller of an offering saw: answers within the client's timeout, and the failures by kind. */
function answersOf(r: StepResult) {
  return {
    offered: r.offered,
    served: r.latenciesMs.length,
    errorsBy: r.errorsBy,
    timeouts: (r.errorsBy.timeout ?? 0) + (r.errorsBy.network ?? 0),
    serverErrors: Object.entries(r.errorsBy)
      .filter(([k]) => Number(k) >= 500)
      .reduce((a, [, v]) => a + v, 0),
    post: summarize(r.latenciesMs),
  };
}

/** The same-work floor's peak: what its POST /deposits answers under the peak's offering. */
export type SameWorkPeak = Pick<
  Peak,
  | 'rate'
  | 'seconds'
  | 'offered'
  | 'served'
  | 'errorsBy'
  | 'timeouts'
  | 'serverErrors'
  | 'post'
  | 'paid'
  | 'unpaid'
  | 'payRefused'
  | 'stealPct'
>;

/**
 * The peak's offering, payers included, against the same-work floor for
 * `settings.peak.sameWorkMs`, its notifications sent to it: the reference pixflow's peak POST p99
 * is read against. Its paid deposits are not waited for (it has no reconciliation: a lost
 * notification leaves its deposit open until the QR expires, as an unpaid one); those still open
 * once the last payer has paid are terminated.
 */
export async function sameWorkPeak(b: Bench, rate: number): Promise<SameWorkPeak> {
  const ms = settings.peak.sameWorkMs;
  say(`same-work floor's peak: ${round(rate)} deposits/s for ${ms / 60_000} min, paid as in the peak...`);
  await setAuto(b, null, settings.autoAfterMs); // the payers pay, not the sandbox
  try {
    const {
      offered: r,
      paid,
      unpaidTxids,
    } = await withNotificationsToSameWork(b, async () => {
      const offering = await offerAndPay(b, rate, ms, launchSameWork(b, 'deposit'));
      // Left open, its deposits never paid (or whose payment's notification was lost) would look
      // themselves up when their QR expires, 30 minutes on: in pixflow's peak.
      const open = [
        ...offering.unpaidTxids.map((u) => u.txid),
        ...offering.paid.filter((p) => p.lost || p.paidAt === undefined).map((p) => p.txid),
      ];
      say(`   closing the same-work floor's ${open.length} open deposits...`);
      await terminateAll(b, open.map(sameWorkDepositId), 'the same-work peak is over');
      return offering;
    });
    const ok = paid.filter((p) => p.paidAt !== undefined).length;
    const result: SameWorkPeak = {
      rate: round(rate),
      seconds: round((r.t1 - r.t0) / 1000),
      ...answersOf(r),
      paid: ok,
      unpaid: unpaidTxids.length,
      payRefused: paid.length - ok,
      stealPct: r.stealPct,
    };
    say(`   ${JSON.stringify(result)}`);
    return result;
  } finally {
    await setAuto(b, settings.autoAfterMs, settings.autoAfterMs);
  }
}

/** Terminates these workflows, four at a time; one already closed is left as it is. */
export async function terminateAll(b: Bench, workflowIds: readonly string[], reason: string): Promise<void> {
  await closedLoop(workflowIds, 4, async (id) => {
    await b.client.workflow
      .getHandle(id)
      .terminate(reason)
      .catch((err: unknown) => {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      });
    return true;
  });
}

/**
 * Closes the peak's deposits still awaiting payment, but `keep`. Left open, they expire 30
 * minutes after the peak, each looking itself up, and load the parts running by then (the
 * events' ramps) as a second offering would.
 */
export async function closePeakDeposits(b: Bench, peaked: Peak, keep: readonly string[]): Promise<void> {
  const kept = new Set(keep);
  const open = peaked.unpaidTxids.map((u) => u.txid).filter((t) => !kept.has(t));
  say(`closing the peak's ${open.length} deposits still awaiting payment...`);
  await terminateAll(
    b,
    open.map((t) => depositWorkflowId(t)),
    'the peak is over',
  );
}

export async function peak(b: Bench, rate: number): Promise<Peak> {
  const { ms, unpaidShare, payAfterMs, lostShare } = settings.peak;
  say(
    `peak: ${round(rate)} deposits/s for ${ms / 60_000} min, ${unpaidShare * 100}% never paid, the rest paid ${payAfterMs[0] / 1000}-${payAfterMs[1] / 1000} s after their QR, ${lostShare * 100}% of those notifications lost...`,
  );
  await setAuto(b, null, settings.autoAfterMs); // the payers pay, not the sandbox
  const root = b.stack.child.pid as number;
  const inquiries0 = (await providerCalls(b)).inquiry ?? 0;
  const rss = new PeakRss(() => b.stack.pidsOf('worker'));
  rss.start();
  const cpu0 = cpuSnapshot(root);
  const answers: Timed[] = [];
  const evidence = await sampleEvidence(b);
  const launch = timedLaunch(() => postDeposit(b), answers);
  const { offered: r, paid, unpaidTxids } = await offerAndPay(b, rate, settings.peak.ms, launch);
  const tail = tailEvidence(await evidence.stop(), answers);
  const lastPaid = Date.now();
  const ok = paid.filter((p) => p.paidAt !== undefined);
  say(
    `   ${ok.length} paid (${ok.filter((p) => p.lost).length} notifications lost); waiting until completed...`,
  );
  const done = await waitForCompletion(
    b,
    ok.map((p) => p.txid),
  );
  const cpu1 = cpuSnapshot(root);
  const rssPeak = await rss.stop();
  const inquiries = ((await providerCalls(b)).inquiry ?? 0) - inquiries0;
  await setAuto(b, settings.autoAfterMs, settings.autoAfterMs);
  const notified = timesToComplete(
    paid.filter((p) => !p.lost),
    done,
  );
  const lost = timesToComplete(
    paid.filter((p) => p.lost),
    done,
  );
  const result: Peak = {
    rate: round(rate),
    seconds: round((r.t1 - r.t0) / 1000),
    ...answersOf(r),
    paid: ok.length,
    lost: ok.filter((p) => p.lost).length,
    unpaid: unpaidTxids.length,
    payRefused: paid.length - ok.length,
    paidToCompleted: notified.summary,
    paidNotCompleted: notified.notCompleted,
    lostToCompleted: lost.summary,
    lostNotCompleted: lost.notCompleted,
    waitedSeconds: round((Date.now() - lastPaid) / 1000),
    workerRssPeak: rssPeak,
    inquiries,
    openAtEnd: await awaitingPayment(
      b,
      unpaidTxids.map((u) => u.txid),
    ),
    cpuPercent: cpuPercentBetween(cpu0, cpu1),
    stealPct: r.stealPct,
    unpaidTxids,
    tail,
  };
  const { unpaidTxids: _, tail: __, ...shown } = result;
  say(`   ${JSON.stringify(shown)}`);
  for (const line of describeEvidence(tail)) say(`   ${line}`);
  return result;
}
