import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, envSchema, loadConfig } from '../../common/config';
import { policyFields } from '../../policy/diff';
import { defaultPolicy, policyFromEnv, RULE_VARIABLE_FIELDS, ruleEnvSchema } from '../../policy/seed';

// The policy's first version from the environment (policy/seed.ts): the rule variables as they
// were always written, each into its own field of the policy, and nowhere else.

const fieldsOf = (env: Record<string, string>) => new Map(policyFields(policyFromEnv(env)));

/** A value for the variable unlike its default, as the environment would write it. */
const OTHER_VALUE: Record<keyof typeof RULE_VARIABLE_FIELDS, [string, unknown]> = {
  REQUIRE_VERIFIED_FOR_DEPOSITS: ['false', false],
  HOLD_THIRD_PARTY_DEPOSITS: ['no', false],
  DEPOSIT_LIMIT_COOLING_OFF_MS: ['60000', 60_000],
  DEPOSIT_ROUTING: [' api-pix , identity-payments', 'api-pix,identity-payments'],
  DEPOSIT_BREAKER_FAILURES: ['2', 2],
  DEPOSIT_BREAKER_WINDOW_MS: ['1000', 1_000],
  DEPOSIT_BREAKER_COOL_DOWN_MS: ['2000', 2_000],
  DEPOSIT_AUTO_RETURN_THIRD_PARTY: ['true', true],
  DEPOSIT_AUTO_RETURN_AFTER_MS: ['3600000', 3_600_000],
  REQUIRE_VERIFIED_FOR_WITHDRAWALS: ['0', false],
  REQUIRE_OWN_PAYEE_ACCOUNT: ['false', false],
  WITHDRAWAL_DAILY_LIMIT_CENTAVOS: ['123456', 123_456],
  BIOMETRIC_STEP_UP_CENTAVOS: ['0', 0],
  BIOMETRIC_STEP_UP_NEW_ACCOUNT: ['false', false],
  KYC_MAX_AGE: ['12h', 12 * 3_600_000],
  PAYOUT_DEADLINE: ['45s', 45_000],
  PAYOUT_AT_RISK_SHARE: ['0.5', 0.5],
  PAYOUT_APPROVAL_ABOVE_CENTAVOS: ['0', 0],
  PAYOUT_APPROVERS: ['1', 1],
  PAYOUT_AUTHORIZATION_ON_NO_ANSWER: ['approve', 'approve'],
  ELIGIBILITY_FAIL_CLOSED: ['false', false],
  ELIGIBILITY_FRESH_MS: ['1000', 1_000],
  ELIGIBILITY_RESCREEN_ACTIVE_DAYS: ['3', 3],
  IMPEDED_CLOSE_WITHIN_MS: ['5000', 5_000],
  ALERT_STRUCTURING_BELOW_CENTAVOS: ['0', 0],
  ALERT_STRUCTURING_BAND_PERCENT: ['20', 20],
  ALERT_STRUCTURING_COUNT: ['5', 5],
  ALERT_STRUCTURING_WINDOW_MS: ['600000', 600_000],
  ALERT_QUICK_IN_OUT_WINDOW_MS: ['0', 0],
  ALERT_QUICK_IN_OUT_SHARE_PERCENT: ['50', 50],
  ALERT_QUICK_IN_OUT_MIN_CENTAVOS: ['1', 1],
  ALERT_WINDOW_TOTAL_ABOVE_CENTAVOS: ['7', 7],
  ALERT_WINDOW_TOTAL_WINDOW_MS: ['1000', 1_000],
  ALERT_WINDOW_TOTAL_OF: ['deposits', 'deposits'],
  ALERT_NEW_ACCOUNT_WINDOW_MS: ['0', 0],
  ALERT_NEW_ACCOUNT_MIN_CENTAVOS: ['2', 2],
};

