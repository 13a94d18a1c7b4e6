import {
  AmountKey,
  CpfMaskedKey,
  FlowStatusKey,
  FlowTypeKey,
  MerchantKey,
} from '../../common/search-attributes';
import { type DepositInput, depositWorkflowId } from '../../contracts/deposit';
import type { depositWorkflow } from '../../workflows/deposit';
import type { Bench } from '../harness';
import { type StepResult, step } from '../load';
import {
  awaitingPayment,
  completedFlows,
  inquiriesMade,
  newTxid,
  notifyIngress,
  person,
  postDeposit,
  setAuto,
  stopNotifications,
} from '../pixflow';
import { rssBytes } from '../proc';
import { pollSchedule, say, settings, sleep } from '../settings';
import { round } from '../stats';

// Open flows: N deposits awaiting payment, the worker's memory while they open and wait, and
// new deposits' throughput next to them against the same step with none open.

/** The worker's peak resident memory, sampled on demand and then every second until stopped. */
export class PeakRss {
  peak = 0;
  private sampling = false;
  private sampler: Promise<void> = Promise.resolve();
  constructor(private readonly pid: number) {}
  sample(): void {
    this.peak = Math.max(this.peak, rssBytes(this.pid));
  }
  start(): void {
    this.sampling = true;
    this.sampler = (async () => {
      while (this.sampling) {
        this.sample();
        await sleep(1_000);
      }
    })();
  }
  async stop(): Promise<number> {
    this.sampling = false;
    await this.sampler;
    return this.peak;
  }
}

export interface OpenFlows {
  txids: string[];
  /** How many of them were awaiting payment once open. */
  awaiting: number;
  secondsToOpen: number;
  /** Worker RSS in bytes: before opening, once open; the peak is sampled on until `rss.stop()`. */
  rssBefore: number;
  rssOpen: number;
  rss: PeakRss;
  baseline: StepResult;
  justOpened: StepResult;
  atLoad: StepResult;
  /** Seconds from open to the measured step. */
  settledSeconds: number;
  polls: EarlyPolls;
  stillAwaiting: number;
}

/**
 * New deposits offered at 1.25 × the deposits' saturation: with none open, right after opening
 * N (the youngest still in their early polls), then open and waiting (the goal). The two steps of
 * the goal's ratio run three ramp steps long: each is one number at saturation, and a single
 * straggler moves a short step's completion rate.
 */
export async function openFlows(b: Bench, depositSaturation: number): Promise<OpenFlows> {
  const loadRate = Math.max(1, depositSaturation * 1.25);
  const newDeposits = (durMs: number) =>
    step(loadRate, durMs, () => postDeposit(b), completedFlows(b, 'deposit'));
  say(`6. deposit throughput with none open (offered ${round(loadRate)}/s)...`);
  const baseline = await newDeposits(settings.stepMs * 3);
  say(`   ${baseline.point.achieved}/s`);
  const rssBefore = rssBytes(b.stack.workerPid);
  const rss = new PeakRss(b.stack.workerPid);
  const opened = await openDeposits(b, rss);
  await notifyIngress(b);
  await setAuto(b, settings.autoAfterMs, settings.autoAfterMs);
  const rssOpen = rssBytes(b.stack.workerPid);
  rss.start();
  // Right after opening, the youngest deposits are still in their early polls (30 s, 2.5 min
  // and 12.5 min after their QR): a cost of three inquiries per deposit created, shown for the record.
  const justOpened = await newDeposits(settings.stepMs);
  say(`   right after opening: ${justOpened.point.achieved}/s`);
  const polls = await waitForEarlyPolls(b, opened.openedAt);
  const atLoad = await newDeposits(settings.stepMs * 3);
  say(
    `   with ${opened.awaiting} open: ${atLoad.point.achieved}/s (none open: ${baseline.point.achieved}/s)`,
  );
  return {
    txids: opened.txids,
    awaiting: opened.awaiting,
    secondsToOpen: opened.seconds,
    rssBefore,
    rssOpen,
    rss,
    baseline,
    justOpened,
    atLoad,
    settledSeconds: round((polls.settleUntil - opened.openedAt) / 1000),
    polls,
    stillAwaiting: await awaitingPayment(b, opened.txids),
  };
}

