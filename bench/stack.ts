import path from 'node:path';
import { type EmbeddedStack, startEmbeddedStack } from '../scripts/embedded-stack';
import { stackProcesses } from './proc';

// The bench's own stack, started the way `npm start` starts it (scripts/start.ts as a real
// process: embedded Postgres, Temporal dev server with our search attributes, sandbox, worker,
// API) on free ports with a fresh data folder.

export const ROOT = path.resolve(__dirname, '..');
export const API_KEY = 'bench-key';
export const WEBHOOK_SECRET = 'bench-webhook-secret-0123456789';
export const WEBHOOK_PARTNER_ID = 'bench-partner';

export interface BenchStack extends EmbeddedStack {
  /** pid of the (first) worker process (a child of scripts/start.ts). */
  workerPid: number;
  /** The stack's processes of one part (worker, api, temporal, postgres, sandbox), as they are now. */
  pidsOf(part: string): number[];
}

export async function startBenchStack(extraEnv: NodeJS.ProcessEnv, timeoutMs = 240_000): Promise<BenchStack> {
  const stack = await startEmbeddedStack({
    label: 'bench',
    timeoutMs,
    env: { API_KEYS: API_KEY, WEBHOOK_SECRET, WEBHOOK_PARTNER_ID, ...extraEnv },
  });
  const root = stack.child.pid as number;
  const pidsOf = (part: string) => (stackProcesses(root).get(part) ?? []).map((p) => p.pid);
  const workerPid = pidsOf('worker')[0];
  if (!workerPid) {
    await stack.stop();
    throw new Error('worker process not found under scripts/start.ts');
  }
  return { ...stack, workerPid, pidsOf };
}
