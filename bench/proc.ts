import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { round } from './stats';

// What the bench reads from /proc: the machine's CPU time and the hypervisor's share of it, the
// stack's processes, their CPU time and resident memory.

/** The machine's CPU time so far, and the part of it the hypervisor took (steal), in ticks. */
export interface CpuTicks {
  steal: number;
  total: number;
  /** Idle and waiting for I/O. */
  idle: number;
}

export function cpuTicks(): CpuTicks {
  const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
    .trim()
    .split(/\s+/)
    .slice(1, 9)
    .map(Number);
  return { steal: f[7] ?? 0, total: f.reduce((a, b) => a + b, 0), idle: (f[3] ?? 0) + (f[4] ?? 0) };
}

/** Percent of the CPU time since `from` that the hypervisor took from this machine. */
export function stealPctSince(from: CpuTicks): number {
  const now = cpuTicks();
  const total = now.total - from.total;
  return total > 0 ? round((100 * (now.steal - from.steal)) / total, 1) : 0;
}

/** Percent of the CPU time since `from` that this machine was busy (neither idle nor waiting for I/O). */
export function busyPctSince(from: CpuTicks): number {
  const now = cpuTicks();
  const total = now.total - from.total;
  return total > 0 ? round(100 * (1 - (now.idle - from.idle) / total), 1) : 0;
}

interface Proc {
  pid: number;
  ppid: number;
  /** CPU time used so far (user + system), in ticks. */
  ticks: number;
  /** CPU time of its children it has waited for (cutime + cstime), in ticks. */
  childTicks: number;
  cmd: string;
}

/** Every process of the machine that could be read. */
function processes(): Proc[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .flatMap((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
        return [
          {
            pid: Number(pid),
            ppid: Number(f[1]),
            ticks: Number(f[11]) + Number(f[12]),
            childTicks: Number(f[13]) + Number(f[14]),
            cmd,
          },
        ];
      } catch {
        return []; // gone while we looked
      }
    });
}

/** A child of `pid` whose command line contains `needle`. */
export function childPid(pid: number, needle: string): number | undefined {
  return processes().find((p) => p.ppid === pid && p.cmd.includes(needle))?.pid;
}

/** `root` and its descendants. */
function processTree(root: number, procs = processes()): Proc[] {
  const inTree = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of procs) {
      if (!inTree.has(p.pid) && inTree.has(p.ppid)) {
        inTree.add(p.pid);
        grew = true;
      }
    }
  }
  return procs.filter((q) => inTree.has(q.pid));
}

/**
 * The part of the stack a process runs: Postgres by its program's name (a backend's title is
 * "postgres: user database ...", and the database may be Temporal's), the Node parts by their
 * script, Temporal by the word in its command line.
 */
export function partOf(cmd: string): string {
  const program = path.basename(cmd.trim().split(/\s+/)[0] ?? '');
  if (program.startsWith('postgres')) return 'postgres';
  const scripts: [RegExp, string][] = [
    [/worker\/main/, 'worker'],
    [/api\/main/, 'api'],
    [/sandbox\/main/, 'sandbox'],
    [/scripts\/start/, 'start'],
  ];
  if (program === 'node' || program.startsWith('node')) {
    return scripts.find(([re]) => re.test(cmd))?.[1] ?? 'other';
  }
  // The CLI's dev server (temporal server start-dev) or a server built into Temporal's cache folder.
  return /temporal/i.test(cmd) ? 'temporal' : 'other';
}

/** The stack's processes, by the part each runs. */
export function stackProcesses(root: number): Map<string, { pid: number; cmd: string }[]> {
  const out = new Map<string, { pid: number; cmd: string }[]>();
  for (const p of processTree(root)) {
    const part = partOf(p.cmd);
    out.set(part, [...(out.get(part) ?? []), { pid: p.pid, cmd: p.cmd }]);
  }
  return out;
}

/** Every process of a stack's CPU so far, to subtract a later one from. */
export interface CpuSnapshot {
  at: number;
  procs: Map<number, { part: string; ticks: number; childTicks: number; ppid?: number }>;
  /** This (the bench's) process: user + system, µs. */
  benchUs: number;
}

/** The stack's processes under `root`, and the bench's own (its children: the floors' processes), by part. */
export function cpuSnapshot(root: number, own: Record<string, number[]> = {}): CpuSnapshot {
  const u = process.cpuUsage();
  const all = processes();
  const procs: CpuSnapshot['procs'] = new Map(
    processTree(root, all).map((p) => [
      p.pid,
      { part: partOf(p.cmd), ticks: p.ticks, childTicks: p.childTicks, ppid: p.ppid },
    ]),
  );
  for (const [part, pids] of Object.entries(own)) {
    for (const p of all.filter((q) => pids.includes(q.pid))) {
      procs.set(p.pid, { part, ticks: p.ticks, childTicks: p.childTicks });
    }
  }
  return { at: Date.now(), procs, benchUs: u.user + u.system };
}

const TICK_MS = 10; // USER_HZ is 100 on Linux (getconf CLK_TCK)

