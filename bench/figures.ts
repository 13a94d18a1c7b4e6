import type { Settled } from './harness';
import type { Commit } from './machine';
import type { Figure } from './report';
import { settings } from './settings';
import { percentile, ratiosByProcess, round, type Summary } from './stats';
import { stepLoadText } from './step-load';
import type { Capacity } from './steps/capacity';
import type { Cost, FlowCost, HistorySizes } from './steps/cost';
import type { EventsFigures } from './steps/events';
import type { FloorRamp } from './steps/floor';
import type { Ingress, SignalLoop } from './steps/ingress';
import type { Onboarding } from './steps/onboarding';
import type { OpenFlows } from './steps/open-flows';
import type { Peak, SameWorkPeak } from './steps/peak';
import type { Production, ProductionRun, TemporalFlowCpu } from './steps/production';
import { type Repeated, SATURATION_KINDS, type Saturation, type SaturationKind } from './steps/saturation';
import type { FlowShape } from './steps/shape';
import type { Withdrawals } from './steps/withdrawals';
import { CAUSE_TEXT, CAUSES, verdictsText } from './tail-evidence';

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
  saturation: Saturation;
  withdrawals: Withdrawals;
  capacity: Maybe<Capacity>;
  cost: Maybe<Cost>;
  onboarding: Maybe<Onboarding>;
  peak: Maybe<Peak & { bareUpdateWithStart: Summary; sameWork: SameWorkPeak }>;
  ingress: Maybe<{ ingress: Ingress; signalLoop: SignalLoop }>;
  events: Maybe<EventsFigures>;
  openFlows: Maybe<OpenFlows>;
  tokens: { inWindow: number; wholeRun: number };
  production: Maybe<Production>;
}

const ratio = (a: number, b: number) => (b > 0 ? round(a / b) : Number.NaN);
export const MiB = 1024 * 1024;
/** The issue's KB: 1,024 bytes. */
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
    ...tailFigures(r),
    ...saturationFigures(r),
    ...capacityFigures(r),
    ...costFigures(r),
    ...rampFigures(r),
    ...onboardingFigures(r),
    ...ingressFigures(r),
    ...eventsFigures(r),
    ...openFlowsFigures(r),
    ...tokenFigures(r),
    ...productionFigures(r),
  ];
}

/** The peak's POST p99 may be at most this many times the same-work floor's under the same offering. */
const PEAK_P99_OVER_SAME_WORK = 1.25;

