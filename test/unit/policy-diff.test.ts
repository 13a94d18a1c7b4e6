import { describe, expect, it } from 'vitest';
import {
  applyAssignments,
  checkedPolicy,
  diffPolicies,
  loosens,
  PolicyInputError,
  parseAssignments,
  policyFields,
} from '../../policy/diff';
import type { Policy } from '../../policy/schema';
import { defaultPolicy } from '../helpers/policy';

const base = defaultPolicy();

/** The policy with one field set. */
const withField = (path: string, value: string): Policy => applyAssignments(base, [[path, value]]);

/** The field changes of setting one field. */
const changeOf = (path: string, value: string) => diffPolicies(base, withField(path, value));

const inputError = (fn: () => unknown): { field: string; problem: string } => {
  try {
    fn();
  } catch (err) {
    if (err instanceof PolicyInputError) return { field: err.field, problem: err.problem };
    throw err;
  }
  throw new Error('no error');
};

describe('a policy diff', () => {
  it('names each changed field with its old and new value, in the schema order, and nothing else', () => {
    const after = applyAssignments(base, [
      ['payouts.approvers', '1'],
      ['withdrawals.dailyLimitCentavos', '100'],
    ]);
    expect(diffPolicies(base, after)).toEqual([
      {
        path: 'withdrawals.dailyLimitCentavos',
        old: base.withdrawals.dailyLimitCentavos,
        new: 100,
        loosens: false,
      },
      { path: 'payouts.approvers', old: 2, new: 1, loosens: true },
    ]);
    expect(diffPolicies(base, base)).toEqual([]);
  });

  it('reaches every leaf of the policy', () => {
    const paths = policyFields(base).map(([p]) => p);
    expect(paths).toContain('alerts.windowTotal.of');
    expect(paths).toContain('eligibility.impededCloseWithinMs');
    expect(paths).toHaveLength(36);
  });
});

describe('which changes loosen a money limit', () => {
  it('the daily limit up loosens, down tightens', () => {
    expect(loosens('withdrawals.dailyLimitCentavos', 100, 200)).toBe(true);
    expect(loosens('withdrawals.dailyLimitCentavos', 200, 100)).toBe(false);
  });

  it('a step-up or approval amount up, or to 0 (off), loosens; from 0 (off) to any tightens', () => {
    for (const path of ['withdrawals.stepUpAboveCentavos', 'payouts.approvalAboveCentavos']) {
      expect(loosens(path, 100, 200), path).toBe(true);
      expect(loosens(path, 100, 0), path).toBe(true);
      expect(loosens(path, 200, 100), path).toBe(false);
      expect(loosens(path, 0, 100), path).toBe(false);
    }
  });

  it('fewer approvers loosens, more tightens', () => {
    expect(loosens('payouts.approvers', 2, 1)).toBe(true);
    expect(loosens('payouts.approvers', 1, 2)).toBe(false);
  });

  it('each require, hold, failClosed and stepUpNewAccount turned off loosens; turned on tightens', () => {
    for (const path of [
      'deposits.requireVerified',
      'deposits.holdThirdParty',
      'withdrawals.requireVerified',
      'withdrawals.requireOwnPayeeAccount',
      'withdrawals.stepUpNewAccount',
      'eligibility.failClosed',
    ]) {
      expect(loosens(path, true, false), path).toBe(true);
      expect(loosens(path, false, true), path).toBe(false);
    }
  });

  it('no answer from the authorization deny → approve loosens; approve → deny tightens', () => {
    expect(loosens('payouts.authorizationOnNoAnswer', 'deny', 'approve')).toBe(true);
    expect(loosens('payouts.authorizationOnNoAnswer', 'approve', 'deny')).toBe(false);
  });

  it('an older KYC answer or registry answer accepted loosens; a younger one tightens', () => {
    expect(changeOf('withdrawals.kycMaxAgeMs', '60d')[0]?.loosens).toBe(true);
    expect(changeOf('withdrawals.kycMaxAgeMs', '1d')[0]?.loosens).toBe(false);
    expect(changeOf('eligibility.freshMs', '48h')[0]?.loosens).toBe(true);
    expect(changeOf('eligibility.freshMs', '1h')[0]?.loosens).toBe(false);
  });

  it("the deposits' routing, its breaker and the automatic return apply at once, either way", () => {
    expect(changeOf('deposits.routing.connectors', 'api-pix,identity-payments')).toEqual([
      {
        path: 'deposits.routing.connectors',
        old: 'identity-payments',
        new: 'api-pix,identity-payments',
        loosens: false,
      },
    ]);
    expect(changeOf('deposits.routing.breaker.failures', '1')[0]?.loosens).toBe(false);
    expect(changeOf('deposits.autoReturnThirdParty', 'true')[0]?.loosens).toBe(false);
    expect(changeOf('deposits.autoReturnAfterMs', '1h')[0]?.loosens).toBe(false);
  });

  it('thresholds that are no money limit apply at once, either way', () => {
    expect(changeOf('alerts.structuring.count', '5')[0]?.loosens).toBe(false);
    expect(changeOf('payouts.deadlineMs', '240m')[0]?.loosens).toBe(false);
  });
});