/**
 * Opens `settings.openFlows` deposits through the Temporal client, 32 at a time, with auto-pay and
 * the sandbox's notifications off, and waits until each is awaiting payment (at most 90 min).
 */
async function openDeposits(b: Bench, rss: PeakRss) {
  say(
    `   opening ${settings.openFlows} deposits awaiting payment (Temporal client, same workflow and input)...`,
  );
  await setAuto(b, null, settings.autoAfterMs);
  // Their `requested` notifications would spend the ingress figure's unique messages.
  await stopNotifications(b);
  const txids: string[] = [];
  const started = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < settings.openFlows) {
        next++;
        txids.push(await startWaitingDeposit(b));
      }
    }),
  );
  let awaiting = 0;
  const deadline = Date.now() + 90 * 60_000;
  while (Date.now() < deadline) {
    rss.sample();
    awaiting = await awaitingPayment(b, txids);
    if (awaiting >= txids.length) break;
    await sleep(2_000);
  }
  const openedAt = Date.now();
  const seconds = (openedAt - started) / 1000;
  say(`   ${awaiting} awaiting payment after ${round(seconds, 0)} s`);
  return { txids, awaiting, openedAt, seconds };
}

/** Starts a deposit workflow with the input and search attributes the API gives one; its txid. */
async function startWaitingDeposit(b: Bench): Promise<string> {
  const txid = newTxid();
  const input: DepositInput = {
    txid,
    merchant: b.config.PROVIDER_MERCHANT,
    client: person(),
    amountCentavos: 500,
    ...(settings.pollScheduleMs ? { timings: { pollScheduleMs: settings.pollScheduleMs } } : {}),
  };
  await b.client.workflow.start<typeof depositWorkflow>('depositWorkflow', {
    workflowId: depositWorkflowId(txid),
    taskQueue: b.config.TEMPORAL_TASK_QUEUE,
    args: [input],
    typedSearchAttributes: [
      { key: FlowTypeKey, value: 'deposit' },
      { key: FlowStatusKey, value: 'creating' },
      { key: CpfMaskedKey, value: '***' },
      { key: AmountKey, value: 500 },
      { key: MerchantKey, value: input.merchant },
    ],
  });
  return txid;
}

export interface EarlyPolls {
  /** When the wait ended (ms). */
  settleUntil: number;
  /** Whether the worker had made no inquiry for 15 s by then (false: the bound ended the wait). */
  quiet: boolean;
  /** How long past the poll schedule the early polls went on (a backlog delays them). */
  lateSeconds: number;
}

/**
 * Waits until the youngest deposit is past its early polls: then the next look of any of them is
 * an hour away (or at its QR's expiry). A poll's timer starts when the one before it ends, so a
 * backlog of polls pushes the later ones back: past the schedule, waits until the worker has
 * made no inquiry for 15 s (at most as long again as the early polls).
 */
async function waitForEarlyPolls(b: Bench, openedAt: number): Promise<EarlyPolls> {
  const earlyPollsMs = pollSchedule()
    .slice(0, -1)
    .reduce((a, c) => a + c, 0);
  const scheduledEnd = openedAt + earlyPollsMs + 20_000;
  say(
    `   waiting at least ${round((scheduledEnd - Date.now()) / 1000, 0)} s until the youngest is past its early polls...`,
  );
  while (Date.now() < scheduledEnd) await sleep(1_000);
  const quietMs = 15_000;
  const settleDeadline = Date.now() + earlyPollsMs;
  let lastInquiries = await inquiriesMade(b);
  let quietSince = Date.now();
  while (Date.now() - quietSince < quietMs && Date.now() < settleDeadline) {
    await sleep(1_000);
    const now = await inquiriesMade(b);
    if (now !== lastInquiries) quietSince = Date.now();
    lastInquiries = now;
  }
  const settleUntil = Date.now();
  const quiet = settleUntil - quietSince >= quietMs;
  const lateSeconds = round((settleUntil - scheduledEnd) / 1000, 0);
  say(`   polls ${quiet ? 'quiet' : 'still running'} ${lateSeconds} s past the schedule`);
  return { settleUntil, quiet, lateSeconds };
}
