import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { type CpuTicks, stealPctSince } from './proc';
import { ROOT } from './stack';
import { round } from './stats';

// What a run was measured on: the code (its commit, and whether the tree had changes) and the
// machine (cores, model, memory, what else loaded it, what the hypervisor took).

export interface Commit {
  commit: string;
  /** Tracked files differed from the commit when the run started. */
  dirty: boolean;
  branch: string;
}

const git = (...args: string[]) =>
  execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();

/** Read at the start of the run, before it writes anything. */
export function commitOfTree(): Commit {
  try {
    return {
      commit: git('rev-parse', 'HEAD'),
      dirty: git('status', '--porcelain', '--untracked-files=no') !== '',
      branch: git('rev-parse', '--abbrev-ref', 'HEAD'),
    };
  } catch {
    return { commit: 'unknown', dirty: true, branch: 'unknown' };
  }
}

export interface Machine {
  cpus: number;
  cpuModel: string | undefined;
  memoryGiB: number;
  loadAverageAtStart: number[];
  loadAverageAtEnd: number[];
  stealPctOverRun: number;
  node: string;
  platform: string;
}

export function machine(cpuAtStart: CpuTicks, loadAverageAtStart: number[]): Machine {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGiB: round(os.totalmem() / 1024 ** 3, 1),
    loadAverageAtStart,
    loadAverageAtEnd: os.loadavg().map((x) => round(x)),
    stealPctOverRun: stealPctSince(cpuAtStart),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}
