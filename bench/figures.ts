import type { Settled } from './harness';
import type { Commit } from './machine';
import type { Figure } from './report';
import { settings } from './settings';
import { percentile, ratiosByProcess, round, type Summary } from './stats';
import type { Capacity } from './steps/capacity';
import type { Cost, FlowCost } from './steps/cost';
import type { DepositRamp } from './steps/deposits';
import type { EventsFigures } from './steps/events';
import type { FloorRamp } from './steps/floor';
import type { Ingress, SignalLoop } from './steps/ingress';
import type { Onboarding } from './steps/onboarding';
import type { Peak } from './steps/peak';
import type { Production } from './steps/production';
import type { FlowShape } from './steps/shape';
import type { Withdrawals } from './steps/withdrawals';

// The run's figures, each with its goal where it has one. Every goal is a ratio or a bound taken
// within the run.

/** A part of the run that measured nothing, and why. */
export interface NotRun {
  notRun: string;
}
export type Maybe<T> = T | NotRun;
export const ran = <T extends object>(x: Maybe<T>): x is T => !('notRun' in x);

/** How long a part of the run took and what the hypervisor took meanwhile. */
export interface PartTiming {
  minutes: number;
  stealPct: number;
  notRun?: string;
}

/** Everything the steps measured. */
export interface RunResults {
  runMinutes: number;
  commit: Commit;
  parts: Record<string, PartTiming>;
  depositShape: FlowShape;
  floor: FloorRamp;
  deposits: DepositRamp;
  withdrawals: Withdrawals;
  capacity: Maybe<Capacity>;
  cost: Maybe<Cost>;
  onboarding: Maybe<Onboarding>;
  peak: Maybe<Peak & { bareUpdateWithStart: Summary }>;
  ingress: Maybe<{ ingress: Ingress; signalLoop: SignalLoop }>;
  events: Maybe<EventsFigures>;
  tokens: { inWindow: number; wholeRun: number };
  production: Maybe<Production>;
}

const ratio = (a: number, b: number) => (b > 0 ? round(a / b) : Number.NaN);
export const MiB = 1024 * 1024;
/** The KB: 1,024 bytes. */
export const KB = 1024;

const notRunRow = (name: string, x: NotRun): Figure => ({
  name,
  value: Number.NaN,
  unit: '',
  ratio: x.notRun,
});

export function figures(r: RunResults): Figure[] {
  return [
    ...peakFigures(r),
    ...capacityFigures(r),
    ...costFigures(r),
    ...rampFigures(r),
    ...onboardingFigures(r),
    ...ingressFigures(r),
    ...eventsFigures(r),
    ...tokenFigures(r),
    ...productionFigures(r),
  ];
}

function peakFigures({ peak }: RunResults): Figure[] {
  if (!ran(peak)) return [notRunRow('peak', peak)];
  const served = ratio(peak.served, peak.offered);
  const failed = peak.timeouts + peak.serverErrors;
  const { post, paidToCompleted: paid, lostToCompleted: lost } = peak;
  const minutes = round(peak.seconds / 60, 1);
  return [
    {
      name: `peak: new deposits served (201 within ${settings.clientTimeoutMs / 1000} s), ${peak.offered} offered at ${peak.rate}/s for ${minutes} min`,
      value: served,
      unit: '',
      ratio: `${peak.served} of ${peak.offered}`,
      goal: '≥ 0.95',
      pass: served >= 0.95,
    },
    {
      name: 'peak: timeouts, no answer or 5xx',
      value: failed,
      unit: '',
      ratio: JSON.stringify(peak.errorsBy),
      goal: '0',
      pass: failed === 0,
    },
    {
      name: `peak: POST /v1/deposits p99 (${post.n} answers, the whole step)`,
      value: post.p99,
      unit: 'ms',
      ratio: `p50 ${post.p50} ms, max ${post.max} ms; bare update-with-start p99 ${peak.bareUpdateWithStart.p99} ms at the same rate`,
      goal: `< ${settings.latencyTargetMs} ms`,
      pass: post.p99 < settings.latencyTargetMs,
    },
    {
      name: 'peak: worker RSS (peak)',
      value: round(peak.workerRssPeak / MiB),
      unit: 'MiB',
      ratio: `${peak.openAtEnd} deposits still open at the end`,
      goal: '< 1024 MiB',
      pass: peak.workerRssPeak < 1024 * MiB,
    },
    {
      name: `peak: payment → completed p99 (${paid.n} paid and notified)`,
      value: paid.p99,
      unit: 'ms',
      ratio: `p50 ${paid.p50} ms; ${peak.paidNotCompleted} not completed`,
      goal: '< 500 ms',
      pass: paid.p99 < 500 && peak.paidNotCompleted === 0,
    },
    {
      name: `peak: lost notification, payment → completed (time to detect) p99 (${lost.n} of ${peak.lost} found)`,
      value: round(lost.p99 / 1000, 1),
      unit: 's',
      ratio: `p50 ${round(lost.p50 / 1000, 1)} s, max ${round(lost.max / 1000, 1)} s; ${peak.lostNotCompleted} not found in ${round(peak.waitedSeconds / 60, 1)} min`,
    },
    {
      name: 'peak: provider inquiries per deposit offered',
      value: ratio(peak.inquiries, peak.offered),
      unit: '',
      ratio: `${peak.inquiries} inquiries`,
    },
  ];
}

