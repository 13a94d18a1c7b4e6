import { describe, expect, it } from 'vitest';
import {
  busiestThreads,
  type CpuSnapshot,
  cpuMsBetween,
  parseThreadStat,
  threadTicks,
} from '../../bench/proc';

// A step's CPU from two /proc snapshots: the ticks each process (and the children it has waited
// for) gained in between, 10 ms a tick.

type Row = { pid: number; part: string; ticks: number; childTicks: number; ppid?: number };
const snapshot = (rows: Row[]): CpuSnapshot => ({
  at: 0,
  procs: new Map(rows.map(({ pid, ...p }) => [pid, p])),
  benchUs: 0,
});

describe("a step's CPU by part", () => {
  it('counts what each process gained, and a process started in between whole', () => {
    const a = snapshot([{ pid: 1, part: 'worker', ticks: 100, childTicks: 0 }]);
    const b = snapshot([
      { pid: 1, part: 'worker', ticks: 130, childTicks: 0 },
      { pid: 2, part: 'api', ticks: 5, childTicks: 0 },
    ]);
    expect(cpuMsBetween(a, b)).toEqual({ worker: 300, api: 50, bench: 0 });
  });

  it("counts a backend that ended in between for the time it used after the first snapshot, not its life's", () => {
    // The backend had used 500 ticks by the first snapshot, then 20 more, and ended: its
    // postmaster's waited-for children grew by its whole life (520), which Linux keeps there.
    const a = snapshot([
      { pid: 10, part: 'postgres', ticks: 50, childTicks: 1_000 },
      { pid: 11, part: 'postgres', ticks: 500, childTicks: 0, ppid: 10 },
    ]);
    const b = snapshot([{ pid: 10, part: 'postgres', ticks: 60, childTicks: 1_520 }]);
    // The postmaster's own 10 ticks and the backend's last 20.
    expect(cpuMsBetween(a, b)).toEqual({ postgres: 300, bench: 0 });
  });

  it('takes nothing off for an ended process whose parent is not in the stack', () => {
    const a = snapshot([{ pid: 20, part: 'sandbox', ticks: 40, childTicks: 0, ppid: 99 }]);
    const b = snapshot([]);
    expect(cpuMsBetween(a, b)).toEqual({ bench: 0 });
  });
});

describe("a process's busiest threads", () => {
  it('reads a thread stat line, its name holding spaces and parentheses', () => {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
    const line = '4242 (tokio (rt) w) S 1 1 1 0 -1 4194560 10 0 0 0 120 30 0 0 20 0 1 0';
    expect(parseThreadStat(line)).toEqual({ name: 'tokio (rt) w', ticks: 150 });
  });

  it('gives each thread its share of one core between two readings, the busiest first', () => {
    const a = [
      { tid: 1, name: 'node', ticks: 1_000 },
      { tid: 2, name: 'tokio-runtime-w', ticks: 100 },
    ];
    const b = [
      { tid: 1, name: 'node', ticks: 1_500 },
      { tid: 2, name: 'tokio-runtime-w', ticks: 200 },
      { tid: 3, name: 'libuv-worker', ticks: 50 },
    ];
    // Over 5 s: 500 ticks are 5 s of CPU (100%), 100 ticks 20%, a new thread's 50 ticks 10%.
    expect(busiestThreads(a, b, 5, 2)).toEqual([
      { tid: 1, name: 'node', pct: 100 },
      { tid: 2, name: 'tokio-runtime-w', pct: 20 },
    ]);
  });

  it("reads this process's own threads, its main thread among them", () => {
    const threads = threadTicks(process.pid);
    expect(threads.map((t) => t.tid)).toContain(process.pid);
    expect(threads.every((t) => Number.isFinite(t.ticks) && t.name.length > 0)).toBe(true);
  });
});
