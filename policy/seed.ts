import { z } from 'zod';
import { bool, ConfigError, durationMs } from '../common/config';
import type { Policy, PolicyInForce, PolicyReader } from './schema';
import { policySchema } from './schema';

// The policy's first version, from the environment a deployment ran with before the rules were
// a policy (docs/policy.md): the one place the rule variables are read, with the values and
// formats they always took. Once version 1 is in Postgres they are read no more: later versions
// are changes an admin makes (policy/changes.ts), never the environment.

/** A duration as a whole number and a unit (30d, 12h, 90m, 45s), read as milliseconds by unitDurationMs. */
const unitDuration = z
  .string()
  .regex(/^\d+(d|h|m|s)$/, 'must be a whole number and a unit: 30d, 12h, 90m or 45s');
const unitDurationMs = (v: string) =>
  Number(v.slice(0, -1)) * { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000 }[v.slice(-1) as 'd'];

/** A bound in centavos where 0 turns its rule off. */
const centavosOrOff = z.coerce
  .number({ error: 'must be a number of centavos' })
  .int('must be whole centavos')
  .min(0, 'must be 0 (off) or more');

/** A window in milliseconds where 0 turns its rule off. */
const windowOrOff = z.coerce
  .number({ error: 'must be a number of milliseconds' })
  .int('must be a whole number')
  .min(0, 'must be 0 (off) or more');

const percent = z.coerce
  .number({ error: 'must be a percentage' })
  .int('must be a whole number')
  .min(1, 'must be between 1 and 100')
  .max(100, 'must be between 1 and 100');

/**
 * The money rules' amounts by default (docs/rules.md), also for whoever must stay within them:
 * four eyes below the daily limit, or a payout that needs them would be refused
 * `limit_exceeded` before it could wait.
 */
export const RULE_DEFAULTS = {
  withdrawalDailyLimitCentavos: 5_000_000,
  biometricStepUpCentavos: 500_000,
  approvalAboveCentavos: 1_000_000,
} as const;

/** The connector every deposit went to first; the API Pix connector follows it when configured. */
export const FIRST_ROUTED = 'identity-payments';
export const API_PIX_CONNECTOR = 'api-pix';

/** A comma list of connector names, in order. */
const connectorList = z
  .string()
  .transform((v) =>
    v
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.string()).min(1, 'must name at least one connector'));

