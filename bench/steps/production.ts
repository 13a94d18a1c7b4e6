import { existsSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { z } from 'zod';
import { clientTlsEnv, clientTlsOf, temporalTlsFiles } from '../../scripts/temporal-certs';
import { PERSISTENCE_DATABASE, VISIBILITY_DATABASE } from '../../scripts/temporal-server';
import type { FloorShape } from '../floor-workflow';
import { type Bench, connect, type Settled, settle, startStack } from '../harness';
import { type Completions, type Launched, step } from '../load';
import { completedAt, completedFlows, postDeposit, setAuto } from '../pixflow';
import { type CpuSnapshot, cpuMsBetweenBy, cpuSnapshot, stackProcesses } from '../proc';
import { say, settings, sleep } from '../settings';
import type { BenchStack } from '../stack';
import { median, round } from '../stats';
import { type DepositRamp, depositRamp } from './deposits';
import { type FloorRamp, floorCompletions, floorRamp, launchFloor } from './floor';
import { readDepositShape } from './shape';

// Deposits on the production Temporal server (on Postgres, not the dev server's SQLite), with 1
// and with 2 worker and API processes, each next to the floor on the same server: a stack of
// its own for each, started by `npm start` with the options of `settings.production.argsTemplate`
// (`--temporal postgres --workers n --apis n`). The bench's requests take the APIs in turn.
// Then, at one rate below both saturations, what the Temporal server and its share of Postgres
// (the stack's one instance, where Temporal has two databases of its own) spend per flow.

export interface ProductionRun {
  processes: number;
  /** Why this run measured nothing, when it did not. */
  notRun?: string;
  /** Processes of each part the stack was seen running. */
  seen?: Record<string, number>;
  floor?: FloorRamp;
  deposits?: DepositRamp;
  /** Deposits' saturation over the floor's on the same server. */
  ratio?: number;
  /** What the Temporal server and its Postgres spent per flow, the floor's and the deposits'. */
  temporalCpu?: TemporalCpu | { notRun: string };
}

export interface Production {
  notRun?: string;
  runs: ProductionRun[];
}

/** Whom a process of the stack's one Postgres works for. */
export type PostgresSide = 'temporal' | 'pixflow' | 'shared';

/** A Postgres process as pg_stat_activity names it. */
export interface PgProcess {
  /** The database a backend or an autovacuum worker serves; null for Postgres's own processes. */
  database: string | null;
  type: string | null;
}

/** Temporal's two databases in the stack's Postgres (scripts/temporal-server.ts). */
export const TEMPORAL_DATABASES: readonly string[] = [PERSISTENCE_DATABASE, VISIBILITY_DATABASE];

/**
 * A backend or autovacuum worker of Temporal's databases works for Temporal, of any other
 * database for pixflow (its own, the floors', the bench's reads). The postmaster, the writers,
 * the checkpointer and the launchers serve no one database: shared, as is every backend that
 * ended within the step (Linux counts it in the postmaster's time).
 */
export function postgresSide(p: PgProcess | undefined, temporalDatabases = TEMPORAL_DATABASES): PostgresSide {
  if (!p?.database) return 'shared';
  return temporalDatabases.includes(p.database) ? 'temporal' : 'pixflow';
}

/** The stack's parts with Postgres's processes told apart: `postgres:temporal`, `:pixflow`, `:shared`. */
export const splitPostgres =
  (pgProcesses: ReadonlyMap<number, PgProcess>) =>
  (pid: number, part: string): string =>
    part === 'postgres' ? `postgres:${postgresSide(pgProcesses.get(pid))}` : part;

const pgActivitySchema = z.array(
  z.object({ pid: z.number().int(), datname: z.string().nullable(), backend_type: z.string().nullable() }),
);

/** Every process pg_stat_activity lists (backends and Postgres's own, not the postmaster), by pid. */
async function pgProcesses(pool: pg.Pool): Promise<Map<number, PgProcess>> {
  const r = await pool.query('SELECT pid, datname, backend_type FROM pg_stat_activity');
  return new Map(
    pgActivitySchema.parse(r.rows).map((p) => [p.pid, { database: p.datname, type: p.backend_type }]),
  );
}

/** What Temporal on Postgres spent per completed flow (ms of CPU), and what its Postgres shares. */
export interface TemporalPerFlow {
  /** The Temporal server's processes. */
  server: number;
  /** The backends and autovacuum workers of Temporal's databases. */
  postgres: number;
  /** Temporal's part of Postgres's shared processes: as much of them as its backends are of all backends. */
  postgresShare: number;
  /** server + postgres + postgresShare: Temporal's cost, its database's included. */
  total: number;
  /** Postgres's shared processes in all, Temporal's part and pixflow's. */
  postgresShared: number;
  /** The backends of pixflow's database (the floors' and the bench's too). */
  pixflowPostgres: number;
}

/** Temporal's CPU per flow from a step's CPU ms by part (Postgres's split by `splitPostgres`). */
export function temporalPerFlow(cpuMs: Readonly<Record<string, number>>, completed: number): TemporalPerFlow {
  const ms = (part: string) => cpuMs[part] ?? 0;
  const own = ms('postgres:temporal');
  const pixflow = ms('postgres:pixflow');
  const shared = ms('postgres:shared');
  const share = own + pixflow > 0 ? (shared * own) / (own + pixflow) : 0;
  const per = (x: number) => (completed > 0 ? round(x / completed, 2) : Number.NaN);
  return {
    server: per(ms('temporal')),
    postgres: per(own),
    postgresShare: per(share),
    total: per(ms('temporal') + own + share),
    postgresShared: per(shared),
    pixflowPostgres: per(pixflow),
  };
}

/** One flow's step at a steady rate on the production server. */
export interface TemporalFlowCpu extends TemporalPerFlow {
  flow: 'floor' | 'deposit';
  rate: number;
  completed: number;
  seconds: number;
  stealPct: number;
  /** CPU ms over the step by part, Postgres's split as `splitPostgres` names them. */
  cpuMs: Record<string, number>;
}

/** The Temporal server's and its Postgres's CPU on the production server, per flow and idle. */
export interface TemporalCpu {
  /** Flows a second offered in each step: below the floor's and the deposits' saturation. */
  rate: number;
  /** The wait for a quiet stack before the first step. */
  settled: Settled;
  /** CPU ms a second of each part with nothing offered, just before; every step pays it too. */
  idleMsPerSecond: Record<string, number>;
  /** Each round's steps, the floor's then the deposits'. */
  rounds: TemporalFlowCpu[][];
  /** Each figure the median of its rounds'. */
  floor: TemporalFlowCpu;
  deposit: TemporalFlowCpu;
}

const medianOf = (values: number[]) => round(median(values), 2);

/** A flow over its rounds: each figure, and each part's CPU, the median of the rounds'. */
export function medianFlowCpu(rounds: readonly TemporalFlowCpu[]): TemporalFlowCpu {
  const first = rounds[0];
  if (!first) throw new Error('no round to take the median of');
  const of = (k: keyof TemporalPerFlow | 'rate' | 'completed' | 'seconds' | 'stealPct') =>
    medianOf(rounds.map((r) => r[k]));
  const parts = [...new Set(rounds.flatMap((r) => Object.keys(r.cpuMs)))];
  return {
    flow: first.flow,
    rate: of('rate'),
    completed: of('completed'),
    seconds: of('seconds'),
    stealPct: of('stealPct'),
    server: of('server'),
    postgres: of('postgres'),
    postgresShare: of('postgresShare'),
    total: of('total'),
    postgresShared: of('postgresShared'),
    pixflowPostgres: of('pixflowPostgres'),
    cpuMs: Object.fromEntries(parts.map((p) => [p, medianOf(rounds.map((r) => r.cpuMs[p] ?? 0))])),
  };
}

/** The rate of the Temporal CPU steps: half of the slower saturation, no higher than `carried`. */
export function temporalCpuRate(floor: number, deposits: number, carried = Number.POSITIVE_INFINITY): number {
  return round(Math.min(carried, Math.min(floor, deposits) / 2), 2);
}

interface Measured {
  flow: TemporalFlowCpu['flow'];
  launch: () => Promise<Launched>;
  completions: Completions;
  /** Those of `ids` that completed. */
  done: (ids: string[]) => Promise<string[]>;
}

/** Each part's CPU (ms) between two moments, Postgres's processes told apart by whom they serve. */
async function splitCpu(
  b: Bench,
  work: () => Promise<void>,
): Promise<{ cpuMs: Record<string, number>; seconds: number }> {
  const root = b.stack.child.pid as number;
  const pgBefore = await pgProcesses(b.pool);
  const before: CpuSnapshot = cpuSnapshot(root, b.ownPids);
  await work();
  const after = cpuSnapshot(root, b.ownPids);
  // A backend that began in between is named in the second list, one that ended in the first.
  const named = new Map([...pgBefore, ...(await pgProcesses(b.pool))]);
  const cpuMs = cpuMsBetweenBy(before, after, splitPostgres(named));
  return {
    cpuMs: Object.fromEntries(Object.entries(cpuMs).map(([k, v]) => [k, round(v)])),
    seconds: round((after.at - before.at) / 1000, 1),
  };
}

async function temporalCpuStep(b: Bench, rate: number, m: Measured): Promise<TemporalFlowCpu> {
  await settle(b, 25, 60_000);
  say(`production: Temporal's CPU, ${m.flow} at ${rate}/s for ${settings.cost.stepMs / 1000} s...`);
  let ids: string[] = [];
  let stealPct = 0;
  const { cpuMs, seconds } = await splitCpu(b, async () => {
    const r = await step(rate, settings.cost.stepMs, m.launch, m.completions, { drainMs: 60_000 });
    ids = r.ids;
    stealPct = r.stealPct;
  });
  const completed = (await m.done(ids)).length;
  const cpu = {
    flow: m.flow,
    rate,
    completed,
    seconds,
    stealPct,
    cpuMs,
    ...temporalPerFlow(cpuMs, completed),
  };
  say(
    `   ${completed} completed; per flow ms: server ${cpu.server}, its Postgres ${cpu.postgres} + ${cpu.postgresShare} shared`,
  );
  return cpu;
}

/**
 * The floor, then the deposits, at `rate` for a cost step each (`settings.cost.stepMs`), in turn
 * `settings.cost.rounds` times, after the idle CPU of each part over `settings.cost.idleMs`.
 */
async function temporalCpu(b: Bench, shape: FloorShape, rate: number): Promise<TemporalCpu> {
  const settled = await settle(b, 25, 120_000);
  const idle = await splitCpu(b, async () => {
    await sleep(settings.cost.idleMs);
  });
  const idleMsPerSecond = Object.fromEntries(
    Object.entries(idle.cpuMs).map(([k, v]) => [k, round(v / idle.seconds)]),
  );
  const flows: Measured[] = [
    {
      flow: 'floor',
      launch: () => launchFloor(b, shape),
      completions: floorCompletions(b),
      done: async (of) => of.filter((id) => b.floorDone.has(id)),
    },
    {
      flow: 'deposit',
      launch: () => postDeposit(b),
      completions: completedFlows(b, 'deposit'),
      done: async (of) => [...(await completedAt(b, 'deposit', of)).keys()],
    },
  ];
  const rounds: TemporalFlowCpu[][] = [];
  for (let n = 1; n <= settings.cost.rounds; n++) {
    const steps: TemporalFlowCpu[] = [];
    for (const m of flows) steps.push(await temporalCpuStep(b, rate, m));
    rounds.push(steps);
  }
  const of = (flow: TemporalFlowCpu['flow']) =>
    medianFlowCpu(rounds.map((r) => r.find((s) => s.flow === flow) as TemporalFlowCpu));
  return { rate, settled, idleMsPerSecond, rounds, floor: of('floor'), deposit: of('deposit') };
}

/** `--x {n}` with n processes, as `npm start` options. */
export function productionArgs(template: string, n: number): string[] {
  return template
    .split(/\s+/)
    .filter(Boolean)
    .map((a) => a.replaceAll('{n}', String(n)));
}

/** Why a stack is not the production one asked for, or undefined when it is. */
function notProduction(stack: BenchStack, n: number, seen: Record<string, number>): string | undefined {
  const procs = stackProcesses(stack.child.pid as number);
  if ((procs.get('temporal') ?? []).some((p) => p.cmd.includes('start-dev'))) {
    return 'not run: production server not available (`npm start` ran the dev server with these options)';
  }
  if (!seen.temporal)
    return 'not run: production server not available (no Temporal process under `npm start`)';
  if (seen.worker !== n || seen.api !== n || stack.apis.length !== n) {
    return `not run: asked for ${n} workers and APIs, \`npm start\` ran ${seen.worker ?? 0} and ${seen.api ?? 0}`;
  }
  return undefined;
}

async function productionRun(n: number, carriedRate?: number): Promise<ProductionRun> {
  const args = productionArgs(settings.production.argsTemplate, n);
  say(`production server, ${n} worker(s) and API(s): npm start -- ${args.join(' ')}...`);
  const stack = await startStack(args);
  const seen = Object.fromEntries(
    [...stackProcesses(stack.child.pid as number)].map(([part, ps]) => [part, ps.length]),
  );
  const why = notProduction(stack, n, seen);
  if (why) {
    await stack.stop();
    say(`   ${why}`);
    return { processes: n, notRun: why, seen };
  }
  // The production server takes only clients with a certificate of its data folder's CA, as
  // start.ts gives its workers and APIs: the bench's client and floors too.
  const tls = temporalTlsFiles(path.join(stack.env.DATA_DIR ?? '', 'temporal-tls'));
  if (existsSync(tls.client.cert)) Object.assign(stack.env, clientTlsEnv(clientTlsOf(tls)));
  const b = await connect(stack, { floorWorkers: n }).catch(async (err) => {
    await stack.stop();
    throw err;
  });
  try {
    await setAuto(b, settings.autoAfterMs, settings.autoAfterMs);
    const { shape } = await readDepositShape(b);
    const floor = await floorRamp(b, shape);
    const deposits = await depositRamp(b);
    const ratio = floor.saturation > 0 ? round(deposits.saturation / floor.saturation) : Number.NaN;
    say(`   ${n}: deposits ${deposits.saturation}/s, floor ${floor.saturation}/s (${ratio})`);
    const rate = temporalCpuRate(floor.saturation, deposits.saturation, carriedRate);
    // Without Postgres of its own under `npm start`, its processes are not the stack's to read.
    const temporal = seen.postgres
      ? await temporalCpu(b, shape, rate)
      : { notRun: 'not run: Postgres is not a process of the stack (DATABASE_URL set)' };
    return { processes: n, seen, floor, deposits, ratio, temporalCpu: temporal };
  } finally {
    await b.close();
  }
}

export async function production(): Promise<Production> {
  const runs: ProductionRun[] = [];
  // Every run's Temporal CPU at the first's rate, or lower where a run saturates lower.
  let rate: number | undefined;
  for (const n of settings.production.processes) {
    const run = await productionRun(n, rate);
    runs.push(run);
    if (run.temporalCpu && !('notRun' in run.temporalCpu)) rate ??= run.temporalCpu.rate;
    // No use starting another stack to be told the same.
    if (run.notRun?.includes('production server not available')) break;
  }
  const notRun = runs.every((r) => r.notRun) ? runs[0]?.notRun : undefined;
  return { ...(notRun ? { notRun } : {}), runs };
}
