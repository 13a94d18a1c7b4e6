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
  /** Every API process's base URL (the first is `api`, whose ingress the sandbox notifies). */
  apis: string[];
  /** pid of the (first) worker process (a child of scripts/start.ts). */
  workerPid: number;
  /** The stack's processes of one part (worker, api, temporal, postgres, sandbox), as they are now. */
  pidsOf(part: string): number[];
}

/**
 * The stack's API URLs, from the banner `npm start` prints once it is up ("API" or "API 1",
 * "API 2", ... then the URL); the one API it was given when the banner names none.
 */
export function apiUrlsOf(banner: string, fallback: string): string[] {
  const after = banner.slice(banner.lastIndexOf('pixflow is up'));
  const urls = [...after.matchAll(/^\s*API(?: \d+)?\s+(http:\/\/\S+)/gm)].map((m) => m[1] as string);
  return urls.length ? urls : [fallback];
}

/**
 * `npm start` with the bench's settings, `extraEnv`, and `args` (`npm start` options, such as
 * the production server's, for a `scripts/embedded-stack.ts` that passes them on).
 */
export async function startBenchStack(
  extraEnv: NodeJS.ProcessEnv,
  timeoutMs = 240_000,
  args: string[] = [],
  logFile?: string,
): Promise<BenchStack> {
  const opts: Parameters<typeof startEmbeddedStack>[0] & { args?: string[] } = {
    label: 'bench',
    timeoutMs,
    ...(logFile ? { logFile } : {}),
    env: { API_KEYS: API_KEY, WEBHOOK_SECRET, WEBHOOK_PARTNER_ID, ...extraEnv },
    ...(args.length ? { args } : {}),
  };
  const stack = await startEmbeddedStack(opts);
  // The env is what the bench's own processes and clients load their settings from: the API Pix
  // listener's port without its TLS files (npm start makes them) would be a config error there.
  delete stack.env.API_PIX_WEBHOOK_PORT;
  const root = stack.child.pid as number;
  const pidsOf = (part: string) => (stackProcesses(root).get(part) ?? []).map((p) => p.pid);
  const workerPid = pidsOf('worker')[0];
  if (!workerPid) {
    await stack.stop();
    throw new Error('worker process not found under scripts/start.ts');
  }
  return { ...stack, apis: apiUrlsOf(stack.output(), stack.api), workerPid, pidsOf };
}
