import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type EmbeddedStack, startEmbeddedStack } from '../scripts/embedded-stack';

// The bench's own stack, started the way `npm start` starts it (scripts/start.ts as a real
// process: embedded Postgres, Temporal dev server with our search attributes, sandbox, worker,
// API) on free ports with a fresh data folder.

export const ROOT = path.resolve(__dirname, '..');
export const API_KEY = 'bench-key';
export const WEBHOOK_SECRET = 'bench-webhook-secret-0123456789';
export const WEBHOOK_PARTNER_ID = 'bench-partner';

export interface BenchStack extends EmbeddedStack {
  /** pid of the worker process (a child of scripts/start.ts). */
  workerPid: number;
}

/** Children of `pid` whose command line contains `needle`. */
function childPid(pid: number, needle: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== pid) continue;
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmd.includes(needle)) return Number(entry);
    } catch {
      // the process went away while we looked
    }
  }
  return undefined;
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

export async function startBenchStack(extraEnv: NodeJS.ProcessEnv, timeoutMs = 240_000): Promise<BenchStack> {
  const stack = await startEmbeddedStack({
    label: 'bench',
    timeoutMs,
    env: { API_KEYS: API_KEY, WEBHOOK_SECRET, WEBHOOK_PARTNER_ID, ...extraEnv },
  });
  const workerPid = childPid(stack.child.pid as number, path.join('worker', 'main.ts'));
  if (!workerPid) {
    await stack.stop();
    throw new Error('worker process not found under scripts/start.ts');
  }
  return { ...stack, workerPid };
}
