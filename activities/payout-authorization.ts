import { maskCpf, maskPixKey } from '../common/mask';
import {
  type PayoutAuthorization,
  type PayoutAuthorizationAnswer,
  type PayoutAuthorizationRequest,
  payoutAuthorizationAnswerSchema,
} from '../contracts/payout-authorization';
import type { WithdrawalInput } from '../contracts/withdrawal';
import { signedJsonRequest } from '../eligibility/registry';

// The client of the operator's payout authorization (PAYOUT_AUTHORIZATION_URL,
// docs/payout-controls.md): one signed POST per attempt, a few attempts, each within its bound.

/** The authorization as configured. */
export interface PayoutAuthorizationSettings {
  url: string;
  /** The signing secret, `whsec_<base64>` (Standard Webhooks). */
  secret: string;
  /** Each attempt's bound. */
  timeoutMs: number;
  /** No valid answer: `deny` refuses the payout (fail closed), `approve` sends it. */
  onNoAnswer: 'deny' | 'approve';
  /** Attempts in all (default 3); only a failure worth repeating is repeated. */
  attempts?: number;
  /** Wait before the second attempt, doubled after each (default 100 ms). */
  backoffMs?: number;
}

/** A failure the same request may not meet again: a network error, a timeout, a 5xx or a 429. */
class Retryable extends Error {}

async function attempt(s: PayoutAuthorizationSettings, body: string): Promise<PayoutAuthorizationAnswer> {
  let res: Response;
  try {
    res = await fetch(s.url, {
      method: 'POST',
      headers: signedJsonRequest(body, s.secret, {
        idPrefix: 'payauth',
        userAgent: 'pixflow-payout-authorization/1',
      }),
      body,
      redirect: 'error',
      signal: AbortSignal.timeout(s.timeoutMs),
    });
  } catch (err) {
    const timedOut = (err as Error).name === 'TimeoutError';
    throw new Retryable(
      timedOut ? `no answer within ${s.timeoutMs} ms` : `unreachable: ${(err as Error).message}`,
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
  const parsed = payoutAuthorizationAnswerSchema.safeParse(json);
  if (!parsed.success)
    throw new Error(
      `answered off contract: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}

/** The request for one withdrawal: the person only masked and hashed, never the whole CPF. */
export function payoutAuthorizationRequest(
  input: WithdrawalInput,
  approvedBy: string[],
  hashCpf: (cpf: string) => string,
  now: Date,
): PayoutAuthorizationRequest {
  return {
    transactionId: input.transactionId,
    merchant: input.merchant,
    amountCentavos: input.amountCentavos,
    cpfMasked: maskCpf(input.client.cpf),
    cpfHash: hashCpf(input.client.cpf),
    payee: { keyType: input.pixType, keyMasked: maskPixKey(input.pixKey, input.pixType) },
    ...(input.requestedBy ? { requestedBy: input.requestedBy.toLowerCase() } : {}),
    ...(approvedBy.length ? { approvedBy } : {}),
    requestedAt: now.toISOString(),
  };
}

/** Asks the operator's backend; answers its decision, or no answer as the settings say. */
export async function askPayoutAuthorization(
  s: PayoutAuthorizationSettings,
  request: PayoutAuthorizationRequest,
): Promise<PayoutAuthorization> {
  const attempts = s.attempts ?? 3;
  const backoffMs = s.backoffMs ?? 100;
  const body = JSON.stringify(request);
  for (let n = 1; ; n++) {
    try {
      const answer = await attempt(s, body);
      return answer.decision === 'approve'
        ? { outcome: 'approved' }
        : { outcome: 'denied', reason: answer.reason };
    } catch (err) {
      if (!(err instanceof Retryable) || n >= attempts) {
        return {
          outcome: 'unanswered',
          send: s.onNoAnswer === 'approve',
          problem: `no valid answer from the payout authorization: ${(err as Error).message} (attempt ${n} of ${attempts})`,
        };
      }
      await new Promise((r) => setTimeout(r, backoffMs * 2 ** (n - 1)));
    }
  }
}

/** The authorization from the parsed configuration; undefined without PAYOUT_AUTHORIZATION_URL. */
export function payoutAuthorizationOf(c: {
  PAYOUT_AUTHORIZATION_URL?: string | undefined;
  PAYOUT_AUTHORIZATION_SECRET: string;
  PAYOUT_AUTHORIZATION_TIMEOUT_MS: number;
  PAYOUT_AUTHORIZATION_ON_NO_ANSWER: 'deny' | 'approve';
}): PayoutAuthorizationSettings | undefined {
  if (!c.PAYOUT_AUTHORIZATION_URL) return undefined;
  return {
    url: c.PAYOUT_AUTHORIZATION_URL,
    secret: c.PAYOUT_AUTHORIZATION_SECRET,
    timeoutMs: c.PAYOUT_AUTHORIZATION_TIMEOUT_MS,
    onNoAnswer: c.PAYOUT_AUTHORIZATION_ON_NO_ANSWER,
  };
}