describe('path=value assignments', () => {
  it('reads each value as its field is typed, durations as the environment wrote them', () => {
    const p = applyAssignments(base, [
      ['withdrawals.kycMaxAgeMs', '30d'],
      ['payouts.deadlineMs', '120m'],
      ['deposits.holdThirdParty', 'false'],
      ['payouts.authorizationOnNoAnswer', 'approve'],
      ['payouts.atRiskShare', '0.5'],
    ]);
    expect(p.withdrawals.kycMaxAgeMs).toBe(30 * 86_400_000);
    expect(p.payouts.deadlineMs).toBe(7_200_000);
    expect(p.deposits.holdThirdParty).toBe(false);
    expect(p.payouts.authorizationOnNoAnswer).toBe('approve');
    expect(p.payouts.atRiskShare).toBe(0.5);
    // The policy it was applied to is left as it was.
    expect(base.deposits.holdThirdParty).toBe(true);
  });

  it('reads a version written before the routing as routing every deposit to the first provider', () => {
    const before = structuredClone(base) as unknown as { deposits: Record<string, unknown> };
    delete before.deposits.routing;
    delete before.deposits.autoReturnThirdParty;
    delete before.deposits.autoReturnAfterMs;
    const read = checkedPolicy(before);
    expect(read.deposits.routing.connectors).toEqual(['identity-payments']);
    expect(read.deposits.autoReturnThirdParty).toBe(false);
    expect(diffPolicies(base, read)).toEqual([]);
  });

  it('reads a list as comma-separated names, and refuses a bad one naming the list', () => {
    const p = withField('deposits.routing.connectors', ' api-pix, identity-payments ,');
    expect(p.deposits.routing.connectors).toEqual(['api-pix', 'identity-payments']);
    expect(policyFields(p)).toContainEqual(['deposits.routing.connectors', 'api-pix,identity-payments']);
    expect(inputError(() => withField('deposits.routing.connectors', 'api-pix,api-pix'))).toEqual({
      field: 'deposits.routing.connectors',
      problem: 'must name each connector once',
    });
    expect(inputError(() => withField('deposits.routing.connectors', ''))).toEqual({
      field: 'deposits.routing.connectors',
      problem: 'must name at least one connector',
    });
    expect(inputError(() => withField('deposits.routing.connectors', 'API Pix')).field).toBe(
      'deposits.routing.connectors',
    );
  });

  it('refuses a bad value naming its field, by the schema', () => {
    expect(inputError(() => withField('withdrawals.dailyLimitCentavos', '0'))).toEqual({
      field: 'withdrawals.dailyLimitCentavos',
      problem: 'must be at least 1 centavo',
    });
    expect(inputError(() => withField('withdrawals.dailyLimitCentavos', '10.5')).field).toBe(
      'withdrawals.dailyLimitCentavos',
    );
    expect(inputError(() => withField('payouts.approvers', '3'))).toEqual({
      field: 'payouts.approvers',
      problem: 'must be 1 or 2',
    });
    expect(inputError(() => withField('deposits.requireVerified', 'yes')).problem).toBe(
      'must be true or false',
    );
    expect(inputError(() => withField('payouts.authorizationOnNoAnswer', 'maybe')).field).toBe(
      'payouts.authorizationOnNoAnswer',
    );
    expect(inputError(() => withField('withdrawals.kycMaxAgeMs', 'soon')).field).toBe(
      'withdrawals.kycMaxAgeMs',
    );
  });

  it('refuses a field the policy has not, and an argument that is no assignment', () => {
    expect(inputError(() => withField('withdrawals.weeklyLimitCentavos', '1'))).toEqual({
      field: 'withdrawals.weeklyLimitCentavos',
      problem: 'is not a field of the policy',
    });
    expect(inputError(() => withField('withdrawals', '1')).field).toBe('withdrawals');
    expect(inputError(() => parseAssignments(['withdrawals.dailyLimitCentavos'])).field).toBe(
      'withdrawals.dailyLimitCentavos',
    );
    expect(parseAssignments(['a.b=c=d'])).toEqual([['a.b', 'c=d']]);
  });

  it('a whole policy with an unknown or missing field is refused naming it', () => {
    const extra = { ...base, withdrawals: { ...base.withdrawals, weeklyLimitCentavos: 1 } };
    expect(inputError(() => checkedPolicy(extra)).field).toBe('withdrawals');
    const { dailyLimitCentavos: _, ...missing } = base.withdrawals;
    expect(inputError(() => checkedPolicy({ ...base, withdrawals: missing })).field).toBe(
      'withdrawals.dailyLimitCentavos',
    );
  });
});
