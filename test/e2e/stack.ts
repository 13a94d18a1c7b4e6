import { type EmbeddedStack, startEmbeddedStack } from '../../scripts/embedded-stack';
import type { PixflowAt } from '../helpers/people';
import { waitUntil } from '../helpers/wait';

// The whole embedded stack as `npm start` runs it: every part a real process (embedded Postgres,
// Temporal dev server, provider sandbox, worker, API), on free ports, with a fresh data dir and
// short timings. Tests reach it only over HTTP.

export const API_KEY = 'e2e-key';
export const WEBHOOK_SECRET = 'e2e-webhook-secret-0123456789';
export const WEBHOOK_PARTNER_ID = 'e2e-partner';
/** Short timings: every deposit's QR expires after this (the sandbox's setting). */
export const DEPOSIT_EXPIRY_MS = 25_000;
export const LIVENESS_TTL_MS = 4_000;

export type Stack = EmbeddedStack;

export function startStack(timeoutMs = 150_000, logFile?: string): Promise<Stack> {
  return startEmbeddedStack({
    label: 'e2e',
    timeoutMs,
    ...(logFile ? { logFile } : {}),
    env: {
      API_KEYS: API_KEY,
      WEBHOOK_SECRET,
      WEBHOOK_PARTNER_ID,
      POLL_SCHEDULE_MS: '1000,2000',
      RECONCILE_INTERVAL_MS: '500',
      SANDBOX_DEPOSIT_EXPIRY_MS: String(DEPOSIT_EXPIRY_MS),
      LIVENESS_LINK_TTL_MS: String(LIVENESS_TTL_MS),
      SANDBOX_LIVENESS_URL_VALIDITY_MS: String(LIVENESS_TTL_MS),
      INBOX_RETRY_MAX_MS: '2000',
    },
  });
}

/** Polls `fn` until it returns without throwing; rethrows its last error at the deadline. */
export async function eventually<T>(fn: () => Promise<T>, timeoutMs = 15_000, intervalMs = 200): Promise<T> {
  type Attempt = { done: true; value: T } | { done: false; error: unknown };
  const attempt = () =>
    fn().then(
      (value): Attempt => ({ done: true, value }),
      (error: unknown): Attempt => ({ done: false, error }),
    );
  const last = await waitUntil(attempt, (a) => a.done, {
    timeoutMs,
    intervalMs,
    onTimeout: (a) => (a.done ? new Error('unreachable') : (a.error as Error)),
  });
  return (last as { value: T }).value;
}

/** A valid CPF that is no test document (KYC regular, liveness manual review) and new to this run. */
export { newCpf as freshCpf } from '../helpers/people';

/** The stack as test/helpers/people.ts reaches it (its sandbox sends every callback to the ingress). */
export const peopleAt = (stack: Stack): PixflowAt => ({
  api: stack.api,
  apiKey: API_KEY,
  sandbox: stack.sandbox,
});

export interface Reply<T = unknown> {
  status: number;
  contentType: string;
  body: T;
  bytes: Buffer;
}

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of answers the tests assert on field by field
export type Json = any;

/** One HTTP call; JSON bodies are sent and parsed, anything else is kept as bytes. */
export async function call<T = Json>(
  url: string,
  init: { method?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...init.headers };
  let body: string | undefined;
  if (init.raw !== undefined) body = init.raw;
  else if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(url, {
    method: init.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body,
    signal: AbortSignal.timeout(30_000),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  const contentType = res.headers.get('content-type') ?? '';
  let parsed: unknown = bytes;
  if (/json/.test(contentType)) parsed = JSON.parse(bytes.toString('utf8'));
  return { status: res.status, contentType, body: parsed as T, bytes };
}
