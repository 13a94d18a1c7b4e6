import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import {
  type EligibilityAnswer,
  type EligibilityPurpose,
  type EligibilityRequest,
  eligibilityAnswerSchema,
} from './contract';

// The seam to the registry of impeded people: pixflow asks through EligibilityRegistry, and the
// one implementation here asks the operator's eligibility service over HTTP (docs/rules.md, Eligibility).

export interface EligibilityRegistry {
  check(cpf: string, purpose: EligibilityPurpose): Promise<EligibilityAnswer>;
}

/** The registry gave no usable answer (unreachable, too slow, an error, an answer off contract). */
export class EligibilityUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EligibilityUnavailableError';
  }
}

export interface HttpRegistryOptions {
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
 * The headers of a signed JSON POST to an operator's service (Standard Webhooks): a new id and
 * timestamp each attempt, as a webhook's attempts. The payout authorization signs with it too.
 */
export function signedJsonRequest(
  body: string,
  secret: string,
  who: { idPrefix: string; userAgent: string },
  now = new Date(),
) {
  const id = `${who.idPrefix}_${randomUUID().replaceAll('-', '')}`;
  return {
    'content-type': 'application/json',
    'user-agent': who.userAgent,
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, now, body),
  };
}

/** The signed POST of one eligibility attempt. */
export function signedEligibilityRequest(body: string, secret: string, now = new Date()) {
  return signedJsonRequest(body, secret, { idPrefix: 'elig', userAgent: 'pixflow-eligibility/1' }, now);
}

/** A failure the same request may not meet again: a network error, a timeout, a 5xx or a 429. */
class Retryable extends EligibilityUnavailableError {}

async function attempt(o: HttpRegistryOptions, body: string): Promise<EligibilityAnswer> {
  let res: Response;
  try {
    res = await fetch(o.url, {
      method: 'POST',
      headers: signedEligibilityRequest(body, o.secret),
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
  if (res.status !== 200) throw new EligibilityUnavailableError(`answered ${res.status}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new EligibilityUnavailableError('answered something that is not JSON');
  }
  const parsed = eligibilityAnswerSchema.safeParse(json);
  if (!parsed.success)
    throw new EligibilityUnavailableError(
      `answered off contract: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}

export function httpEligibilityRegistry(o: HttpRegistryOptions): EligibilityRegistry {
  const attempts = o.attempts ?? 3;
  const backoffMs = o.backoffMs ?? 100;
  return {
    async check(cpf, purpose) {
      const request: EligibilityRequest = { cpf, purpose, requestedAt: new Date().toISOString() };
      const body = JSON.stringify(request);
      for (let n = 1; ; n++) {
        try {
          return await attempt(o, body);
        } catch (err) {
          if (!(err instanceof Retryable) || n >= attempts) {
            // Never the CPF: the message says what went wrong, not about whom.
            throw new EligibilityUnavailableError(
              `the eligibility registry ${(err as Error).message} (attempt ${n} of ${attempts})`,
            );
          }
          await new Promise((r) => setTimeout(r, backoffMs * 2 ** (n - 1)));
        }
      }
    },
  };
}