function capacityFigures({ capacity, deposits, withdrawals }: RunResults): Figure[] {
  if (!ran(capacity)) return [notRunRow('capacity at the latency target', capacity)];
  const of = (k: string) =>
    capacity.searches
      .filter((s) => s.kind === k)
      .map((s) => s.capacity)
      .join(', ');
  const target = `p99 < ${settings.latencyTargetMs} ms`;
  const ok = capacity.medianRatio >= 0.6 && capacity.ratioSpread < 0.1;
  const same = capacity.sameWorkSaturation;
  const saturation = (what: string, pixflow: number, floor: number): Figure => {
    const r = ratio(pixflow, floor);
    return {
      name: `saturation: ${what}s end to end over the same-work floor's`,
      value: r,
      unit: '',
      ratio: `${pixflow}/s against ${floor}/s (the same-work floor's ${what}s)`,
      goal: '≥ 0.85',
      pass: r >= 0.85,
    };
  };
  return [
    saturation('deposit', deposits.saturation, same.deposit.saturation),
    saturation('withdrawal', withdrawals.saturation, same.withdrawal.saturation),
    {
      name: `capacity at ${target}: floor (update-with-start), median of ${capacity.ratios.length}`,
      value: capacity.floorMedian,
      unit: '/s',
      ratio: `rounds: ${of('floor')}`,
    },
    {
      name: `capacity at ${target}: same-work floor (its POST /deposits), median`,
      value: capacity.sameWorkMedian,
      unit: '/s',
      ratio: `rounds: ${of('same-work')}`,
    },
    {
      name: `capacity at ${target}: deposits (POST /v1/deposits), median`,
      value: capacity.depositsMedian,
      unit: '/s',
      ratio: `rounds: ${of('deposits')}`,
    },
    {
      name: 'capacity at the latency target: deposits over the floor, median of the rounds',
      value: capacity.medianRatio,
      unit: '',
      ratio: `spread ${round(capacity.ratioSpread * 100, 1)}% (rounds: ${capacity.ratios.join(', ')})`,
      goal: '≥ 0.6, spread < 10%',
      pass: ok,
    },
    {
      name: 'capacity at the latency target: deposits over the same-work floor, median of the rounds',
      value: capacity.sameWorkMedianRatio,
      unit: '',
      ratio: `spread ${round(capacity.sameWorkRatioSpread * 100, 1)}% (rounds: ${capacity.sameWorkRatios.join(', ')})`,
    },
  ];
}

/** pixflow's process, and the same-work floor's doing the same job. */
const SAME_WORK_PAIRS = [
  ['worker', 'same-work-worker'],
  ['api', 'same-work-server'],
  ['temporal', 'temporal'],
  ['postgres', 'postgres'],
  ['sandbox', 'sandbox'],
] as const;

