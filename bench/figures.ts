import type { Figure } from './report';
import { settings } from './settings';
import { percentile, round, type Summary } from './stats';
import type { DepositRamp } from './steps/deposits';
import type { FloorRamp } from './steps/floor';
import type { Ingress, SignalLoop } from './steps/ingress';
import type { Latency } from './steps/latency';
import type { OpenFlows } from './steps/open-flows';
import type { DepositShape } from './steps/shape';
import type { Withdrawals } from './steps/withdrawals';

// The run's figures, each with its goal where it has one. Every goal is a ratio or a bound taken
// within the run.

/** Everything the steps measured. */
export interface RunResults {
  runMinutes: number;
  depositShape: DepositShape;
  floor: FloorRamp & { bareUpdateWithStart: Summary };
  deposits: DepositRamp & { latency: Latency };
  withdrawals: Withdrawals;
  ingress: Ingress;
  signalLoop: SignalLoop;
  tokens: { inWindow: number; wholeRun: number };
  /** The open-flows step, with the worker's peak RSS over the rest of the run. */
  open: OpenFlows & { rssPeak: number };
}

const ratio = (a: number, b: number) => (b > 0 ? round(a / b) : Number.NaN);
export const MiB = 1024 * 1024;

export function figures(r: RunResults): Figure[] {
  return [
    ...depositFigures(r),
    ...ingressFigures(r),
    ...tokenFigures(r),
    ...openFlowFigures(r),
    ...withdrawalFigures(r),
  ];
}

function depositFigures({ floor, deposits }: RunResults): Figure[] {
  const depRatio = ratio(deposits.saturation, floor.saturation);
  const { latency } = deposits;
  const bare = floor.bareUpdateWithStart;
  return [
    { name: 'floor: bare deposit-shaped workflows', value: floor.saturation, unit: '/s' },
    {
      name: 'deposits end to end',
      value: deposits.saturation,
      unit: '/s',
      ratio: `${depRatio} of the floor`,
      goal: '≥ 0.5 of the floor',
      pass: depRatio >= 0.5,
    },
    { name: `POST /v1/deposits p50 (at ${latency.offered}/s)`, value: latency.post.p50, unit: 'ms' },
    {
      name: 'POST /v1/deposits p99',
      value: latency.post.p99,
      unit: 'ms',
      ratio: `${round(latency.post.p99 - bare.p99)} ms above bare update-with-start`,
      goal: '< 150 ms',
      pass: latency.post.p99 < 150,
    },
    {
      name: `bare Temporal update-with-start p50 / p99 (at ${latency.offered}/s)`,
      value: bare.p99,
      unit: 'ms',
      ratio: `p50 ${bare.p50} ms`,
    },
    { name: 'deposit payment → completed p50', value: latency.paymentToCompleted.p50, unit: 'ms' },
    {
      name: 'deposit payment → completed p99',
      value: latency.paymentToCompleted.p99,
      unit: 'ms',
      goal: '< 500 ms',
      pass: latency.paymentToCompleted.p99 < 500,
    },
  ];
}

function ingressFigures({ ingress, signalLoop }: RunResults): Figure[] {
  const ingRatio = ratio(ingress.signalledPerSecond, signalLoop.perSecond);
  return [
    {
      name: 'ingress: notifications stored and signalled',
      value: ingress.signalledPerSecond,
      unit: '/s',
      ratio: `${ingRatio} of the signal loop`,
      goal: '≥ 0.5 of the signal loop',
      pass: ingRatio >= 0.5,
    },
    { name: 'ingress: notifications accepted (answered 200)', value: ingress.acceptedPerSecond, unit: '/s' },
    { name: 'ingress p99', value: round(percentile(ingress.latenciesMs, 99)), unit: 'ms' },
    { name: 'bare Temporal signal loop', value: signalLoop.perSecond, unit: '/s' },
    { name: 'bare signal loop p99', value: round(percentile(signalLoop.latenciesMs, 99)), unit: 'ms' },
  ];
}

function tokenFigures({ tokens, runMinutes }: RunResults): Figure[] {
  return [
    {
      name: `provider token requests per worker (first ${settings.tokenMinutes} min)`,
      value: tokens.inWindow,
      unit: '',
      goal: '1',
      pass: tokens.inWindow === 1,
    },
    {
      name: `provider token requests per worker (whole run, ${round(runMinutes, 1)} min)`,
      value: tokens.wholeRun,
      unit: '',
      ratio: 'a token lives 60 min',
    },
  ];
}

function openFlowFigures({ open }: RunResults): Figure[] {
  const { awaiting, baseline, justOpened, atLoad, polls, stillAwaiting } = open;
  const loadRatio = ratio(atLoad.point.achieved, baseline.point.achieved);
  return [
    {
      name: `worker RSS with ${awaiting} deposits open (peak)`,
      value: round(open.rssPeak / MiB),
      unit: 'MiB',
      ratio: `${round(open.rssOpen / MiB)} MiB after opening, ${round(open.rssBefore / MiB)} MiB before`,
      goal: '< 1024 MiB',
      pass: open.rssPeak < 1024 * MiB,
    },
    {
      name: `new deposits with ${awaiting} open, right after opening (early polls)`,
      value: justOpened.point.achieved,
      unit: '/s',
      ratio: `${ratio(justOpened.point.achieved, baseline.point.achieved)} of ${baseline.point.achieved}/s with none open`,
    },
    {
      name: `new deposits with ${awaiting} open and waiting (${stillAwaiting} still awaiting payment; early polls over ${polls.lateSeconds} s past their schedule${polls.quiet ? '' : ', not quiet yet'})`,
      value: atLoad.point.achieved,
      unit: '/s',
      ratio: `${loadRatio} of ${baseline.point.achieved}/s with none open (CPU steal ${atLoad.stealPct}% in this step, ${baseline.stealPct}% in that one)`,
      goal: '≥ 0.9',
      pass: loadRatio >= 0.9 && stillAwaiting === awaiting,
    },
  ];
}

function withdrawalFigures({ floor, withdrawals }: RunResults): Figure[] {
  const wdRatio = ratio(withdrawals.saturation, floor.saturation);
  const { latency } = withdrawals;
  return [
    {
      name: 'withdrawals end to end (with receipts)',
      value: withdrawals.saturation,
      unit: '/s',
      ratio: `${wdRatio} of the floor`,
      goal: '≥ 0.5 of the floor',
      pass: wdRatio >= 0.5,
    },
    { name: `POST /v1/withdrawals p50 (at ${latency.offered}/s)`, value: latency.post.p50, unit: 'ms' },
    {
      name: 'POST /v1/withdrawals p99',
      value: latency.post.p99,
      unit: 'ms',
      goal: '< 150 ms',
      pass: latency.post.p99 < 150,
    },
    { name: 'withdrawal settled → completed p50', value: latency.paymentToCompleted.p50, unit: 'ms' },
    {
      name: 'withdrawal settled → completed p99 (receipt stored)',
      value: latency.paymentToCompleted.p99,
      unit: 'ms',
      goal: '< 500 ms',
      pass: latency.paymentToCompleted.p99 < 500,
    },
  ];
}
