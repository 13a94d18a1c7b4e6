import { readdirSync, readFileSync } from 'node:fs';
import { round } from './stats';

// What the bench reads from /proc: the machine's CPU time and the hypervisor's share of it, the
// stack's processes, their CPU time and resident memory.

/** The machine's CPU time so far, and the part of it the hypervisor took (steal), in ticks. */
export interface CpuTicks {
  steal: number;
  total: number;
}

export function cpuTicks(): CpuTicks {
  const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
    .trim()
    .split(/\s+/)
    .slice(1, 9)
    .map(Number);
  return { steal: f[7] ?? 0, total: f.reduce((a, b) => a + b, 0) };
}

/** Percent of the CPU time since `from` that the hypervisor took from this machine. */
export function stealPctSince(from: CpuTicks): number {
  const now = cpuTicks();
  const total = now.total - from.total;
  return total > 0 ? round((100 * (now.steal - from.steal)) / total, 1) : 0;
}

interface Proc {
  pid: number;
  ppid: number;
  /** CPU time used so far (user + system), in ticks. */
  ticks: number;
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
        return [{ pid: Number(pid), ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]), cmd }];
      } catch {
        return []; // gone while we looked
      }
    });
}

/** A child of `pid` whose command line contains `needle`. */
export function childPid(pid: number, needle: string): number | undefined {
  return processes().find((p) => p.ppid === pid && p.cmd.includes(needle))?.pid;
}

/** CPU ticks (user + system) of `root` and its descendants, by the part of the stack each one runs. */
export function stackCpuTicks(root: number): Map<string, number> {
  const procs = processes();
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
  const names: [RegExp, string][] = [
    [/worker\/main/, 'worker'],
    [/api\/main/, 'api'],
    [/sandbox\/main/, 'sandbox'],
    [/start-dev/, 'temporal'],
    [/postgres/, 'postgres'],
  ];
  const out = new Map<string, number>();
  for (const p of procs.filter((q) => inTree.has(q.pid))) {
    const name = names.find(([re]) => re.test(p.cmd))?.[1] ?? 'other';
    out.set(name, (out.get(name) ?? 0) + p.ticks);
  }
  return out;
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
