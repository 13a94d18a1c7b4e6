import { setTimeout as sleep } from 'node:timers/promises';

// Sending a request again when pixflow asks for it: a 429 (the key's rate limit, or too many
// failed authentications) and a 503 (Temporal or the flow's worker could not answer in time) both
// carry Retry-After. The waits are bounded: past the bound the answer is given back, so that the
// caller decides instead of a request hanging for minutes.

export interface RetryOptions {
  /** Attempts after the first; 0 sends each request once (default 3). */
  retries?: number;
  /** The longest wait the client accepts before an attempt; an answer asking for more is given back (default 30 s). */
  maxDelayMs?: number;
  /** The wait when the answer names none, doubled at each attempt (default 500 ms). */
  initialDelayMs?: number;
}

export type Send = (request: Request) => Promise<Response>;

/**
 * POSTs that make something new each time: sent again after a 503 they might make two (another
 * webhook endpoint, another secret). Every other request is the same request when sent again:
 * reads, and the POSTs that name their flow (pixflow answers a repeat with the same flow).
 */
const MAKES_ANOTHER = /\/v1\/webhook-endpoints(?:\/[^/]+\/rotate-secret)?\/?$/;

/** Whether this answer asks for the same request again, and that request may be sent again. */
function retryable(request: Request, status: number): boolean {
  // A 429 refused the request before anything ran.
  if (status === 429) return true;
  if (status !== 503) return false;
  return request.method !== 'POST' || !MAKES_ANOTHER.test(new URL(request.url).pathname);
}

/** A Retry-After header (seconds, or an HTTP date) as milliseconds from `now`; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** `send`, sending a request again while pixflow asks for it, within `options`' bounds. */
export function retrying(send: Send, options: RetryOptions = {}): Send {
  const { retries = 3, maxDelayMs = 30_000, initialDelayMs = 500 } = options;
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      // A clone each time: a body can be read once, and every attempt sends the same one.
      const response = await send(request.clone());
      if (attempt >= retries || !retryable(request, response.status)) return response;
      const delay = retryAfterMs(response.headers.get('retry-after')) ?? initialDelayMs * 2 ** attempt;
      if (delay > maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(delay, undefined, { signal: request.signal });
    }
  };
}
