import { describe, expect, it } from 'vitest';
import { temporalCpuFigures } from '../../bench/figures';
import { type CpuSnapshot, cpuMsBetweenBy } from '../../bench/proc';
import {
  medianFlowCpu,
  type PgProcess,
  postgresSide,
  splitPostgres,
  TEMPORAL_DATABASES,
  type TemporalFlowCpu,
  temporalCpuRate,
  temporalPerFlow,
} from '../../bench/steps/production';

// The production part's split of the stack's one Postgres between Temporal and pixflow, and
// what Temporal then costs a flow: pure arithmetic over /proc's ticks and pg_stat_activity.

const backend = (database: string | null, type = 'client backend'): PgProcess => ({ database, type });

const snapshot = (at: number, procs: [number, string, number, number][]): CpuSnapshot => ({
  at,
  procs: new Map(procs.map(([pid, part, ticks, childTicks]) => [pid, { part, ticks, childTicks }])),
  benchUs: 0,
});

describe("the stack's Postgres, split by whom each process works for", () => {
  it("names Temporal's two databases as the server makes them", () => {
    expect(TEMPORAL_DATABASES).toEqual(['temporal', 'temporal_visibility']);
  });

  it("gives Temporal its databases' backends and autovacuum workers, pixflow every other database's", () => {
    expect(postgresSide(backend('temporal'))).toBe('temporal');
    expect(postgresSide(backend('temporal_visibility'))).toBe('temporal');
    expect(postgresSide(backend('temporal', 'autovacuum worker'))).toBe('temporal');
    expect(postgresSide(backend('pixflow'))).toBe('pixflow');
    expect(postgresSide(backend('postgres'))).toBe('pixflow');
  });

  it("leaves Postgres's own processes, and any it does not list (the postmaster), shared", () => {
    expect(postgresSide(backend(null, 'checkpointer'))).toBe('shared');
    expect(postgresSide(backend(null, 'walwriter'))).toBe('shared');
    expect(postgresSide(undefined)).toBe('shared');
  });

  it("splits a step's Postgres CPU by backend, an ended backend's time in the postmaster's shared part", () => {
    const named = new Map<number, PgProcess>([
      [11, backend('temporal')],
      [12, backend('temporal_visibility')],
      [13, backend('pixflow')],
      [14, backend(null, 'walwriter')],
      [15, backend('pixflow')],
    ]);
    // 10 the postmaster (a backend of 5 ticks ended: its waited-for children grow by 5), 15 a
    // backend begun within the step, 20 the Temporal server, 30 the worker.
    const before = snapshot(0, [
      [10, 'postgres', 100, 50],
      [11, 'postgres', 200, 0],
      [12, 'postgres', 40, 0],
      [13, 'postgres', 300, 0],
      [14, 'postgres', 10, 0],
      [20, 'temporal', 1_000, 0],
      [30, 'worker', 500, 0],
    ]);
    const after = snapshot(10_000, [
      [10, 'postgres', 101, 55],
      [11, 'postgres', 230, 0],
      [12, 'postgres', 50, 0],
      [13, 'postgres', 320, 0],
      [14, 'postgres', 14, 0],
      [15, 'postgres', 6, 0],
      [20, 'temporal', 1_400, 0],
      [30, 'worker', 900, 0],
    ]);
    const ms = cpuMsBetweenBy(before, after, splitPostgres(named));
    expect(ms).toMatchObject({
      'postgres:temporal': 400,
      'postgres:pixflow': 260,
      'postgres:shared': 100,
      temporal: 4_000,
      worker: 4_000,
    });
    expect(ms.postgres).toBeUndefined();
  });
});