describe('the policy seeded from the environment', () => {
  it('unset, is the defaults the rules always had', () => {
    const p = defaultPolicy();
    expect(p.withdrawals).toMatchObject({
      dailyLimitCentavos: 5_000_000,
      stepUpAboveCentavos: 500_000,
      kycMaxAgeMs: 30 * 86_400_000,
    });
    expect(p.payouts).toMatchObject({
      deadlineMs: 120 * 60_000,
      approvalAboveCentavos: 1_000_000,
      approvers: 2,
    });
    expect(p.deposits).toEqual({
      requireVerified: true,
      holdThirdParty: true,
      limitCoolingOffMs: 86_400_000,
      routing: {
        connectors: ['identity-payments'],
        breaker: { failures: 5, windowMs: 60_000, coolDownMs: 30_000 },
      },
      autoReturnThirdParty: false,
      autoReturnAfterMs: 86_400_000,
    });
  });

  it('routes deposits to API Pix after the first provider when it is configured, unless told otherwise', () => {
    const configured = { API_PIX_BASE_URL: 'https://psp.example/api/v2' };
    expect(policyFromEnv(configured).deposits.routing.connectors).toEqual(['identity-payments', 'api-pix']);
    expect(policyFromEnv({ ...configured, DEPOSIT_ROUTING: 'api-pix' }).deposits.routing.connectors).toEqual([
      'api-pix',
    ]);
  });

  it('reads each variable, in the formats it always took, into its own field and no other', () => {
    const defaults = fieldsOf({});
    for (const [name, [text, value]] of Object.entries(OTHER_VALUE)) {
      const field = RULE_VARIABLE_FIELDS[name as keyof typeof RULE_VARIABLE_FIELDS];
      const fields = fieldsOf({ [name]: text });
      expect(fields.get(field), name).toEqual(value);
      const changed = [...fields].filter(([path, v]) => defaults.get(path) !== v).map(([path]) => path);
      expect(changed, name).toEqual([field]);
    }
    // Every field of the policy is seeded by exactly one variable.
    expect(new Set(Object.values(RULE_VARIABLE_FIELDS))).toEqual(new Set(defaults.keys()));
  });

  it('refuses a wrong value with one line naming the variable, as every setting', () => {
    const problems = (env: Record<string, string>) => {
      try {
        policyFromEnv(env);
        return [];
      } catch (err) {
        if (err instanceof ConfigError) return err.problems;
        throw err;
      }
    };
    expect(problems({ KYC_MAX_AGE: '30' })).toEqual([
      'KYC_MAX_AGE="30": must be a whole number and a unit: 30d, 12h, 90m or 45s',
    ]);
    expect(
      problems({ WITHDRAWAL_DAILY_LIMIT_CENTAVOS: '0', PAYOUT_APPROVERS: '3' }).map((l) => l.split('=')[0]),
    ).toEqual(['WITHDRAWAL_DAILY_LIMIT_CENTAVOS', 'PAYOUT_APPROVERS']);
    expect(problems({ DEPOSIT_ROUTING: 'api-pix,api-pix' })).toEqual([
      'DEPOSIT_ROUTING: must name each connector once',
    ]);
    expect(problems({ DEPOSIT_ROUTING: ' , ' })[0]).toMatch(
      /^DEPOSIT_ROUTING=.*must name at least one connector/,
    );
    // Empty means unset, as in `FOO= cmd`.
    expect(policyFromEnv({ WITHDRAWAL_DAILY_LIMIT_CENTAVOS: '' }).withdrawals.dailyLimitCentavos).toBe(
      5_000_000,
    );
  });

  it("are no longer the process's settings: the configuration neither reads nor shows them", () => {
    const inBoth = Object.keys(ruleEnvSchema.shape).filter((name) => name in envSchema.shape);
    expect(inBoth).toEqual([]);
    expect(loadConfig({ WITHDRAWAL_DAILY_LIMIT_CENTAVOS: '1' })).not.toHaveProperty(
      'WITHDRAWAL_DAILY_LIMIT_CENTAVOS',
    );
  });

  it('are each in docs/policy.md, with the default and the variable that seeds the field', () => {
    const page = readFileSync(path.resolve(__dirname, '../../docs/policy.md'), 'utf8');
    const variableOf = new Map(Object.entries(RULE_VARIABLE_FIELDS).map(([name, field]) => [field, name]));
    for (const [field, value] of policyFields(defaultPolicy())) {
      const row = page.split('\n').find((l) => l.startsWith(`| \`${field}\` |`));
      expect(row, field).toBeDefined();
      expect(row?.split('|')[2]?.trim().split(' ')[0], field).toBe(String(value));
      expect(row, field).toContain(`\`${variableOf.get(field)}\``);
    }
  });
});
