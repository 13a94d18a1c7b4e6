import { z } from 'zod';
import { DEFAULT_BRAND_ID } from '../contracts/brand';
import { checkedPolicy, PolicyInputError, type PolicyValue } from './diff';
import type { Policy, PolicyInForce } from './schema';

// A brand's rules (docs/policy.md, Rules of a brand): overrides of the fields a brand may set,
// laid over the operator's version in force. What is the person's (docs/rules.md, A person across
// brands) stays the operator's: a person's limits and checks must not change with the logo.

/**
 * The fields a brand may set, each about the brand's own flows alone: its deposits' routing and
 * breaker (its own connector accounts and breakers), what becomes of its held deposits (returned
 * through its own connector, to the account the money came from), and its payouts' controls (its
 * payouts' deadline, its four eyes, its backend's authorization).
 */
export const BRAND_FIELDS: readonly string[] = [
  'deposits.routing.connectors',
  'deposits.routing.breaker.failures',
  'deposits.routing.breaker.windowMs',
  'deposits.routing.breaker.coolDownMs',
  'deposits.autoReturnThirdParty',
  'deposits.autoReturnAfterMs',
  'payouts.deadlineMs',
  'payouts.atRiskShare',
  'payouts.approvalAboveCentavos',
  'payouts.approvers',
  'payouts.authorizationOnNoAnswer',
];

/**
 * The person's rules, the same at every brand: verification (and the KYC's age), the person's own
 * accounts (a payee, a payer) and the step-up, the daily payout limit and the cooling-off of the
 * person's own deposit limits, the registry of impeded people.
 */
export const PERSON_FIELDS: readonly string[] = [
  'deposits.requireVerified',
  'deposits.holdThirdParty',
  'deposits.limitCoolingOffMs',
  'withdrawals.requireVerified',
  'withdrawals.requireOwnPayeeAccount',
  'withdrawals.dailyLimitCentavos',
  'withdrawals.stepUpAboveCentavos',
  'withdrawals.stepUpNewAccount',
  'withdrawals.kycMaxAgeMs',
  'eligibility.failClosed',
  'eligibility.freshMs',
  'eligibility.rescreenActiveDays',
  'eligibility.impededCloseWithinMs',
];

/** The operator's alone: the alerts look at a person's movements at every brand together. */
export const OPERATOR_FIELDS: readonly string[] = [
  'alerts.structuring.belowCentavos',
  'alerts.structuring.bandPercent',
  'alerts.structuring.count',
  'alerts.structuring.windowMs',
  'alerts.quickInOut.windowMs',
  'alerts.quickInOut.sharePercent',
  'alerts.quickInOut.minCentavos',
  'alerts.windowTotal.aboveCentavos',
  'alerts.windowTotal.windowMs',
  'alerts.windowTotal.of',
  'alerts.newAccount.windowMs',
  'alerts.newAccount.minCentavos',
];

const brandFields = new Set(BRAND_FIELDS);

/** A field's value as an override holds it: a list (the routing) as a list, as the policy types it. */
export type OverrideValue = boolean | number | string | string[];
/** A brand's overrides, by dotted path. */
export type BrandOverrides = Record<string, OverrideValue>;

/** Why a brand may not set `path`: a problem naming it, or none. */
export function overrideRefusal(path: string): string | undefined {
  if (brandFields.has(path)) return undefined;
  if (PERSON_FIELDS.includes(path))
    return "is the person's rule, the same at every brand (docs/rules.md, A person across brands): change the operator's policy, without --brand";
  if (OPERATOR_FIELDS.includes(path))
    return "is the operator's: the alerts look at a person's movements at every brand together; change the operator's policy, without --brand";
  return 'is not a field of the policy';
}

/** Throws, naming the field, unless a brand may set `path`. */
export function checkOverridable(path: string): void {
  const problem = overrideRefusal(path);
  if (problem) throw new PolicyInputError(path, problem);
}

/** Whether `brand` may have rules of its own: the default brand's are the operator's policy. */
export function checkBrandOfOverrides(brand: string): void {
  if (brand === DEFAULT_BRAND_ID)
    throw new PolicyInputError(
      '--brand',
      "the default brand's rules are the operator's policy: change it without --brand",
    );
}

const overrideValue = z.union([z.boolean(), z.number(), z.string(), z.array(z.string())]);
const overridesSchema = z.record(z.string(), overrideValue);

/** Overrides as stored, checked: each a field a brand may set. */
export function checkedOverrides(value: unknown): BrandOverrides {
  const parsed = overridesSchema.safeParse(value);
  if (!parsed.success) throw new PolicyInputError('overrides', 'must be an object of field paths and values');
  for (const path of Object.keys(parsed.data)) checkOverridable(path);
  return parsed.data;
}

/** The operator's policy with `overrides` on it, checked by the policy's schema. */
export function withOverrides(operator: Policy, overrides: BrandOverrides): Policy {
  const next = structuredClone(operator) as unknown as Record<string, unknown>;
  for (const [path, value] of Object.entries(overrides)) {
    checkOverridable(path);
    const keys = path.split('.');
    const last = keys.pop() as string;
    let node = next;
    for (const k of keys) node = node[k] as Record<string, unknown>;
    node[last] = structuredClone(value);
  }
  return checkedPolicy(next);
}

/** The policy's value at `path`, as an override holds it. */
export function overrideOf(policy: Policy, path: string): OverrideValue {
  let node: unknown = policy;
  for (const k of path.split('.')) node = (node as Record<string, unknown>)[k];
  return Array.isArray(node) ? [...(node as string[])] : (node as PolicyValue);
}

/** A brand's newest overrides, as a store holds them. */
export interface BrandPolicyVersion {
  brand: string;
  version: number;
  overrides: BrandOverrides;
}

/**
 * The policy in force for a brand: the operator's version in force with the brand's overrides on
 * it, naming both versions; without overrides, the operator's exactly.
 */
export function brandPolicyInForce(operator: PolicyInForce, brand?: BrandPolicyVersion): PolicyInForce {
  if (!brand) return { version: operator.version, policy: operator.policy };
  return {
    version: operator.version,
    policy: withOverrides(operator.policy, brand.overrides),
    brandPolicyVersion: brand.version,
  };
}

/** The versions a decision records: the operator's, and the brand's overrides' when it has any. */
export const decidedUnder = ({ version, brandPolicyVersion }: PolicyInForce) => ({
  policyVersion: version,
  ...(brandPolicyVersion === undefined ? {} : { brandPolicyVersion }),
});
