import type { Policy, PolicyInForce, PolicyReader } from './schema';
import { policySchema } from './schema';

// The policy's first version, from the environment a deployment ran with before the rules were
// a policy: the one place the rule variables are read (docs/policy.md). Later versions are
// changes an operator makes (policy/store.ts, db/policy.ts), never the environment.

/** The rule variables, parsed (common/config.ts today; policy/seed.ts's own reading later). */
export interface RuleSettings {
  REQUIRE_VERIFIED_FOR_WITHDRAWALS: boolean;
  REQUIRE_VERIFIED_FOR_DEPOSITS: boolean;
  REQUIRE_OWN_PAYEE_ACCOUNT: boolean;
  BIOMETRIC_STEP_UP_CENTAVOS: number;
  BIOMETRIC_STEP_UP_NEW_ACCOUNT: boolean;
  WITHDRAWAL_DAILY_LIMIT_CENTAVOS: number;
  KYC_MAX_AGE: number;
  HOLD_THIRD_PARTY_DEPOSITS: boolean;
  DEPOSIT_LIMIT_COOLING_OFF_MS: number;
  PAYOUT_DEADLINE: number;
  PAYOUT_AT_RISK_SHARE: number;
  PAYOUT_APPROVAL_ABOVE_CENTAVOS: number;
  PAYOUT_APPROVERS: number;
  PAYOUT_AUTHORIZATION_ON_NO_ANSWER: 'deny' | 'approve';
  ELIGIBILITY_FAIL_CLOSED: boolean;
  ELIGIBILITY_FRESH_MS: number;
  ELIGIBILITY_RESCREEN_ACTIVE_DAYS: number;
  IMPEDED_CLOSE_WITHIN_MS: number;
  ALERT_STRUCTURING_BELOW_CENTAVOS: number;
  ALERT_STRUCTURING_BAND_PERCENT: number;
  ALERT_STRUCTURING_COUNT: number;
  ALERT_STRUCTURING_WINDOW_MS: number;
  ALERT_QUICK_IN_OUT_WINDOW_MS: number;
  ALERT_QUICK_IN_OUT_SHARE_PERCENT: number;
  ALERT_QUICK_IN_OUT_MIN_CENTAVOS: number;
  ALERT_WINDOW_TOTAL_ABOVE_CENTAVOS: number;
  ALERT_WINDOW_TOTAL_WINDOW_MS: number;
  ALERT_WINDOW_TOTAL_OF: 'deposits' | 'withdrawals' | 'each';
  ALERT_NEW_ACCOUNT_WINDOW_MS: number;
  ALERT_NEW_ACCOUNT_MIN_CENTAVOS: number;
}

/** The policy the rule variables say; checked by the policy's own schema. */
export function policyFromConfig(c: RuleSettings): Policy {
  return policySchema.parse({
    deposits: {
      requireVerified: c.REQUIRE_VERIFIED_FOR_DEPOSITS,
      holdThirdParty: c.HOLD_THIRD_PARTY_DEPOSITS,
      limitCoolingOffMs: c.DEPOSIT_LIMIT_COOLING_OFF_MS,
    },
    withdrawals: {
      requireVerified: c.REQUIRE_VERIFIED_FOR_WITHDRAWALS,
      requireOwnPayeeAccount: c.REQUIRE_OWN_PAYEE_ACCOUNT,
      dailyLimitCentavos: c.WITHDRAWAL_DAILY_LIMIT_CENTAVOS,
      stepUpAboveCentavos: c.BIOMETRIC_STEP_UP_CENTAVOS,
      stepUpNewAccount: c.BIOMETRIC_STEP_UP_NEW_ACCOUNT,
      kycMaxAgeMs: c.KYC_MAX_AGE,
    },
    payouts: {
      deadlineMs: c.PAYOUT_DEADLINE,
      atRiskShare: c.PAYOUT_AT_RISK_SHARE,
      approvalAboveCentavos: c.PAYOUT_APPROVAL_ABOVE_CENTAVOS,
      approvers: c.PAYOUT_APPROVERS,
      authorizationOnNoAnswer: c.PAYOUT_AUTHORIZATION_ON_NO_ANSWER,
    },
    eligibility: {
      failClosed: c.ELIGIBILITY_FAIL_CLOSED,
      freshMs: c.ELIGIBILITY_FRESH_MS,
      rescreenActiveDays: c.ELIGIBILITY_RESCREEN_ACTIVE_DAYS,
      impededCloseWithinMs: c.IMPEDED_CLOSE_WITHIN_MS,
    },
    alerts: {
      structuring: {
        belowCentavos: c.ALERT_STRUCTURING_BELOW_CENTAVOS,
        bandPercent: c.ALERT_STRUCTURING_BAND_PERCENT,
        count: c.ALERT_STRUCTURING_COUNT,
        windowMs: c.ALERT_STRUCTURING_WINDOW_MS,
      },
      quickInOut: {
        windowMs: c.ALERT_QUICK_IN_OUT_WINDOW_MS,
        sharePercent: c.ALERT_QUICK_IN_OUT_SHARE_PERCENT,
        minCentavos: c.ALERT_QUICK_IN_OUT_MIN_CENTAVOS,
      },
      windowTotal: {
        aboveCentavos: c.ALERT_WINDOW_TOTAL_ABOVE_CENTAVOS,
        windowMs: c.ALERT_WINDOW_TOTAL_WINDOW_MS,
        of: c.ALERT_WINDOW_TOTAL_OF,
      },
      newAccount: {
        windowMs: c.ALERT_NEW_ACCOUNT_WINDOW_MS,
        minCentavos: c.ALERT_NEW_ACCOUNT_MIN_CENTAVOS,
      },
    },
  });
}

/**
 * A reader that always answers one policy: for a process or a test that does not share its
 * rules through Postgres. Every process of a deployment uses policy/store.ts instead.
 */
export function staticPolicyReader(policy: Policy, version = 1): PolicyReader {
  const inForce: PolicyInForce = { version, policy: policySchema.parse(policy) };
  return { current: async () => inForce };
}
