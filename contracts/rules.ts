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
 * Why the API refuses to start a deposit: it would pass one of the limits the person set on their
 * own deposits (responsible gaming).
 */
export const DEPOSIT_LIMIT_EXCEEDED = 'deposit_limit_exceeded';

/** The periods a person's deposit limits count over: the São Paulo day, ISO week and month. */
export const depositLimitPeriods = ['daily', 'weekly', 'monthly'] as const;
export type DepositLimitPeriod = (typeof depositLimitPeriods)[number];

/**
 * A new deposit's refusal for a person the registry of impeded people names (docs/rules.md, Eligibility):
 * checked in the API before anything is created.
 */
export const IMPEDED = 'impeded';

/**
 * A new deposit's refusal for a person an operator closed because the registry named them: kept
 * until an operator reinstates the person, whatever the registry answers later.
 */
export const CLOSED = 'closed';

/** The rules as configured (common/config.ts); activities and the API decide with them. */
export interface MoneyRules {
  requireVerifiedForWithdrawals: boolean;
  requireVerifiedForDeposits: boolean;
  requireOwnPayeeAccount: boolean;
  /** 0: no step-up by amount. */
  stepUpAboveCentavos: number;
  stepUpNewAccount: boolean;
  dailyLimitCentavos: number;
  kycMaxAgeMs: number;
  holdThirdPartyDeposits: boolean;
}

/**
 * The payout controls as configured: the prize deadline, four eyes on
 * large payouts and the operator's authorization hook.
 */
export interface PayoutControls {
  /** PAYOUT_DEADLINE: a payout is due this long after the person asked for it. */
  deadlineMs: number;
  /** PAYOUT_AT_RISK_SHARE: at this share of the deadline, still open, it is at risk (0-1). */
  atRiskShare: number;
  /** PAYOUT_APPROVAL_ABOVE_CENTAVOS: a payout above it waits for operators; 0: off. */
  approvalAboveCentavos: number;
  /** PAYOUT_APPROVERS: different operators who must approve it (1 or 2). */
  approvers: number;
  /** PAYOUT_AUTHORIZATION_URL is set: the operator's backend is asked before a payout is sent. */
  askAuthorization: boolean;
}

/** The rules from the parsed configuration. */
export function moneyRulesOf(c: {
  REQUIRE_VERIFIED_FOR_WITHDRAWALS: boolean;
  REQUIRE_VERIFIED_FOR_DEPOSITS: boolean;
  REQUIRE_OWN_PAYEE_ACCOUNT: boolean;
  BIOMETRIC_STEP_UP_CENTAVOS: number;
  BIOMETRIC_STEP_UP_NEW_ACCOUNT: boolean;
  WITHDRAWAL_DAILY_LIMIT_CENTAVOS: number;
  KYC_MAX_AGE: number;
  HOLD_THIRD_PARTY_DEPOSITS: boolean;
}): MoneyRules {
  return {
    requireVerifiedForWithdrawals: c.REQUIRE_VERIFIED_FOR_WITHDRAWALS,
    requireVerifiedForDeposits: c.REQUIRE_VERIFIED_FOR_DEPOSITS,
    requireOwnPayeeAccount: c.REQUIRE_OWN_PAYEE_ACCOUNT,
    stepUpAboveCentavos: c.BIOMETRIC_STEP_UP_CENTAVOS,
    stepUpNewAccount: c.BIOMETRIC_STEP_UP_NEW_ACCOUNT,
    dailyLimitCentavos: c.WITHDRAWAL_DAILY_LIMIT_CENTAVOS,
    kycMaxAgeMs: c.KYC_MAX_AGE,
    holdThirdPartyDeposits: c.HOLD_THIRD_PARTY_DEPOSITS,
  };
}

/** The payout controls from the parsed configuration. */
export function payoutControlsOf(c: {
  PAYOUT_DEADLINE: number;
  PAYOUT_AT_RISK_SHARE: number;
  PAYOUT_APPROVAL_ABOVE_CENTAVOS: number;
  PAYOUT_APPROVERS: number;
  PAYOUT_AUTHORIZATION_URL?: string | undefined;
}): PayoutControls {
  return {
    deadlineMs: c.PAYOUT_DEADLINE,
    atRiskShare: c.PAYOUT_AT_RISK_SHARE,
    approvalAboveCentavos: c.PAYOUT_APPROVAL_ABOVE_CENTAVOS,
    approvers: c.PAYOUT_APPROVERS,
    askAuthorization: c.PAYOUT_AUTHORIZATION_URL !== undefined,
  };
}
