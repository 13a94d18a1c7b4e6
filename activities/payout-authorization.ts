import { maskCpf, maskPixKey } from '../common/mask';
import {
  type PayoutAuthorization,
  type PayoutAuthorizationRequest,
  payoutAuthorizationAnswerSchema,
} from '../contracts/payout-authorization';
import type { WithdrawalInput } from '../contracts/withdrawal';
import { postSignedJson, type SignedPostOptions } from '../signed-requests/client';

// The client of the operator's payout authorization (PAYOUT_AUTHORIZATION_URL,
// docs/payout-controls.md): a signed POST (signed-requests/), and what no valid answer means here.

/** Where the authorization is asked, as configured (what no answer means is the policy's). */
export type PayoutAuthorizationSettings = SignedPostOptions;

const SENDER = { idPrefix: 'payauth', userAgent: 'pixflow-payout-authorization/1' };

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

/**
 * Asks the operator's backend; answers its decision, or no answer as the policy's
 * payouts.authorizationOnNoAnswer says: `deny` refuses the payout (fail closed), `approve` sends it.
 */
export async function askPayoutAuthorization(
  s: PayoutAuthorizationSettings,
  request: PayoutAuthorizationRequest,
  onNoAnswer: 'deny' | 'approve',
): Promise<PayoutAuthorization> {
  try {
    const answer = await postSignedJson(s, SENDER, payoutAuthorizationAnswerSchema, request);
    return answer.decision === 'approve'
      ? { outcome: 'approved' }
      : { outcome: 'denied', reason: answer.reason };
  } catch (err) {
    return {
      outcome: 'unanswered',
      send: onNoAnswer === 'approve',
      problem: `no valid answer from the payout authorization: ${(err as Error).message}`,
    };
  }
}

/** The authorization from the parsed configuration; undefined without PAYOUT_AUTHORIZATION_URL. */
export function payoutAuthorizationOf(c: {
  PAYOUT_AUTHORIZATION_URL?: string | undefined;
  PAYOUT_AUTHORIZATION_SECRET: string;
  PAYOUT_AUTHORIZATION_TIMEOUT_MS: number;
}): PayoutAuthorizationSettings | undefined {
  if (!c.PAYOUT_AUTHORIZATION_URL) return undefined;
  return {
    url: c.PAYOUT_AUTHORIZATION_URL,
    secret: c.PAYOUT_AUTHORIZATION_SECRET,
    timeoutMs: c.PAYOUT_AUTHORIZATION_TIMEOUT_MS,
  };
}
