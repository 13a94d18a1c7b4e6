import { depositWorkflowId } from '../../contracts/deposit';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import type { FloorShape } from '../floor-workflow';
import type { Bench } from '../harness';
import { type Completions, type Launched, step } from '../load';
import { completedAt, completedFlows, postDeposit, postWithdrawal } from '../pixflow';
import { cpuMsBetween, cpuSnapshot, stackProcesses } from '../proc';
import { sameWorkDepositId, sameWorkWithdrawalId } from '../same-work-floor/workflows';
import { say, settings, sleep } from '../settings';
import { median, percentile, round, type Summary, summarize } from '../stats';
import { historyFacts } from '../temporal-actions';
import { floorCompletions, launchFloor } from './floor';
import {
  launchSameWork,
  type SameWorkKind,
  sameWorkCompletedAt,
  sameWorkCompletions,
  withNotificationsToSameWork,
} from './same-work';
import { readHistory } from './shape';

// Cost per flow: the CPU each process of the stack spent per flow completed over a steady step
// (from /proc/<pid>/stat), and what a completed flow's history weighs as the server keeps it;
// the floor, then the same-work floor's deposits and pixflow's, then the same-work floor's
// withdrawals and pixflow's, each at the same rate; all of them `settings.cost.rounds` times in
// turn, so a drift of the machine (Postgres's autovacuum above all) meets every flow, and each
// flow's figures are the medians of its rounds.

export type CostedFlow = 'floor' | 'same-work deposit' | 'deposit' | 'same-work withdrawal' | 'withdrawal';

export interface HistorySizes {
  sampled: number;
  bytesP50: number;
  bytesMax: number;
  eventsP50: number;
  eventsMax: number;
  /** Billable Temporal actions (`temporal-actions.ts`), counted from the same histories. */
  actionsP50?: number;
  actionsMax?: number;
}

export interface FlowCost {
  flow: CostedFlow;
  rate: number;
  completed: number;
  seconds: number;
  /**
   * CPU ms over the step, by part of the stack, the floors' own processes (`floor-worker`,
   * `same-work-worker`, `same-work-server`) and `bench` (this process: the load).
   */
  cpuMs: Record<string, number>;
  cpuMsPerFlow: Record<string, number>;
  /** The stack's processes and the floors' together (not the bench), per flow. */
  stackMsPerFlow: number;
  /** The answers to the offers (the POST's, or the floor's update-with-start). */
  answers: Summary;
  history: HistorySizes;
  stealPct: number;
}

export interface Cost {
  rate: number;
  /** Each round's steps, in the order run (absent from the results of runs before rounds). */
  rounds?: FlowCost[][];
  /** The processes counted as `other` (neither a service, Postgres nor Temporal), for the record. */
  others: string[];
  /** CPU ms per second of each part with nothing offered, just before: what every step pays anyway. */
  idleMsPerSecond: Record<string, number>;
  /** Each flow over the rounds: every figure the median of its rounds'. */
  flows: FlowCost[];
}

interface Costed {
  flow: CostedFlow;
  launch: () => Promise<Launched>;
  completions: Completions;
  /** Those of `ids` that completed. */
  done: (ids: string[]) => Promise<string[]>;
  workflowId: (id: string) => string;
  /** The same-work floor's: its notifications go to the floor while it runs. */
  sameWork?: boolean;
}

async function historySizes(b: Bench, workflowIds: string[]): Promise<HistorySizes> {
  const read = await Promise.all(workflowIds.map((id) => readHistory(b, id).catch(() => undefined)));
  const ok = read.filter((h) => h !== undefined);
  const bytes = ok.map((h) => h.bytes);
  const events = ok.map((h) => h.events.length);
  const actions = ok.map((h) => historyFacts({ events: h.events }, h.bytes).actions.total);
  const max = (xs: number[]) => (xs.length ? Math.max(...xs) : Number.NaN);
  return {
    sampled: ok.length,
    bytesP50: round(percentile(bytes, 50)),
    bytesMax: max(bytes),
    eventsP50: round(percentile(events, 50)),
    eventsMax: max(events),
    actionsP50: round(percentile(actions, 50)),
    actionsMax: max(actions),
  };
}

async function costOf(b: Bench, rate: number, c: Costed): Promise<FlowCost> {
  say(`cost: ${c.flow} at ${round(rate)}/s for ${settings.cost.stepMs / 1000} s...`);
  const root = b.stack.child.pid as number;
  const before = cpuSnapshot(root, b.ownPids);
  const r = await step(rate, settings.cost.stepMs, c.launch, c.completions, { drainMs: 60_000 });
  const after = cpuSnapshot(root, b.ownPids);
  const done = await c.done(r.ids);
  const cpuMs = Object.fromEntries(
    Object.entries(cpuMsBetween(before, after)).map(([k, v]) => [k, round(v)]),
  );
  const per = (ms: number) => (done.length ? round(ms / done.length, 2) : Number.NaN);
  // The stack's processes; for the floor its own worker stands for pixflow's.
  const stackMs = Object.entries(cpuMs)
    .filter(([k]) => k !== 'bench')
    .reduce((a, [, v]) => a + v, 0);
  const sample = done.slice(-settings.cost.histories).map(c.workflowId);
  const history = await historySizes(b, sample);
  const cost: FlowCost = {
    flow: c.flow,
    rate: round(rate),
    completed: done.length,
    seconds: round((after.at - before.at) / 1000, 1),
    cpuMs,
    cpuMsPerFlow: Object.fromEntries(Object.entries(cpuMs).map(([k, v]) => [k, per(v)])),
    stackMsPerFlow: per(stackMs),
    answers: summarize(r.latenciesMs),
    history,
    stealPct: r.stealPct,
  };
  say(`   ${r.point.achieved}/s; ${JSON.stringify({ perFlow: cost.cpuMsPerFlow, history })}`);
  await sleep(3_000);
  return cost;
}

