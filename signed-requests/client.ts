import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { ZodType } from 'zod';

// pixflow's signed JSON POST to an operator's service (the eligibility registry, the payout
// authorization): signed as pixflow's webhooks are (Standard Webhooks), so the service knows it comes
// from pixflow; each attempt within its bound; only a failure worth repeating repeated. Whether no
// answer lets money move is each caller's to say, not this client's.

/** Who asks: the prefix of each attempt's `webhook-id` and the `user-agent`. */
export interface SignedSender {
  idPrefix: string;
  userAgent: string;
}

/** Where and how to ask. */
export interface SignedPostOptions {
  url: string;
  /** The signing secret, `whsec_<base64>` (Standard Webhooks). */
  secret: string;
  /** Each attempt's bound. */
  timeoutMs: number;
  /** Attempts in all (default 3); only a failure worth repeating is repeated. */
  attempts?: number;
  /** Wait before the second attempt, doubled after each (default 100 ms). */
  backoffMs?: number;
}

/**
 * The headers of a signed JSON POST: a new id and timestamp each attempt, as a webhook's
 * attempts.
 */
export function signedJsonRequest(body: string, secret: string, who: SignedSender, now = new Date()) {
  const id = `${who.idPrefix}_${randomUUID().replaceAll('-', '')}`;
  return {
    'content-type': 'application/json',
    'user-agent': who.userAgent,
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, now, body),
  };
}

/**
 * The service gave no usable answer: unreachable, too slow, an error status, an answer off contract.
 * The message says what went wrong and at which attempt, never what was asked.
 */
export class SignedPostError extends Error {
  constructor(
    readonly problem: string,
    readonly attempt: number,
    readonly attempts: number,
  ) {
    super(`${problem} (attempt ${attempt} of ${attempts})`);
    this.name = 'SignedPostError';
  }
}

/** A failure the same request may not meet again: a network error, a timeout, a 5xx or a 429. */
class Retryable extends Error {}

async function attempt<T>(
  o: SignedPostOptions,
  who: SignedSender,
  answer: ZodType<T>,
  body: string,
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(o.url, {
      method: 'POST',
      headers: signedJsonRequest(body, o.secret, who),
      body,
      redirect: 'error',
      signal: AbortSignal.timeout(o.timeoutMs),
    });
  } catch (err) {
    const timedOut = (err as Error).name === 'TimeoutError';
    throw new Retryable(
      timedOut ? `no answer within ${o.timeoutMs} ms` : `unreachable: ${(err as Error).message}`,
    );
  }
  const text = await res.text().catch(() => '');
  if (res.status >= 500 || res.status === 429) throw new Retryable(`answered ${res.status}`);
  if (res.status !== 200) throw new Error(`answered ${res.status}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error('answered something that is not JSON');
  }
  const parsed = answer.safeParse(json);
  if (!parsed.success)
    throw new Error(
      `answered off contract: ${parsed.error.issues.map((i) => `${i.path.map(String).join('.') || 'body'}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}

/**
 * POSTs `request` as JSON, signed, and answers the 200's body as `answer` parses it; throws a
 * SignedPostError once no attempt is left or the failure is not worth repeating.
 */
export async function postSignedJson<T>(
  o: SignedPostOptions,
  who: SignedSender,
  answer: ZodType<T>,
  request: unknown,
): Promise<T> {
  const attempts = o.attempts ?? 3;
  const backoffMs = o.backoffMs ?? 100;
  // One body for every attempt; only the signature's id and timestamp are new each time.
  const body = JSON.stringify(request);
  for (let n = 1; ; n++) {
    try {
      return await attempt(o, who, answer, body);
    } catch (err) {
      if (!(err instanceof Retryable) || n >= attempts) {
        throw new SignedPostError((err as Error).message, n, attempts);
      }
      await new Promise((r) => setTimeout(r, backoffMs * 2 ** (n - 1)));
    }
  }
}
