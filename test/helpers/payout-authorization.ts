import type { PayoutAuthorizationRequest } from '../../contracts/payout-authorization';

// A question the worker could put to the operator's payout authorization: masked CPF and key,
// never whole ones. Each call names a new payout.

let n = 0;

export const payoutAuthorizationRequest = (
  over: Partial<PayoutAuthorizationRequest> = {},
): PayoutAuthorizationRequest => ({
  transactionId: `auth-${Date.now()}-${++n}`,
  merchant: 'sandbox-merchant',
  amountCentavos: 25_050,
  cpfMasked: '***.456.789-**',
  cpfHash: 'a'.repeat(64),
  payee: { keyType: 'CPF', keyMasked: '***.456.789-**' },
  requestedAt: new Date().toISOString(),
  ...over,
});
