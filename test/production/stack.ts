import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { type EmbeddedStack, startEmbeddedStack } from '../../scripts/embedded-stack';
import type { PixflowAt } from '../helpers/people';

// pixflow as `npm start -- --temporal postgres --workers 2 --apis 2` runs it: embedded Postgres,
// the Temporal server (every service in one process) on it, the provider sandbox, two workers
// and two APIs, every one a real process on 127.0.0.1. The test reaches it over HTTP, and finds
// the processes it kills through /proc.

export const API_KEY = 'production-test-key';
export const WEBHOOK_SECRET = 'production-webhook-secret-0123456789';
export const WEBHOOK_PARTNER_ID = 'production-partner';
export const START_ARGS = ['--temporal', 'postgres', '--workers', '2', '--apis', '2'];

export interface ProductionStack extends EmbeddedStack {
  /** Every API the banner lists, API 1 first. */
  apis: string[];
  /** Every worker's health URL the banner lists, worker 1 first. */
  workerHealth: string[];
}

/** `  API 2             http://127.0.0.1:41234` and the like (no number when there is one), from the banner. */
export function bannerUrls(output: string, label: 'API' | 'worker'): string[] {
  const pattern =
    label === 'API' ? /^ {2}API(?: \d+)? +(http:\/\/\S+)/gm : /^ {2}worker(?: \d+)? health +(http:\/\/\S+)/gm;
  return [...output.matchAll(pattern)].map((m) => m[1] as string);
}

/** `npm start` with `args` (default START_ARGS); `env` over the test's settings. */
export async function startProductionStack(
  opts: { args?: string[]; env?: Record<string, string> } = {},
): Promise<ProductionStack> {
  const stack = await startEmbeddedStack({
    label: 'production',
    args: opts.args ?? START_ARGS,
    timeoutMs: 300_000,
    env: {
      API_KEYS: API_KEY,
      WEBHOOK_SECRET,
      WEBHOOK_PARTNER_ID,
      LOG_LEVEL: 'warn',
      POLL_SCHEDULE_MS: '2000,4000',
      RECONCILE_INTERVAL_MS: '500',
      INBOX_RELAY_INTERVAL_MS: '500',
      INBOX_RETRY_MAX_MS: '2000',
      // Plenty: every deposit of the test is paid within seconds.
      SANDBOX_DEPOSIT_EXPIRY_MS: '600000',
      ...opts.env,
    },
  });
  return {
    ...stack,
    apis: bannerUrls(stack.output(), 'API'),
    workerHealth: bannerUrls(stack.output(), 'worker'),
  };
}

export const peopleAt = (api: string, stack: ProductionStack): PixflowAt => ({
  api,
  apiKey: API_KEY,
  sandbox: stack.sandbox,
});

export interface Proc {
  pid: number;
  command: string;
  env: Record<string, string>;
}

/** The processes `parent` started, with their command lines and environments. */
export function childrenOf(parent: number): Proc[] {
  const found: Proc[] = [];
  for (const entry of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== parent) continue;
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      const env = Object.fromEntries(
        readFileSync(`/proc/${entry}/environ`, 'utf8')
          .split('\0')
          .filter(Boolean)
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      );
      found.push({ pid: Number(entry), command, env });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Still running, and not a zombie. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The worker process whose health answers on this URL's port. */
export function workerProcess(stack: ProductionStack, health: string): Proc | undefined {
  const port = new URL(health).port;
  return childrenOf(stack.child.pid as number).find(
    (p) => p.command.endsWith('worker/main.ts') && p.env.WORKER_HTTP_PORT === port,
  );
}

/** How many provider calls a worker's activities made (pixflow_provider_calls_total, summed). */
export async function providerCalls(health: string): Promise<number> {
  const metrics = new URL('/metrics', health);
  const text = await fetch(metrics, { signal: AbortSignal.timeout(5_000) })
    .then((r) => r.text())
    .catch(() => '');
  let total = 0;
  for (const m of text.matchAll(/^pixflow_provider_calls_total\{[^}]*\} (\d+)/gm)) total += Number(m[1]);
  return total;
}

/** The socket inode of the TCP connection from `localPort` to `remotePort` (/proc/net/tcp and tcp6). */
function connectionInode(localPort: number, remotePort: number): string | undefined {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const [, local, remote, , , , , , , inode] = line.trim().split(/\s+/);
      if (local?.endsWith(`:${hex(localPort)}`) && remote?.endsWith(`:${hex(remotePort)}`)) return inode;
    }
  }
  return undefined;
}

/**
 * The process among `parent`'s children that holds the connection whose own end is
 * `localPort` and whose other end is `remotePort`: which process made a request a server holds.
 */
export function connectionOwner(parent: number, localPort: number, remotePort: number): Proc | undefined {
  const inode = connectionInode(localPort, remotePort);
  if (!inode) return undefined;
  return childrenOf(parent).find((p) => {
    try {
      return readdirSync(`/proc/${p.pid}/fd`).some((fd) => {
        try {
          return readlinkSync(`/proc/${p.pid}/fd/${fd}`) === `socket:[${inode}]`;
        } catch {
          return false; // closed meanwhile
        }
      });
    } catch {
      return false; // gone meanwhile
    }
  });
}

export interface Reply {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON answers, read field by field
  body: any;
}

export async function call(url: string, body?: unknown): Promise<Reply> {
  const res = await fetch(url, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${API_KEY}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    return { status: res.status, body: text };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The API's idempotency contract from the caller's side: the same request (same ids) sent again
 * after no answer, a 5xx or a 429, until it is accepted or the deadline passes. Returns every
 * answer that was not accepted, for the test's report.
 */
export async function sendUntilAccepted(
  url: string,
  body: unknown,
  accepted: (r: Reply) => boolean,
  deadlineMs = 120_000,
): Promise<{ accepted: Reply | undefined; retried: string[] }> {
  const deadline = Date.now() + deadlineMs;
  const retried: string[] = [];
  for (let attempt = 0; ; attempt++) {
    const r = await call(url, body).catch((err: Error) => err);
    if (!(r instanceof Error) && accepted(r)) return { accepted: r, retried };
    const why = r instanceof Error ? r.message : `${r.status} ${JSON.stringify(r.body).slice(0, 200)}`;
    const retryable = r instanceof Error || r.status >= 500 || r.status === 429;
    if (!retryable || Date.now() > deadline) return { accepted: undefined, retried: [...retried, why] };
    retried.push(why);
    await sleep(Math.min(3_000, 250 * 2 ** attempt));
  }
}