function peakFigures({ peak }: RunResults): Figure[] {
  if (!ran(peak)) return [notRunRow('peak', peak)];
  const failed = peak.timeouts + peak.serverErrors;
  const { post, paidToCompleted: paid, lostToCompleted: lost, sameWork } = peak;
  const minutes = round(peak.seconds / 60, 1);
  const p99Ratio = ratio(post.p99, sameWork.post.p99);
  return [
    {
      name: `peak: new deposits served (201 within ${settings.clientTimeoutMs / 1000} s), ${peak.offered} offered at ${peak.rate}/s for ${minutes} min`,
      value: ratio(peak.served, peak.offered),
      unit: '',
      ratio: `${peak.served} of ${peak.offered}`,
      goal: 'every one',
      pass: peak.served === peak.offered,
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
      name: `peak: POST /v1/deposits p99 (${post.n} answers, the whole step) over the same-work floor's peak`,
      value: p99Ratio,
      unit: '',
      ratio: `${post.p99} ms (p50 ${post.p50} ms, max ${post.max} ms) against ${sameWork.post.p99} ms (p50 ${sameWork.post.p50} ms, ${sameWork.post.n} answers in ${round(sameWork.seconds / 60, 1)} min); bare update-with-start p99 ${peak.bareUpdateWithStart.p99} ms at the same rate`,
      goal: `≤ ${PEAK_P99_OVER_SAME_WORK}`,
      pass: p99Ratio <= PEAK_P99_OVER_SAME_WORK,
    },
    {
      name: `same-work floor's peak: deposits served, ${sameWork.offered} offered at ${sameWork.rate}/s`,
      value: ratio(sameWork.served, sameWork.offered),
      unit: '',
      ratio: `${sameWork.served} of ${sameWork.offered}; timeouts, no answer or 5xx: ${sameWork.timeouts + sameWork.serverErrors} ${JSON.stringify(sameWork.errorsBy)}`,
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

/**
 * What the peak's slowest 1% of POST /v1/deposits waited on (bench/tail-evidence.ts), reported:
 * their verdicts, then each cause's share of them beside its share of ordinary answers.
 */
function tailFigures({ peak }: RunResults): Figure[] {
  if (!ran(peak) || !peak.tail) return [];
  const { slow, ordinary, p99Ms, windowMs } = peak.tail;
  const causes = CAUSES.filter((c) => slow.overlapped[c] || ordinary.overlapped[c]);
  return [
    {
      name: `peak's slowest 1% of POST /v1/deposits (over its p99, ${p99Ms} ms): what each waited on, its longest stall in windows of ${windowMs / 1000} s`,
      value: slow.n,
      unit: 'answers',
      ratio: `${verdictsText(slow) || 'none'}; a sample of ${ordinary.n} ordinary answers: ${verdictsText(ordinary) || 'none'}`,
    },
    ...causes.map(
      (c): Figure => ({
        name: `peak's slowest 1%: overlapped ${CAUSE_TEXT[c]}`,
        value: ratio(slow.overlapped[c] ?? 0, slow.n),
        unit: '',
        ratio: `${slow.overlapped[c] ?? 0} of ${slow.n}; ordinary answers ${ordinary.overlapped[c] ?? 0} of ${ordinary.n}`,
      }),
    ),
  ];
}

const roundsText = (x: Repeated) => `spread ${round(x.spread * 100, 1)}% (rounds: ${x.rounds.join(', ')})`;

/** pixflow's saturation over the same-work floor's, round by round, alternated. */
function saturationFigures({ saturation }: RunResults): Figure[] {
  const s = saturation.saturation;
  const of = (what: string, r: Repeated, flow: Repeated, floor: Repeated): Figure => ({
    name: `saturation: ${what}s end to end over the same-work floor's, median of ${r.rounds.length} rounds`,
    value: r.median,
    unit: '',
    ratio: `${roundsText(r)}; ${flow.median}/s against ${floor.median}/s (medians; ${what}s ${flow.rounds.join(', ')}, same-work ${floor.rounds.join(', ')})`,
    goal: '≥ 0.85',
    pass: r.median >= 0.85,
  });
  return [
    of('deposit', saturation.depositRatio, s.deposits, s['same-work deposits']),
    of('withdrawal', saturation.withdrawalRatio, s.withdrawals, s['same-work withdrawals']),
    ...saturationBoundFigures(saturation),
  ];
}

/**
 * What bounds a kind's saturation: the stack's load over the first step past its knee (the ramp's
 * last), in the round whose saturation of that kind is the median. Reported, no goal.
 */
export function saturationBoundFigures(saturation: Saturation): Figure[] {
  return SATURATION_KINDS.flatMap((kind) => boundFigure(saturation, kind));
}

function boundFigure(saturation: Saturation, kind: SaturationKind): Figure[] {
  const byRate = [...saturation.rounds].sort((a, b) => a.ramps[kind].saturation - b.ramps[kind].saturation);
  const r = byRate[Math.floor((byRate.length - 1) / 2)];
  const past = r?.ramps[kind].points.at(-1);
  if (!r || !past?.load) return [];
  return [
    {
      name: `saturation: ${kind} beyond the knee, the machine's CPU busy (its median round: ${r.round})`,
      value: past.load.machineBusyPct,
      unit: '%',
      ratio: `${past.offered}/s offered, ${past.achieved}/s completed: ${stepLoadText(past.load)}`,
    },
  ];
}

function capacityFigures({ capacity }: RunResults): Figure[] {
  if (!ran(capacity)) return [notRunRow('capacity at the p99 bounds', capacity)];
  const paid = `deposits paid ${capacity.payAfterMs / 1000} s after their QR`;
  return capacity.bounds.flatMap((at) => {
    const bound = `p99 < ${at.boundMs} ms`;
    const kind = (what: string, x: Repeated): Figure => ({
      name: `capacity at ${bound}: ${what}, median of ${x.rounds.length}`,
      value: x.median,
      unit: '/s',
      ratio: `rounds: ${x.rounds.join(', ')}`,
    });
    return [
      kind('floor (update-with-start)', at.capacity.floor),
      kind('same-work floor (its POST /deposits)', at.capacity['same-work']),
      kind(`deposits (POST /v1/deposits; ${paid})`, at.capacity.deposits),
      {
        name: `capacity at ${bound}: deposits over the same-work floor, median of the rounds`,
        value: at.overSameWork.median,
        unit: '',
        ratio: roundsText(at.overSameWork),
      },
      {
        name: `capacity at ${bound}: deposits over the floor, median of the rounds`,
        value: at.overFloor.median,
        unit: '',
        ratio: roundsText(at.overFloor),
      },
    ];
  });
}

/** pixflow's process, and the same-work floor's doing the same job. */
const SAME_WORK_PAIRS = [
  ['worker', 'same-work-worker'],
  ['api', 'same-work-server'],
  ['temporal', 'temporal'],
  ['postgres', 'postgres'],
  ['sandbox', 'sandbox'],
] as const;

/** The most a pixflow flow may spend over the same-work floor's, each process and in total. */
const COST_OVER_SAME_WORK = 1.2;

/** A pixflow flow's CPU over the same-work floor's, process by process and in total (each ≤ 1.2). */
function overSameWork(
  flow: FlowCost | undefined,
  floor: FlowCost | undefined,
  rounds: readonly FlowCost[][] = [],
): Figure[] {
  if (!flow || !floor) return [];
  const r = ratiosByProcess(flow.cpuMsPerFlow, floor.cpuMsPerFlow, SAME_WORK_PAIRS);
  // Each round's total, flow over floor in the same round: how far apart the rounds landed.
  const byRound = rounds.flatMap((round) => {
    const f = round.find((c) => c.flow === flow.flow);
    const s = round.find((c) => c.flow === floor.flow);
    return f && s ? [ratiosByProcess(f.cpuMsPerFlow, s.cpuMsPerFlow, SAME_WORK_PAIRS).total] : [];
  });
  const roundsText = byRound.length > 1 ? `; rounds ${byRound.join(', ')} (medians by process)` : '';
  const { total, ...byProcess } = r;
  const p99 = ratio(flow.answers.p99, floor.answers.p99);
  const ms = (c: FlowCost, k: string) => c.cpuMsPerFlow[k] ?? 0;
  const goal = `≤ ${COST_OVER_SAME_WORK}`;
  return [
    {
      name: `${flow.flow}s' POST p99 over the same-work floor's, both at ${flow.rate}/s`,
      value: p99,
      unit: '',
      ratio: `${flow.answers.p99} ms (p50 ${flow.answers.p50}) against ${floor.answers.p99} ms (p50 ${floor.answers.p50})`,
    },
    {
      name: `CPU per ${flow.flow} over the same-work floor's, in total (worker, API, Temporal, Postgres, sandbox)`,
      value: total ?? Number.NaN,
      unit: '',
      ratio:
        Object.entries(byProcess)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ') + roundsText,
      goal,
      pass: (total ?? Number.NaN) <= COST_OVER_SAME_WORK,
    },
    ...SAME_WORK_PAIRS.map(([part, floorPart]): Figure => {
      const v = byProcess[part] ?? Number.NaN;
      return {
        name: `CPU per ${flow.flow} over the same-work floor's: ${part}${part === floorPart ? '' : ` over ${floorPart}`}`,
        value: v,
        unit: '',
        ratio: `${ms(flow, part)} ms against ${ms(floor, floorPart)} ms per flow`,
        goal,
        pass: v <= COST_OVER_SAME_WORK,
      };
    }),
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
    name: `CPU per ${c.flow === 'floor' ? 'floor flow' : c.flow} (stack, at ${c.rate}/s, ${c.completed} completed${(cost.rounds?.length ?? 1) > 1 ? ' a round, median of the rounds' : ''})`,
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
    ...overSameWork(flow('deposit'), flow('same-work deposit'), cost.rounds),
    ...overSameWork(flow('withdrawal'), flow('same-work withdrawal'), cost.rounds),
    ...history('deposit', 6, 'a paid deposit'),
    ...history('withdrawal', 8, 'a completed withdrawal'),
    ...actionsFigure(flow('deposit')?.history, 6, 'a paid deposit'),
    ...actionsFigure(flow('withdrawal')?.history, 8, 'a plain payout (completed, no approval)'),
  ];
}

/**
 * Temporal actions a flow is billed, counted from the histories the run's flows left (the cost
 * steps' last ones, each started by the API as a user starts it). Runs from before the count
 * have none.
 */
export function actionsFigure(h: HistorySizes | undefined, goal: number, what: string): Figure[] {
  if (h?.actionsMax === undefined) return [];
  return [
    {
      name: `Temporal actions ${what} is billed (max of ${h.sampled})`,
      value: h.actionsMax,
      unit: '',
      ratio: `p50 ${h.actionsP50}; counted by bench/temporal-actions.ts from the run's own histories`,
      goal: `≤ ${goal}`,
      pass: h.actionsMax <= goal,
    },
  ];
}

function rampFigures({ floor, saturation, withdrawals }: RunResults): Figure[] {
  const deposits = saturation.saturation.deposits.median;
  const wdRatio = ratio(withdrawals.saturation, withdrawals.floor.saturation);
  const { latency } = withdrawals;
  return [
    { name: 'saturation: floor (bare deposit-shaped workflows)', value: floor.saturation, unit: '/s' },
    {
      name: 'saturation: deposits end to end, median of the rounds',
      value: deposits,
      unit: '/s',
      ratio: `${ratio(deposits, floor.saturation)} of the floor`,
    },
    {
      name: 'saturation: withdrawal floor (bare withdrawal-shaped workflows)',
      value: withdrawals.floor.saturation,
      unit: '/s',
    },
    {
      name: 'saturation: withdrawals end to end (with receipts), median of the rounds',
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
      ratio: `p50 ${events.lagMs.p50} ms, max ${events.lagMs.max} ms; ${events.deliveredPerSecond} delivered/s; ${events.unverified} unverified${settledNote(events.lagSettled)}`,
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

/** The most a worker may hold with the part's deposits open, and grow per further 1,000 past its cache. */
const OPEN_FLOWS_WORKER_RSS_MIB = 1024;
const OPEN_FLOWS_GROWTH_MIB_PER_THOUSAND = 5;

export function openFlowsFigures({ openFlows: o }: Pick<RunResults, 'openFlows'>): Figure[] {
  if (!ran(o)) return [notRunRow('open flows', o)];
  const last = o.samples.reduce((a, s) => (s.open >= a.open ? s : a));
  const mib = (bytes: number) => round(bytes / MiB);
  const past = `past the cache (${o.cacheSize} workflows; slope over ${o.workerGrowth.samples} samples)`;
  return [
    {
      name: `open flows: worker RSS with ${last.open} deposits open (${o.offered} offered at ${o.rate}/s, never paid)`,
      value: mib(last.workerRss),
      unit: 'MiB',
      ratio: `main thread's heap ${mib(last.workerHeapUsed)} of ${mib(last.workerHeapTotal)} MiB; cache ${last.stickyCache}; failed offers ${JSON.stringify(o.errorsBy)}`,
      goal: `≤ ${OPEN_FLOWS_WORKER_RSS_MIB} MiB`,
      pass: last.workerRss <= OPEN_FLOWS_WORKER_RSS_MIB * MiB && o.opened === o.offered,
    },
    {
      name: `open flows: worker RSS per further 1,000 open ${past}`,
      value: o.workerGrowth.mibPerThousand,
      unit: 'MiB',
      ratio: `main thread's heap ${o.workerHeapGrowth.mibPerThousand} MiB per 1,000; ${o.mibPerCachedWorkflow} MiB per cached workflow while the cache filled`,
      goal: `≤ ${OPEN_FLOWS_GROWTH_MIB_PER_THOUSAND} MiB`,
      pass: o.workerGrowth.mibPerThousand <= OPEN_FLOWS_GROWTH_MIB_PER_THOUSAND,
    },
    {
      name: `open flows: API RSS with ${last.open} deposits open`,
      value: mib(last.apiRss),
      unit: 'MiB',
      ratio: `heap ${mib(last.apiHeapUsed)} of ${mib(last.apiHeapTotal)} MiB`,
    },
    {
      name: `open flows: API RSS per further 1,000 open ${past}`,
      value: o.apiGrowth.mibPerThousand,
      unit: 'MiB',
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
      ratio: `${tokens.wholeRun} over the whole run (${round(runMinutes, 1)} min; a token lives 60 min; the same-work floor's worker's own not counted)`,
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
  rows.push(...production.runs.flatMap(temporalCpuFigures));
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

/** The Temporal server's and its Postgres's CPU per flow on the production server: reported, no goal. */
export function temporalCpuFigures(run: ProductionRun): Figure[] {
  const name = `production server, ${run.processes} worker(s) and API(s): the Temporal server and its Postgres, CPU`;
  const cpu = run.temporalCpu;
  if (!cpu) return [];
  if ('notRun' in cpu) return [notRunRow(name, cpu)];
  const idle = (part: string) => cpu.idleMsPerSecond[part] ?? 0;
  const row = (f: TemporalFlowCpu, what: string, extra = ''): Figure => ({
    name: `${name} per ${what} (${f.completed} at ${f.rate}/s, median of ${cpu.rounds.length})`,
    value: f.total,
    unit: 'ms',
    ratio: `server ${f.server} ms, its databases' backends ${f.postgres} ms, its part of Postgres's shared processes ${f.postgresShare} ms (of ${f.postgresShared} ms)${extra}`,
  });
  return [
    row(cpu.floor, 'floor flow'),
    row(
      cpu.deposit,
      'deposit',
      `; ${ratio(cpu.deposit.total, cpu.floor.total)} of the floor's; idle: server ${idle('temporal')} ms/s, its backends ${idle('postgres:temporal')} ms/s, Postgres's shared ${idle('postgres:shared')} ms/s`,
    ),
  ];
}