describe("Temporal's CPU per flow", () => {
  it("adds to the server and its backends its part of the shared processes, by its backends' share", () => {
    const perFlow = temporalPerFlow(
      {
        temporal: 6_000,
        'postgres:temporal': 3_000,
        'postgres:pixflow': 1_000,
        'postgres:shared': 800,
        worker: 9,
      },
      100,
    );
    expect(perFlow).toEqual({
      server: 60,
      postgres: 30,
      postgresShare: 6,
      total: 96,
      postgresShared: 8,
      pixflowPostgres: 10,
    });
  });

  it('gives Temporal none of the shared processes when no backend worked', () => {
    const perFlow = temporalPerFlow({ temporal: 500, 'postgres:shared': 300 }, 10);
    expect(perFlow.postgresShare).toBe(0);
    expect(perFlow.total).toBe(50);
    expect(perFlow.postgresShared).toBe(30);
  });

  it('says nothing per flow when no flow completed', () => {
    expect(temporalPerFlow({ temporal: 500 }, 0).total).toBeNaN();
  });
});

const flowCpu = (total: number, cpuMs: Record<string, number>, completed = 200): TemporalFlowCpu => ({
  flow: 'deposit',
  rate: 5,
  completed,
  seconds: 40,
  stealPct: 1,
  server: total / 2,
  postgres: total / 4,
  postgresShare: total / 4,
  total,
  postgresShared: total / 2,
  pixflowPostgres: 3,
  cpuMs,
});

describe('a flow over its rounds', () => {
  it("takes each figure's median, a part missing from a round counting 0 there", () => {
    const m = medianFlowCpu([
      flowCpu(120, { temporal: 9_000, 'postgres:shared': 400 }, 199),
      flowCpu(80, { temporal: 7_000 }, 200),
      flowCpu(100, { temporal: 8_000, 'postgres:shared': 300 }, 201),
    ]);
    expect(m.total).toBe(100);
    expect(m.server).toBe(50);
    expect(m.completed).toBe(200);
    expect(m.cpuMs).toEqual({ temporal: 8_000, 'postgres:shared': 300 });
    expect(m.flow).toBe('deposit');
  });

  it('is the round itself when there is one', () => {
    const one = flowCpu(90, { temporal: 1 });
    expect(medianFlowCpu([one])).toEqual(one);
  });

  it('refuses to take the median of no round', () => {
    expect(() => medianFlowCpu([])).toThrow(/no round/);
  });
});

describe("the Temporal CPU steps' rate", () => {
  it("is half of the slower saturation, no higher than the first run's", () => {
    expect(temporalCpuRate(19.84, 12.8)).toBe(6.4);
    expect(temporalCpuRate(20.14, 10.8, 6.4)).toBe(5.4);
    expect(temporalCpuRate(20.14, 14, 6.4)).toBe(6.4);
  });
});

describe("the production part's Temporal CPU rows", () => {
  const floor = { ...flowCpu(60, { temporal: 1_500 }, 44), flow: 'floor' as const };
  const deposit = flowCpu(90, { temporal: 1_800 }, 44);
  const run = {
    processes: 1,
    temporalCpu: {
      rate: 2.2,
      settled: { waitedMs: 5_000, cpuPct: 4, quiet: true },
      idleMsPerSecond: { temporal: 22, 'postgres:temporal': 4, 'postgres:shared': 2 },
      rounds: [[floor, deposit]],
      floor,
      deposit,
    },
  };

  it("gives the floor's and the deposit's total, each part named, the deposit's over the floor's", () => {
    const [f, d] = temporalCpuFigures(run);
    expect(f?.value).toBe(60);
    expect(f?.name).toContain('1 worker(s) and API(s)');
    expect(f?.name).toContain('per floor flow (44 at 5/s, median of 1)');
    expect(d?.value).toBe(90);
    expect(d?.ratio).toContain('server 45 ms');
    expect(d?.ratio).toContain("its databases' backends 22.5 ms");
    expect(d?.ratio).toContain("1.5 of the floor's");
    expect(d?.ratio).toContain('idle: server 22 ms/s');
    expect(f?.goal).toBeUndefined();
  });

  it('says why when it measured nothing, and has no row when the run never got there', () => {
    const [row] = temporalCpuFigures({ processes: 2, temporalCpu: { notRun: 'not run: no Postgres' } });
    expect(row?.ratio).toBe('not run: no Postgres');
    expect(temporalCpuFigures({ processes: 2 })).toEqual([]);
  });
});