/**
 * CPU milliseconds each part of the stack used between two snapshots (and `bench`, this process).
 * A process that started in between counts whole; one that ended in between is counted by its
 * parent's waited-for children (Postgres's backends: their postmaster's), which is how Linux
 * keeps the time of a process that is gone. That time is its whole life's: what it had used by
 * the first snapshot is taken off its parent's part, or a pool's backend closing mid-step would
 * bring its earlier hours into the step.
 */
export function cpuMsBetween(a: CpuSnapshot, b: CpuSnapshot): Record<string, number> {
  const ticksOf: Record<string, number> = {};
  const add = (part: string, ticks: number) => {
    ticksOf[part] = (ticksOf[part] ?? 0) + ticks;
  };
  for (const [pid, p] of b.procs) {
    const before = a.procs.get(pid);
    add(p.part, p.ticks - (before?.ticks ?? 0) + (p.childTicks - (before?.childTicks ?? 0)));
  }
  for (const [pid, gone] of a.procs) {
    const parent = gone.ppid === undefined ? undefined : b.procs.get(gone.ppid);
    if (!b.procs.has(pid) && parent) add(parent.part, -(gone.ticks + gone.childTicks));
  }
  const out: Record<string, number> = {};
  for (const [part, ticks] of Object.entries(ticksOf)) out[part] = Math.max(0, ticks) * TICK_MS;
  out.bench = (b.benchUs - a.benchUs) / 1000;
  return out;
}

/**
 * `cpuMsBetween` with each process's part as `partOfPid` names it (its pid and the part `partOf`
 * gave it): to tell one part's processes apart, such as Postgres's backends by the database each
 * serves. A process that ended in between is counted in its parent's part, as there.
 */
export function cpuMsBetweenBy(
  a: CpuSnapshot,
  b: CpuSnapshot,
  partOfPid: (pid: number, part: string) => string,
): Record<string, number> {
  const procs = new Map([...b.procs].map(([pid, p]) => [pid, { ...p, part: partOfPid(pid, p.part) }]));
  return cpuMsBetween(a, { ...b, procs });
}

/** Each part's CPU between two snapshots, as % of one core over the time between them. */
export function cpuPercentBetween(a: CpuSnapshot, b: CpuSnapshot): Record<string, number> {
  const seconds = (b.at - a.at) / 1000;
  return Object.fromEntries(
    Object.entries(cpuMsBetween(a, b)).map(([part, ms]) => [part, round(ms / seconds / 10, 1)]),
  );
}

/** The peak resident memory of some processes (summed), sampled on demand and then every second until stopped. */
export class PeakRss {
  peak = 0;
  private sampling = false;
  private sampler: Promise<void> = Promise.resolve();
  constructor(private readonly pids: () => number[]) {}
  sample(): void {
    this.peak = Math.max(this.peak, rssBytesOf(this.pids()));
  }
  start(): void {
    this.sampling = true;
    this.sampler = (async () => {
      while (this.sampling) {
        this.sample();
        await new Promise((r) => setTimeout(r, 1_000));
      }
    })();
  }
  async stop(): Promise<number> {
    this.sampling = false;
    await this.sampler;
    return this.peak;
  }
}

/** Resident memory of a process in bytes (VmRSS of /proc/<pid>/status). */
export function rssBytes(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN; // the process is gone: the stack's output says why
  }
}

/** Resident memory of some processes, summed; one that is gone counts 0. */
export function rssBytesOf(pids: number[]): number {
  return pids.reduce((sum, pid) => sum + (rssBytes(pid) || 0), 0);
}

/** One thread of a process: its name (`comm`, as the runtime set it) and its CPU so far, in ticks. */
export interface ThreadTicks {
  tid: number;
  name: string;
  ticks: number;
}

/** A `/proc/<pid>/task/<tid>/stat` line: the name between its parentheses, and utime + stime. */
export function parseThreadStat(stat: string): { name: string; ticks: number } {
  const close = stat.lastIndexOf(')');
  const f = stat.slice(close + 2).split(' ');
  return { name: stat.slice(stat.indexOf('(') + 1, close), ticks: Number(f[11]) + Number(f[12]) };
}

/** Every thread of `pid` that could be read (none once the process is gone). */
export function threadTicks(pid: number): ThreadTicks[] {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tids.flatMap((tid) => {
    try {
      return [
        { tid: Number(tid), ...parseThreadStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')) },
      ];
    } catch {
      return []; // ended while we looked
    }
  });
}

/**
 * The busiest threads between two readings of one process, as % of one core over `seconds`: a
 * thread at 100% bounds what its process does whatever the cores left (the event loop, the
 * workflow thread), which the process's total share hides.
 */
export function busiestThreads(
  a: ThreadTicks[],
  b: ThreadTicks[],
  seconds: number,
  top = 3,
): { tid: number; name: string; pct: number }[] {
  const before = new Map(a.map((t) => [t.tid, t.ticks]));
  return b
    .map((t) => ({
      tid: t.tid,
      name: t.name,
      pct: round(((t.ticks - (before.get(t.tid) ?? 0)) * TICK_MS) / 10 / Math.max(seconds, 1e-3), 1),
    }))
    .sort((x, y) => y.pct - x.pct)
    .slice(0, top);
}
