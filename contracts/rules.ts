// The money rules (docs/rules.md): what is checked before a payout is sent or a deposit is
// credited, and the stable reason codes a refusal carries. No zod here: the withdrawal workflow
// imports the reason codes.

/** Reasons a withdrawal ends `refused` (besides the KYC reason codes of onboarding). */
export const withdrawalRefusals = [
  'not_verified',
  'payee_not_owner',
  'limit_exceeded',
  'biometrics_failed',
  'biometrics_timeout',
  'biometrics_unavailable',
  // Payout controls: an operator refused it (four eyes), or the
  // operator's authorization hook denied it or, set to fail closed, did not answer.
  'operator_refused',
  'authorization_denied',
  'authorization_unavailable',
] as const;
export type WithdrawalRefusal = (typeof withdrawalRefusals)[number];

/**
 * Why a deposit's flow refuses it while screening: it would pass one of the limits the person set
 * on their own deposits (responsible gaming).
 */
export const DEPOSIT_LIMIT_EXCEEDED = 'deposit_limit_exceeded';

/** The periods a person's deposit limits count over: the São Paulo day, ISO week and month. */
export const depositLimitPeriods = ['daily', 'weekly', 'monthly'] as const;
export type DepositLimitPeriod = (typeof depositLimitPeriods)[number];

/**
 * A new deposit's refusal for a person the registry of impeded people names (docs/rules.md, Eligibility):
 * checked by the deposit's flow before anything is created at the provider.
 */
export const IMPEDED = 'impeded';

/**
 * A new deposit's refusal for a person an operator closed because the registry named them: kept
 * until an operator reinstates the person, whatever the registry answers later.
 */
export const CLOSED = 'closed';

/**
 * The payout controls a withdrawal runs under, from the rules policy in force when its rules were
 * checked (docs/policy.md): the prize deadline, four eyes on large payouts and the operator's
 * authorization hook.
 */
export interface PayoutControls {
  /** payouts.deadlineMs: a payout is due this long after the person asked for it. */
  deadlineMs: number;
  /** payouts.atRiskShare: at this share of the deadline, still open, it is at risk (0-1). */
  atRiskShare: number;
  /** payouts.approvalAboveCentavos: a payout above it waits for operators; 0: off. */
  approvalAboveCentavos: number;
  /** payouts.approvers: different operators who must approve it (1 or 2). */
  approvers: number;
  /** PAYOUT_AUTHORIZATION_URL is set: the operator's backend is asked before a payout is sent. */
  askAuthorization: boolean;
}