/** A pixflow flow's CPU over the same-work floor's, process by process (the goal: each ≤ 1.2). */
function overSameWork(flow: FlowCost | undefined, floor: FlowCost | undefined): Figure[] {
  if (!flow || !floor) return [];
  const r = ratiosByProcess(flow.cpuMsPerFlow, floor.cpuMsPerFlow, SAME_WORK_PAIRS);
  const { total, ...byProcess } = r;
  const parts = Object.entries(byProcess);
  const p99 = ratio(flow.answers.p99, floor.answers.p99);
  return [
    {
      name: `${flow.flow}s' POST p99 over the same-work floor's, both at ${flow.rate}/s`,
      value: p99,
      unit: '',
      ratio: `${flow.answers.p99} ms (p50 ${flow.answers.p50}) against ${floor.answers.p99} ms (p50 ${floor.answers.p50})`,
    },
    {
      name: `CPU per ${flow.flow} over the same-work floor's (worker, API, Temporal, Postgres, sandbox)`,
      value: total ?? Number.NaN,
      unit: '',
      ratio: parts.map(([k, v]) => `${k} ${v}`).join(', '),
      goal: '≤ 1.2, each process',
      pass: parts.every(([, v]) => v <= 1.2),
    },
  ];
}

const perFlowText = (c: FlowCost) =>
  Object.entries(c.cpuMsPerFlow)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');

function costFigures({ cost }: RunResults): Figure[] {
  if (!ran(cost)) return [notRunRow('cost per flow', cost)];
  const flow = (f: string) => cost.flows.find((c) => c.flow === f);
  const rows: Figure[] = cost.flows.map((c) => ({
    name: `CPU per ${c.flow === 'floor' ? 'floor flow' : c.flow} (stack, at ${c.rate}/s, ${c.completed} completed)`,
    value: c.stackMsPerFlow,
    unit: 'ms',
    ratio: perFlowText(c),
  }));
  const floorHistory = flow('floor')?.history;
  const history = (f: string, goalKb: number, what: string): Figure[] => {
    const h = flow(f)?.history;
    if (!h) return [];
    return [
      {
        name: `${what}'s history (max of ${h.sampled})`,
        value: h.bytesMax,
        unit: 'bytes',
        ratio: `p50 ${h.bytesP50} bytes, ${h.eventsP50} events; the floor's ${floorHistory?.bytesP50} bytes, ${floorHistory?.eventsP50} events`,
        goal: `≤ ${goalKb} KB (${goalKb * KB} bytes)`,
        pass: h.bytesMax <= goalKb * KB,
      },
    ];
  };
  return [
    ...rows,
    ...overSameWork(flow('deposit'), flow('same-work deposit')),
    ...overSameWork(flow('withdrawal'), flow('same-work withdrawal')),
    ...history('deposit', 6, 'a paid deposit'),
    ...history('withdrawal', 8, 'a completed withdrawal'),
  ];
}

function rampFigures({ floor, deposits, withdrawals }: RunResults): Figure[] {
  const wdRatio = ratio(withdrawals.saturation, withdrawals.floor.saturation);
  const { latency } = withdrawals;
  return [
    { name: 'saturation: floor (bare deposit-shaped workflows)', value: floor.saturation, unit: '/s' },
    {
      name: 'saturation: deposits end to end',
      value: deposits.saturation,
      unit: '/s',
      ratio: `${ratio(deposits.saturation, floor.saturation)} of the floor`,
    },
    {
      name: 'saturation: withdrawal floor (bare withdrawal-shaped workflows)',
      value: withdrawals.floor.saturation,
      unit: '/s',
    },
    {
      name: 'saturation: withdrawals end to end (with receipts)',
      value: withdrawals.saturation,
      unit: '/s',
      ratio: `${wdRatio} of the withdrawal floor (${ratio(withdrawals.saturation, floor.saturation)} of the deposit-shaped one)`,
      goal: '≥ 0.5 of the withdrawal floor',
      pass: wdRatio >= 0.5,
    },
    {
      name: `POST /v1/withdrawals p99 (at ${latency.offered}/s, p50 ${latency.post.p50} ms)`,
      value: latency.post.p99,
      unit: 'ms',
      goal: '< 150 ms',
      pass: latency.post.p99 < 150,
    },
    {
      name: `withdrawal settled → completed p99 (receipt stored; p50 ${latency.paymentToCompleted.p50} ms)`,
      value: latency.paymentToCompleted.p99,
      unit: 'ms',
      goal: '< 500 ms',
      pass: latency.paymentToCompleted.p99 < 500,
    },
  ];
}