/** What each part of the stack spends per second with nothing offered. */
async function idle(b: Bench): Promise<Record<string, number>> {
  const root = b.stack.child.pid as number;
  const before = cpuSnapshot(root, b.ownPids);
  await sleep(settings.cost.idleMs);
  const after = cpuSnapshot(root, b.ownPids);
  const seconds = (after.at - before.at) / 1000;
  return Object.fromEntries(
    Object.entries(cpuMsBetween(before, after)).map(([k, v]) => [k, round(v / seconds)]),
  );
}

/** Each flow at `rate` (below every one's saturation), one after the other. */
export async function costPerFlow(b: Bench, shape: FloorShape, rate: number): Promise<Cost> {
  const ids = async (type: 'deposit' | 'withdrawal', of: string[]) => [
    ...(await completedAt(b, type, of)).keys(),
  ];
  const sameWork = (kind: SameWorkKind): Costed => ({
    flow: `same-work ${kind}`,
    launch: launchSameWork(b, kind),
    completions: sameWorkCompletions(b, kind),
    done: async (of) => [...(await sameWorkCompletedAt(b, kind, of)).keys()],
    workflowId: kind === 'deposit' ? sameWorkDepositId : sameWorkWithdrawalId,
    sameWork: true,
  });
  const flows: Costed[] = [
    {
      flow: 'floor',
      launch: () => launchFloor(b, shape),
      completions: floorCompletions(b),
      done: async (of) => of.filter((id) => b.floorDone.has(id)),
      workflowId: (id) => id,
    },
    sameWork('deposit'),
    {
      flow: 'deposit',
      launch: () => postDeposit(b),
      completions: completedFlows(b, 'deposit'),
      done: (of) => ids('deposit', of),
      workflowId: (txid) => depositWorkflowId(txid),
    },
    sameWork('withdrawal'),
    {
      flow: 'withdrawal',
      launch: () => postWithdrawal(b),
      completions: completedFlows(b, 'withdrawal'),
      done: (of) => ids('withdrawal', of),
      workflowId: (transactionId) => withdrawalWorkflowId(transactionId),
    },
  ];
  const idleMsPerSecond = await idle(b);
  const rounds: FlowCost[][] = [];
  for (let n = 1; n <= settings.cost.rounds; n++) {
    if (settings.cost.rounds > 1) say(`cost: round ${n} of ${settings.cost.rounds}`);
    const costs: FlowCost[] = [];
    for (const c of flows) {
      costs.push(
        await (c.sameWork ? withNotificationsToSameWork(b, () => costOf(b, rate, c)) : costOf(b, rate, c)),
      );
    }
    rounds.push(costs);
  }
  const others = (stackProcesses(b.stack.child.pid as number).get('other') ?? []).map((p) =>
    p.cmd.slice(0, 120),
  );
  return {
    rate: round(rate),
    rounds,
    others,
    idleMsPerSecond,
    flows: flows.map((c) => medianCost(rounds.map((r) => r.find((f) => f.flow === c.flow) as FlowCost))),
  };
}

const medianOf = (values: number[], digits?: number) => round(median(values), digits);

/** Each key's median over `records` (a key some record lacks counts as 0 there). */
function medianByKey(records: Record<string, number>[], digits?: number): Record<string, number> {
  const keys = [...new Set(records.flatMap(Object.keys))];
  return Object.fromEntries(
    keys.map((k) => [
      k,
      medianOf(
        records.map((r) => r[k] ?? 0),
        digits,
      ),
    ]),
  );
}

/**
 * One flow over its rounds: each figure the median of the rounds' (a process's CPU per flow its
 * own median, so the processes need not come from one round); the answers and the histories are
 * those of the round whose whole stack cost the median.
 */
export function medianCost(rounds: FlowCost[]): FlowCost {
  const first = rounds[0] as FlowCost;
  if (rounds.length === 1) return first;
  const byStack = [...rounds].sort((a, b) => a.stackMsPerFlow - b.stackMsPerFlow);
  const middle = byStack[Math.floor((byStack.length - 1) / 2)] as FlowCost;
  return {
    ...middle,
    rate: medianOf(rounds.map((r) => r.rate)),
    completed: medianOf(rounds.map((r) => r.completed)),
    seconds: medianOf(
      rounds.map((r) => r.seconds),
      1,
    ),
    cpuMs: medianByKey(rounds.map((r) => r.cpuMs)),
    cpuMsPerFlow: medianByKey(
      rounds.map((r) => r.cpuMsPerFlow),
      2,
    ),
    stackMsPerFlow: medianOf(
      rounds.map((r) => r.stackMsPerFlow),
      2,
    ),
    stealPct: medianOf(
      rounds.map((r) => r.stealPct),
      1,
    ),
  };
}
