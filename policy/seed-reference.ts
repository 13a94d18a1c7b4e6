import type { z } from 'zod';
import { cell, rule, shownDefaultOf, type VariableDoc } from '../common/config-reference';
import { RULE_VARIABLE_FIELDS, ruleEnvSchema } from './seed';

// What each rule variable means, for docs/configuration.md (`npm run docs:config`, beside the
// process's own settings): a variable here only seeds the policy's first version.

/** A monitoring rule's setting: the Monitoring page says what the rule looks at. */
export const monitoring = (doc: VariableDoc): VariableDoc => ({
  ...doc,
  meaning: `${doc.meaning} ([Monitoring](monitoring.md))`,
});

/**
 * The rule variables: read only to seed the rules policy's first version (policy/seed.ts), each
 * into one field of the policy; once Postgres holds a version, the policy is changed instead.
 */
export const seedReference: Record<keyof typeof ruleEnvSchema.shape, VariableDoc> = {
  WITHDRAWAL_DAILY_LIMIT_CENTAVOS: rule({
    meaning:
      "a person's payouts per America/Sao_Paulo day; `GET /v1/customers/:cpf` shows today's total against it",
  }),
  REQUIRE_VERIFIED_FOR_WITHDRAWALS: rule({
    meaning: 'payouts only for a person whose onboarding is approved',
  }),
  REQUIRE_VERIFIED_FOR_DEPOSITS: rule({ meaning: 'deposits only for a person whose onboarding is approved' }),
  REQUIRE_OWN_PAYEE_ACCOUNT: rule({
    meaning: "payouts only to the person's CPF key or a registered account",
  }),
  BIOMETRIC_STEP_UP_CENTAVOS: rule({
    meaning: 'a withdrawal above this waits for a biometric identification; 0: none by amount',
  }),
  BIOMETRIC_STEP_UP_NEW_ACCOUNT: rule({ meaning: 'the first payout to a registered account waits for one' }),
  KYC_MAX_AGE: rule({
    meaning: 'a KYC answer older than this (`30d`, `12h`, `90m`, `45s`) is read again before a payout',
    shownDefault: '30d',
  }),
  PAYOUT_DEADLINE: {
    meaning:
      'a payout is due this long (`120m`, `2h`) after the person asked for it: past it, still not completed, it is `withdrawal.deadline_missed` ([Payout controls](payout-controls.md))',
    shownDefault: '120m',
  },
  PAYOUT_AT_RISK_SHARE: {
    meaning:
      'at this share of `PAYOUT_DEADLINE` (between 0 and 1), still not completed, a payout is `withdrawal.deadline_at_risk` ([Payout controls](payout-controls.md))',
  },
  PAYOUT_APPROVAL_ABOVE_CENTAVOS: rule({
    meaning:
      "a payout above this waits in `awaiting_approval` for operators' approval (four eyes, [Payout controls](payout-controls.md)); 0: off",
  }),
  PAYOUT_APPROVERS: rule({
    meaning:
      'different operators who must approve such a payout (1 or 2); the operator who asked for a manual payout never approves it',
  }),
  PAYOUT_AUTHORIZATION_ON_NO_ANSWER: rule({
    meaning:
      'no valid answer from the authorization: `deny` refuses the payout (`authorization_unavailable`, fail closed), `approve` sends it',
  }),
  HOLD_THIRD_PARTY_DEPOSITS: rule({
    meaning: "a paid deposit whose payer CPF is not the person's waits for an operator (`held`)",
  }),
  DEPOSIT_LIMIT_COOLING_OFF_MS: rule({
    meaning:
      "how long a person's raised or removed deposit limit (`PUT /v1/customers/:cpf/deposit-limits`) waits before it applies; a lower one applies at once",
    shownDefault: '86400000 (24 h)',
  }),
  DEPOSIT_ROUTING: rule({
    meaning:
      "the connectors a deposit's charge is asked of, in order, a comma list: one down (5xx, timeout, no connection, 429) is skipped for the next within the same request, one whose breaker is open is not asked ([Rules](rules.md#routing-deposits))",
    shownDefault: '`identity-payments`, then `api-pix` when `API_PIX_BASE_URL` is set',
  }),
  DEPOSIT_BREAKER_FAILURES: rule({
    meaning:
      'charge creations a connector failed or timed out within `DEPOSIT_BREAKER_WINDOW_MS` that open its breaker: every worker skips it until the cool-down passes',
  }),
  DEPOSIT_BREAKER_WINDOW_MS: rule({
    meaning: "the window a connector's failed charge creations are counted in",
  }),
  DEPOSIT_BREAKER_COOL_DOWN_MS: rule({
    meaning:
      'how long an open breaker skips its connector; then the next deposit tries it: a success closes it, a failure opens it again',
  }),
  DEPOSIT_AUTO_RETURN_THIRD_PARTY: rule({
    meaning:
      "a deposit held because someone else paid it goes back to its payer by itself, through the connector that received it, once `DEPOSIT_AUTO_RETURN_AFTER_MS` passed with no operator's decision",
  }),
  DEPOSIT_AUTO_RETURN_AFTER_MS: rule({
    meaning: "the operators' review time before that automatic return",
    shownDefault: '86400000 (24 h)',
  }),
  ELIGIBILITY_FRESH_MS: {
    meaning: "a person's eligibility answer younger than this is reused instead of asking again",
  },
  ELIGIBILITY_FAIL_CLOSED: rule({
    meaning:
      'the eligibility service unreachable: true keeps a new deposit asking for about five minutes (the caller gets 503 with `Retry-After` meanwhile), then refuses it (409 `eligibility-unavailable`); false lets it through unscreened',
  }),
  ELIGIBILITY_RESCREEN_ACTIVE_DAYS: rule({
    meaning:
      'rescreening: customers with a flow or a verification change within this many days are asked about again on every pass (the rules ask for every 15 days at least)',
  }),
  IMPEDED_CLOSE_WITHIN_MS: {
    meaning:
      "the time an operator has, from the registry's bar, to close an impeded person's account: the back office's impeded queue counts down to it. Set the period your regulation gives; the default is a placeholder",
  },
  ALERT_STRUCTURING_BELOW_CENTAVOS: monitoring({
    meaning: 'structuring: deposits just under this value are counted; 0 turns the rule off',
  }),
  ALERT_STRUCTURING_BAND_PERCENT: monitoring({
    meaning: 'structuring: "just under" means at most this percentage below the value, and below it',
  }),
  ALERT_STRUCTURING_COUNT: monitoring({
    meaning: 'structuring: this many such deposits within `ALERT_STRUCTURING_WINDOW_MS` raise an alert',
  }),
  ALERT_STRUCTURING_WINDOW_MS: monitoring({ meaning: 'structuring: the window the deposits are counted in' }),
  ALERT_QUICK_IN_OUT_WINDOW_MS: monitoring({
    meaning:
      'quick in-out: a payout within this long of deposits, with no other payout between, is looked at; 0 turns the rule off',
  }),
  ALERT_QUICK_IN_OUT_SHARE_PERCENT: monitoring({
    meaning: 'quick in-out: the payout is at least this share of those deposits',
  }),
  ALERT_QUICK_IN_OUT_MIN_CENTAVOS: monitoring({
    meaning: 'quick in-out: payouts below this are not looked at',
  }),
  ALERT_WINDOW_TOTAL_ABOVE_CENTAVOS: monitoring({
    meaning:
      "window total: a person's total over `ALERT_WINDOW_TOTAL_WINDOW_MS` above this raises an alert; 0 turns the rule off",
  }),
  ALERT_WINDOW_TOTAL_WINDOW_MS: monitoring({ meaning: 'window total: the window the total is counted over' }),
  ALERT_WINDOW_TOTAL_OF: monitoring({
    meaning:
      'window total: what is added up: `deposits` (credited), `withdrawals` (sent), or `each` (both, each apart)',
  }),
  ALERT_NEW_ACCOUNT_WINDOW_MS: monitoring({
    meaning:
      "new account: a payout within this long of the person's registration (their onboarding approved) raises an alert; 0 turns the rule off",
  }),
  ALERT_NEW_ACCOUNT_MIN_CENTAVOS: monitoring({
    meaning: 'new account: payouts below this are not looked at',
  }),
};

export const SEED_INTRO =
  "The rules' variables below are read once, to seed version 1 of the [rules policy](policy.md) when Postgres holds none; after that the policy is changed, never the environment (`npm run operator -- policy set`, or the back office's Policy page), and these are ignored.";

/** The rule variables: each one's default, the policy field it seeds, and its meaning. */
export function seedReferenceTable(): string {
  const rows = Object.entries(seedReference).map(([name, doc]) => {
    const field = ruleEnvSchema.shape[name as keyof typeof seedReference] as z.ZodType;
    const seeds = RULE_VARIABLE_FIELDS[name as keyof typeof seedReference];
    return `| \`${name}\` | ${cell(shownDefaultOf(name, field, doc))} | \`${seeds}\` | ${cell(doc.meaning)} |`;
  });
  return ['| variable | default | seeds | meaning |', '|---|---|---|---|', ...rows].join('\n');
}
