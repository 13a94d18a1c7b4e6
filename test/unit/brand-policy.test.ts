import { describe, expect, it } from 'vitest';
import {
  BRAND_FIELDS,
  brandPolicyInForce,
  checkBrandOfOverrides,
  checkedOverrides,
  OPERATOR_FIELDS,
  PERSON_FIELDS,
  withOverrides,
} from '../../policy/brand';
import { brandChanges, nextOverrides } from '../../policy/brand-changes';
import { PolicyInputError, policyFields } from '../../policy/diff';
import { defaultPolicy, policyWith } from '../helpers/policy';

// Which rules a brand may set over the operator's policy, and how its overrides are laid on it
// (docs/policy.md, Rules of a brand).

const inputError = (fn: () => unknown): PolicyInputError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof PolicyInputError) return err;
    throw err;
  }
  throw new Error('no PolicyInputError thrown');
};

describe('the fields a brand may set', () => {
  it('decides every field of the policy once: the brand, the person or the operator', () => {
    const decided = [...BRAND_FIELDS, ...PERSON_FIELDS, ...OPERATOR_FIELDS];
    expect(new Set(decided).size).toBe(decided.length);
    expect(decided.sort()).toEqual(
      policyFields(defaultPolicy())
        .map(([p]) => p)
        .sort(),
    );
  });

  it("keeps the person's rules out of a brand's reach, naming the field", () => {
    for (const path of [
      'withdrawals.dailyLimitCentavos',
      'deposits.limitCoolingOffMs',
      'deposits.requireVerified',
      'withdrawals.requireOwnPayeeAccount',
      'withdrawals.stepUpAboveCentavos',
      'eligibility.failClosed',
    ]) {
      const err = inputError(() => checkedOverrides({ [path]: 1 }));
      expect(err.field).toBe(path);
      expect(err.problem).toContain("is the person's rule, the same at every brand");
    }
    expect(inputError(() => checkedOverrides({ 'alerts.structuring.count': 4 })).problem).toContain(
      "is the operator's",
    );
    expect(inputError(() => checkedOverrides({ 'payouts.nothing': 1 })).problem).toBe(
      'is not a field of the policy',
    );
  });

  it("refuses rules of the default brand's own: they are the operator's policy", () => {
    expect(inputError(() => checkBrandOfOverrides('default')).field).toBe('--brand');
    expect(() => checkBrandOfOverrides('bet-rio')).not.toThrow();
  });
});

describe("a brand's policy in force", () => {
  it("is the operator's exactly without overrides, naming no brand version", () => {
    const operator = { version: 7, policy: defaultPolicy() };
    expect(brandPolicyInForce(operator)).toEqual({ version: 7, policy: defaultPolicy() });
  });

  it("lays the brand's overrides on the operator's version, the rest following the operator", () => {
    const operator = policyWith({ withdrawals: { dailyLimitCentavos: 123_456 } });
    const laid = brandPolicyInForce(
      { version: 3, policy: operator },
      {
        brand: 'bet-rio',
        version: 2,
        overrides: { 'deposits.routing.connectors': ['api-pix', 'identity-payments'] },
      },
    );
    expect(laid.version).toBe(3);
    expect(laid.brandPolicyVersion).toBe(2);
    expect(laid.policy.deposits.routing.connectors).toEqual(['api-pix', 'identity-payments']);
    expect(laid.policy.withdrawals.dailyLimitCentavos).toBe(123_456);
    expect(operator.deposits.routing.connectors).toEqual(['identity-payments']);
  });

  it("checks the result by the policy's schema, naming the field", () => {
    const err = inputError(() => withOverrides(defaultPolicy(), { 'payouts.approvers': 3 }));
    expect(err.field).toBe('payouts.approvers');
  });
});

describe("a brand's change", () => {
  const operator = defaultPolicy();

  it('types values as the policy does and gives a field back to the operator on inherit', () => {
    const set = nextOverrides(
      operator,
      {},
      {
        set: [
          ['deposits.routing.connectors', 'api-pix, identity-payments'],
          ['payouts.deadlineMs', '90m'],
        ],
        inherit: [],
      },
    );
    expect(set).toEqual({
      'deposits.routing.connectors': ['api-pix', 'identity-payments'],
      'payouts.deadlineMs': 5_400_000,
    });
    expect(nextOverrides(operator, set, { set: [], inherit: ['payouts.deadlineMs'] })).toEqual({
      'deposits.routing.connectors': ['api-pix', 'identity-payments'],
    });
    expect(
      inputError(() => nextOverrides(operator, {}, { set: [], inherit: ['payouts.deadlineMs'] })).field,
    ).toBe('payouts.deadlineMs');
  });

  it("judges a loosening on the brand's policy before and after, an inherit included", () => {
    const lower = { 'payouts.approvalAboveCentavos': 100_000 };
    const tighten = brandChanges(operator, {}, lower);
    expect(tighten).toEqual([
      {
        path: 'payouts.approvalAboveCentavos',
        old: 1_000_000,
        new: 100_000,
        wasOverride: false,
        override: true,
        loosens: false,
      },
    ]);
    // Taking the lower threshold back raises it to the operator's: a loosening.
    expect(brandChanges(operator, lower, {})[0]).toMatchObject({ loosens: true, override: false });
    expect(brandChanges(operator, {}, { 'payouts.approvers': 1 })[0]?.loosens).toBe(true);
    // Pinning the operator's value changes who sets it, not what it is.
    expect(brandChanges(operator, {}, { 'payouts.approvers': 2 })).toEqual([
      { path: 'payouts.approvers', old: 2, new: 2, wasOverride: false, override: true, loosens: false },
    ]);
  });
});