/** The rule variables: each seeds one field of the policy's first version (seedReference). */
export const ruleEnvSchema = z.object({
  /** A person's payouts per Brasília day, in centavos: a withdrawal that would pass it is refused. */
  WITHDRAWAL_DAILY_LIMIT_CENTAVOS: z.coerce
    .number({ error: 'must be a number of centavos' })
    .int('must be whole centavos')
    .positive('must be at least 1 centavo')
    .default(RULE_DEFAULTS.withdrawalDailyLimitCentavos),
  /** Money rules (docs/rules.md): each on by default; a caller satisfies them, never skips them. */
  REQUIRE_VERIFIED_FOR_WITHDRAWALS: bool.default(true),
  REQUIRE_VERIFIED_FOR_DEPOSITS: bool.default(true),
  /** Payouts only to the person's own CPF key or to an account registered as theirs. */
  REQUIRE_OWN_PAYEE_ACCOUNT: bool.default(true),
  /** A withdrawal above this many centavos waits for a biometric identification; 0: none by amount. */
  BIOMETRIC_STEP_UP_CENTAVOS: z.coerce
    .number({ error: 'must be a number of centavos' })
    .int('must be whole centavos')
    .min(0, 'must be 0 (off) or more')
    .default(RULE_DEFAULTS.biometricStepUpCentavos),
  /** The first payout to a registered account waits for a biometric identification. */
  BIOMETRIC_STEP_UP_NEW_ACCOUNT: bool.default(true),
  /** A KYC answer older than this is read again before money moves: 30d, 12h, 90m, 45s. */
  KYC_MAX_AGE: unitDuration.default('30d').transform(unitDurationMs),
  /** Payout controls (docs/payout-controls.md): a payout is due this long after the person asked (120m, 2h). */
  PAYOUT_DEADLINE: unitDuration
    .default('120m')
    .transform(unitDurationMs)
    .refine((ms) => ms > 0, 'must be more than 0'),
  /** At this share of PAYOUT_DEADLINE, still not completed, a payout is at risk. */
  PAYOUT_AT_RISK_SHARE: z.coerce
    .number({ error: 'must be a number between 0 and 1' })
    .gt(0, 'must be above 0')
    .lt(1, 'must be below 1')
    .default(0.75),
  /** A payout above this many centavos waits for operators' approval (four eyes); 0: off. */
  PAYOUT_APPROVAL_ABOVE_CENTAVOS: z.coerce
    .number({ error: 'must be a number of centavos' })
    .int('must be whole centavos')
    .min(0, 'must be 0 (off) or more')
    .default(RULE_DEFAULTS.approvalAboveCentavos),
  /** Different operators who must approve such a payout. */
  PAYOUT_APPROVERS: z.coerce
    .number({ error: 'must be 1 or 2' })
    .int('must be 1 or 2')
    .min(1, 'must be 1 or 2')
    .max(2, 'must be 1 or 2')
    .default(2),
  /** No valid answer from the authorization: deny (refused, fail closed) or approve (sent). */
  PAYOUT_AUTHORIZATION_ON_NO_ANSWER: z
    .enum(['deny', 'approve'], { error: 'must be deny or approve' })
    .default('deny'),
  /** A paid deposit whose payer CPF is not the person's waits for an operator (`held`). */
  HOLD_THIRD_PARTY_DEPOSITS: bool.default(true),
  /** How long a person's raised or removed deposit limit waits before it applies (a lower one applies at once). */
  DEPOSIT_LIMIT_COOLING_OFF_MS: durationMs.default(24 * 3_600_000),
  /**
   * The connectors a deposit's charge is asked of, in order (a comma list); unset:
   * identity-payments, then api-pix when API_PIX_BASE_URL is set (routingDefault).
   */
  DEPOSIT_ROUTING: connectorList.optional(),
  /** Charge creations failed or timed out within the window that open a connector's breaker. */
  DEPOSIT_BREAKER_FAILURES: z.coerce
    .number({ error: 'must be a number of failures' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .default(5),
  DEPOSIT_BREAKER_WINDOW_MS: durationMs.default(60_000),
  /** How long an open breaker skips its connector before a deposit tries it again. */
  DEPOSIT_BREAKER_COOL_DOWN_MS: durationMs.default(30_000),
  /** A held third party's deposit goes back to its payer by itself after DEPOSIT_AUTO_RETURN_AFTER_MS. */
  DEPOSIT_AUTO_RETURN_THIRD_PARTY: bool.default(false),
  DEPOSIT_AUTO_RETURN_AFTER_MS: durationMs.default(24 * 3_600_000),
  /** A person's answer younger than this is reused instead of asking again. */
  ELIGIBILITY_FRESH_MS: durationMs.default(24 * 3_600_000),
  /** The eligibility service unreachable: true refuses new deposits (503), false lets them through. */
  ELIGIBILITY_FAIL_CLOSED: bool.default(true),
  /** Rescreening: customers active (a flow or verification change) within this many days are asked again. */
  ELIGIBILITY_RESCREEN_ACTIVE_DAYS: z.coerce
    .number({ error: 'must be a number of days' })
    .int()
    .min(1)
    .default(15),
  /** How long an operator has to close an impeded person's account: the back office's deadline. */
  IMPEDED_CLOSE_WITHIN_MS: durationMs.default(30 * 86_400_000),
  /** Structuring: deposits just under this many centavos are counted; 0: the rule is off. */
  ALERT_STRUCTURING_BELOW_CENTAVOS: centavosOrOff.default(5_000_000),
  /** Structuring: "just under" is within this percentage below the value. */
  ALERT_STRUCTURING_BAND_PERCENT: percent.default(10),
  /** Structuring: this many such deposits within the window raise an alert. */
  ALERT_STRUCTURING_COUNT: z.coerce
    .number({ error: 'must be a number of deposits' })
    .int('must be a whole number')
    .min(2, 'must be at least 2')
    .default(3),
  ALERT_STRUCTURING_WINDOW_MS: durationMs.default(24 * 3_600_000),
  /** Quick in-out: a payout within this long of the deposits before it; 0: the rule is off. */
  ALERT_QUICK_IN_OUT_WINDOW_MS: windowOrOff.default(3_600_000),
  /** Quick in-out: the payout is at least this share of those deposits. */
  ALERT_QUICK_IN_OUT_SHARE_PERCENT: percent.default(80),
  /** Quick in-out: smaller payouts are not looked at. */
  ALERT_QUICK_IN_OUT_MIN_CENTAVOS: centavosOrOff.default(100_000),
  /** Window total: a person's total moved over the window above this raises an alert; 0: off. */
  ALERT_WINDOW_TOTAL_ABOVE_CENTAVOS: centavosOrOff.default(10_000_000),
  ALERT_WINDOW_TOTAL_WINDOW_MS: durationMs.default(24 * 3_600_000),
  /** Window total: what is added up, deposits, withdrawals, or each apart. */
  ALERT_WINDOW_TOTAL_OF: z
    .enum(['deposits', 'withdrawals', 'each'], { error: 'must be deposits, withdrawals or each' })
    .default('each'),
  /** New account: a payout within this long of the person's registration; 0: the rule is off. */
  ALERT_NEW_ACCOUNT_WINDOW_MS: windowOrOff.default(24 * 3_600_000),
  /** New account: smaller payouts are not looked at. */
  ALERT_NEW_ACCOUNT_MIN_CENTAVOS: centavosOrOff.default(100_000),
});

export type RuleSettings = z.output<typeof ruleEnvSchema>;

/** The policy field each rule variable seeds (docs/configuration.md shows it beside the variable). */
export const RULE_VARIABLE_FIELDS: Record<keyof RuleSettings, string> = {
  REQUIRE_VERIFIED_FOR_DEPOSITS: 'deposits.requireVerified',
  HOLD_THIRD_PARTY_DEPOSITS: 'deposits.holdThirdParty',
  DEPOSIT_LIMIT_COOLING_OFF_MS: 'deposits.limitCoolingOffMs',
  DEPOSIT_ROUTING: 'deposits.routing.connectors',
  DEPOSIT_BREAKER_FAILURES: 'deposits.routing.breaker.failures',
  DEPOSIT_BREAKER_WINDOW_MS: 'deposits.routing.breaker.windowMs',
  DEPOSIT_BREAKER_COOL_DOWN_MS: 'deposits.routing.breaker.coolDownMs',
  DEPOSIT_AUTO_RETURN_THIRD_PARTY: 'deposits.autoReturnThirdParty',
  DEPOSIT_AUTO_RETURN_AFTER_MS: 'deposits.autoReturnAfterMs',
  REQUIRE_VERIFIED_FOR_WITHDRAWALS: 'withdrawals.requireVerified',
  REQUIRE_OWN_PAYEE_ACCOUNT: 'withdrawals.requireOwnPayeeAccount',
  WITHDRAWAL_DAILY_LIMIT_CENTAVOS: 'withdrawals.dailyLimitCentavos',
  BIOMETRIC_STEP_UP_CENTAVOS: 'withdrawals.stepUpAboveCentavos',
  BIOMETRIC_STEP_UP_NEW_ACCOUNT: 'withdrawals.stepUpNewAccount',
  KYC_MAX_AGE: 'withdrawals.kycMaxAgeMs',
  PAYOUT_DEADLINE: 'payouts.deadlineMs',
  PAYOUT_AT_RISK_SHARE: 'payouts.atRiskShare',
  PAYOUT_APPROVAL_ABOVE_CENTAVOS: 'payouts.approvalAboveCentavos',
  PAYOUT_APPROVERS: 'payouts.approvers',
  PAYOUT_AUTHORIZATION_ON_NO_ANSWER: 'payouts.authorizationOnNoAnswer',
  ELIGIBILITY_FAIL_CLOSED: 'eligibility.failClosed',
  ELIGIBILITY_FRESH_MS: 'eligibility.freshMs',
  ELIGIBILITY_RESCREEN_ACTIVE_DAYS: 'eligibility.rescreenActiveDays',
  IMPEDED_CLOSE_WITHIN_MS: 'eligibility.impededCloseWithinMs',
  ALERT_STRUCTURING_BELOW_CENTAVOS: 'alerts.structuring.belowCentavos',
  ALERT_STRUCTURING_BAND_PERCENT: 'alerts.structuring.bandPercent',
  ALERT_STRUCTURING_COUNT: 'alerts.structuring.count',
  ALERT_STRUCTURING_WINDOW_MS: 'alerts.structuring.windowMs',
  ALERT_QUICK_IN_OUT_WINDOW_MS: 'alerts.quickInOut.windowMs',
  ALERT_QUICK_IN_OUT_SHARE_PERCENT: 'alerts.quickInOut.sharePercent',
  ALERT_QUICK_IN_OUT_MIN_CENTAVOS: 'alerts.quickInOut.minCentavos',
  ALERT_WINDOW_TOTAL_ABOVE_CENTAVOS: 'alerts.windowTotal.aboveCentavos',
  ALERT_WINDOW_TOTAL_WINDOW_MS: 'alerts.windowTotal.windowMs',
  ALERT_WINDOW_TOTAL_OF: 'alerts.windowTotal.of',
  ALERT_NEW_ACCOUNT_WINDOW_MS: 'alerts.newAccount.windowMs',
  ALERT_NEW_ACCOUNT_MIN_CENTAVOS: 'alerts.newAccount.minCentavos',
};

/** The routing an unset DEPOSIT_ROUTING seeds: the first provider, then API Pix when configured. */
export const routingDefault = (env: NodeJS.ProcessEnv): string[] =>
  env.API_PIX_BASE_URL ? [FIRST_ROUTED, API_PIX_CONNECTOR] : [FIRST_ROUTED];

/**
 * The policy the parsed rule variables say; checked by the policy's own schema. `routing` is the
 * order an unset DEPOSIT_ROUTING stands for.
 */
export function policyOfSettings(c: RuleSettings, routing: string[] = [FIRST_ROUTED]): Policy {
  return policySchema.parse({
    deposits: {
      requireVerified: c.REQUIRE_VERIFIED_FOR_DEPOSITS,
      holdThirdParty: c.HOLD_THIRD_PARTY_DEPOSITS,
      limitCoolingOffMs: c.DEPOSIT_LIMIT_COOLING_OFF_MS,
      routing: {
        connectors: c.DEPOSIT_ROUTING ?? routing,
        breaker: {
          failures: c.DEPOSIT_BREAKER_FAILURES,
          windowMs: c.DEPOSIT_BREAKER_WINDOW_MS,
          coolDownMs: c.DEPOSIT_BREAKER_COOL_DOWN_MS,
        },
      },
      autoReturnThirdParty: c.DEPOSIT_AUTO_RETURN_THIRD_PARTY,
      autoReturnAfterMs: c.DEPOSIT_AUTO_RETURN_AFTER_MS,
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

/** The rule variables a deployment set (their values are ignored once version 1 exists). */
export const ruleVariablesSet = (env: NodeJS.ProcessEnv): string[] =>
  Object.keys(ruleEnvSchema.shape).filter((name) => env[name] !== undefined && env[name] !== '');

/**
 * The policy the environment seeds: the rule variables, unset ones on their defaults. A wrong
 * one is a ConfigError with one line per variable, as every other setting's.
 */
export function policyFromEnv(env: NodeJS.ProcessEnv = process.env): Policy {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = ruleEnvSchema.safeParse(cleaned);
  if (!parsed.success)
    throw new ConfigError(
      parsed.error.issues.map((i) => {
        const name = String(i.path[0] ?? '?');
        const raw = cleaned[name];
        return `${name}=${raw === undefined ? '(unset)' : JSON.stringify(raw.slice(0, 60))}: ${i.message}`;
      }),
    );
  // The schema's problems name a variable; the policy's own (a name given twice) name its field.
  try {
    return policyOfSettings(parsed.data, routingDefault(cleaned));
  } catch (err) {
    if (!(err instanceof z.ZodError)) throw err;
    throw new ConfigError(
      err.issues.map((i) => {
        const field = i.path.join('.');
        const name = Object.entries(RULE_VARIABLE_FIELDS).find(([, f]) => field.startsWith(f))?.[0];
        return `${name ?? field}: ${i.message}`;
      }),
    );
  }
}

/** The policy an unconfigured deployment seeds. */
export const defaultPolicy = (): Policy => policyFromEnv({});

/** For process entry points: the seed, or one line per wrong rule variable and exit 1. */
export function policySeedOrExit(env: NodeJS.ProcessEnv = process.env): Policy {
  try {
    return policyFromEnv(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`pixflow: invalid configuration\n${err.problems.map((p) => `  ${p}\n`).join('')}`);
      process.exit(1);
    }
    throw err;
  }
}
