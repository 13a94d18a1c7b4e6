import { describe, expect, it } from 'vitest';
import { type CpuSnapshot, cpuMsBetween } from '../../bench/proc';

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