function onboardingFigures({ onboarding }: RunResults): Figure[] {
  if (!ran(onboarding)) return [notRunRow('onboardings', onboarding)];
  return [
    {
      name: 'saturation: onboarding floor (bare onboarding-shaped workflows)',
      value: onboarding.floor.saturation,
      unit: '/s',
    },
    {
      name: 'saturation: onboardings approved (no manual review)',
      value: onboarding.saturation,
      unit: '/s',
      ratio: `${ratio(onboarding.saturation, onboarding.floor.saturation)} of the onboarding floor`,
    },
  ];
}

function ingressFigures(r: RunResults): Figure[] {
  if (!ran(r.ingress)) return [notRunRow('ingress', r.ingress)];
  const { ingress, signalLoop } = r.ingress;
  const ingRatio = ratio(ingress.signalledPerSecond, signalLoop.perSecond);
  return [
    {
      name: `ingress: notifications stored and signalled (${ingress.notifications})`,
      value: ingress.signalledPerSecond,
      unit: '/s',
      ratio: `${ingRatio} of the signal loop (${round(signalLoop.perSecond)}/s); accepted ${round(ingress.acceptedPerSecond)}/s`,
      goal: '≥ 0.5 of the signal loop',
      pass: ingRatio >= 0.5,
    },
    {
      name: 'ingress p99',
      value: round(percentile(ingress.latenciesMs, 99)),
      unit: 'ms',
      ratio: `bare signal loop p99 ${round(percentile(signalLoop.latenciesMs, 99))} ms`,
    },
  ];
}

function eventsFigures({ events }: RunResults): Figure[] {
  if (!ran(events)) return [notRunRow('events', events)];
  const throughput = ratio(events.with.saturation, events.without.saturation);
  return [
    {
      name: `events: state change → receiver lag p99 (${events.lagMs.n} events, deposits at ${events.rate}/s)`,
      value: events.lagMs.p99,
      unit: 'ms',
      ratio: `p50 ${events.lagMs.p50} ms, max ${events.lagMs.max} ms; ${events.deliveredPerSecond} delivered/s; ${events.unverified} unverified`,
      goal: '< 500 ms',
      pass: events.lagMs.p99 < 500 && events.lagMs.n > 0 && events.unverified === 0,
    },
    {
      name: 'events: deposits saturation with one endpoint subscribed to everything',
      value: events.with.saturation,
      unit: '/s',
      ratio: `${throughput} of ${events.without.saturation}/s with none, ramped just before${settledNote(events.settled)}`,
      goal: '≥ 0.9 of none',
      pass: throughput >= 0.9,
    },
  ];
}

/** How long the part waited for the stack to go quiet before it began. */
function settledNote(settled: Settled | undefined): string {
  if (!settled) return '';
  const seconds = Math.round(settled.waitedMs / 1000);
  return settled.quiet
    ? `; began once the stack was quiet (${seconds} s)`
    : `; began with the stack still at ${settled.cpuPct}% of a core after ${seconds} s`;
}

function tokenFigures({ tokens, runMinutes }: RunResults): Figure[] {
  return [
    {
      name: `provider token requests per worker (first ${settings.tokenMinutes} min)`,
      value: tokens.inWindow,
      unit: '',
      ratio: `${tokens.wholeRun} over the whole run (${round(runMinutes, 1)} min; a token lives 60 min; the same-work floor's worker, once measured, takes its own)`,
      goal: '1',
      pass: tokens.inWindow === 1,
    },
  ];
}

function productionFigures({ production }: RunResults): Figure[] {
  if (!ran(production)) return [notRunRow('production server (Temporal on Postgres)', production)];
  const rows: Figure[] = production.runs.map((run) =>
    run.notRun || !run.deposits || !run.floor
      ? notRunRow(`production server, ${run.processes} worker(s) and API(s)`, { notRun: run.notRun ?? '' })
      : {
          name: `production server, ${run.processes} worker(s) and API(s): deposits end to end`,
          value: run.deposits.saturation,
          unit: '/s',
          ratio: `${run.ratio} of the floor on the same server (${run.floor.saturation}/s)`,
        },
  );
  const [one, two] = production.runs;
  if (one?.deposits && two?.deposits) {
    rows.push({
      name: 'production server: deposits with 2 workers and APIs over 1',
      value: ratio(two.deposits.saturation, one.deposits.saturation),
      unit: '',
      ratio: `floor: ${ratio(two.floor?.saturation ?? 0, one.floor?.saturation ?? 0)}`,
    });
  }
  return rows;
}
