import { type Policy, policySchema } from './schema';

// What a change of the policy changes, field by field, and which of those loosen a money limit
// (docs/policy.md, Four eyes): a loosening waits for a second admin, a tightening applies at once.

/** A leaf of the policy: its dotted path and value. */
export type PolicyValue = boolean | number | string;

export interface PolicyFieldChange {
  path: string;
  old: PolicyValue;
  new: PolicyValue;
  /** Whether this change loosens a money limit (a second admin must approve it). */
  loosens: boolean;
}

/**
 * Every leaf of a policy, by dotted path, in the schema's order. A list (the deposits' routing)
 * is one leaf, its items joined by commas, as it is typed back (applyAssignments).
 */
export function policyFields(policy: Policy): Array<[string, PolicyValue]> {
  const out: Array<[string, PolicyValue]> = [];
  const walk = (prefix: string, value: unknown) => {
    if (Array.isArray(value)) out.push([prefix, value.join(',')]);
    else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) walk(prefix ? `${prefix}.${k}` : k, v);
    } else out.push([prefix, value as PolicyValue]);
  };
  walk('', policy);
  return out;
}

/** The fields that must stay on: true → false loosens. */
const STAYS_ON = new Set([
  'deposits.requireVerified',
  'deposits.holdThirdParty',
  'withdrawals.requireVerified',
  'withdrawals.requireOwnPayeeAccount',
  'withdrawals.stepUpNewAccount',
  'eligibility.failClosed',
]);

/** Limits where more lets more money through: up loosens. */
const HIGHER_LOOSENS = new Set([
  'withdrawals.dailyLimitCentavos',
  'withdrawals.kycMaxAgeMs',
  'eligibility.freshMs',
]);

/** Thresholds where 0 turns the control off: up, or to 0, loosens (from 0 to any is tightening). */
const THRESHOLD_OR_OFF = new Set(['withdrawals.stepUpAboveCentavos', 'payouts.approvalAboveCentavos']);

// Not loosenings, whichever way they go: the deposits' routing and its breaker (which provider
// makes a charge, and when one is skipped as down, change neither who may move money nor how
// much), and the automatic return of a held third party's deposit (the money goes back only to
// the account it came from, through the connector that received it: none reaches anyone new).

/** Whether changing `path` from `old` to `now` loosens a money limit. */
export function loosens(path: string, old: PolicyValue, now: PolicyValue): boolean {
  if (STAYS_ON.has(path)) return old === true && now === false;
  if (HIGHER_LOOSENS.has(path)) return (now as number) > (old as number);
  if (THRESHOLD_OR_OFF.has(path)) {
    const o = old as number;
    const n = now as number;
    if (o === 0) return false;
    return n === 0 || n > o;
  }
  if (path === 'payouts.approvers') return (now as number) < (old as number);
  if (path === 'payouts.authorizationOnNoAnswer') return old === 'deny' && now === 'approve';
  return false;
}

/** The fields `after` changes from `before`, in the schema's order. */
export function diffPolicies(before: Policy, after: Policy): PolicyFieldChange[] {
  const old = new Map(policyFields(before));
  return policyFields(after).flatMap(([path, value]) => {
    const was = old.get(path) as PolicyValue;
    return was === value ? [] : [{ path, old: was, new: value, loosens: loosens(path, was, value) }];
  });
}

/** A problem with a proposed change, naming the field (`path`) it is about. */
export class PolicyInputError extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field}: ${problem}`);
  }
}

const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000 } as const;

/** A value as typed for `path` (whose current value is `was`): its type's, or an error naming it. */
function typedValue(path: string, was: PolicyValue, text: string): PolicyValue {
  const t = text.trim();
  if (typeof was === 'boolean') {
    if (t === 'true' || t === 'false') return t === 'true';
    throw new PolicyInputError(path, 'must be true or false');
  }
  if (typeof was === 'number') {
    // A duration may be written as it was in the environment: 30d, 12h, 90m, 45s.
    const unit = /^(\d+)(d|h|m|s)$/.exec(t);
    if (unit && path.endsWith('Ms')) return Number(unit[1]) * UNIT_MS[unit[2] as keyof typeof UNIT_MS];
    if (!/^-?\d+(\.\d+)?$/.test(t))
      throw new PolicyInputError(
        path,
        path.endsWith('Ms') ? 'must be milliseconds or 30d, 12h, 90m, 45s' : 'must be a number',
      );
    return Number(t);
  }
  return t;
}

/** A list as typed: comma-separated, spaces around each item dropped. */
const listValue = (text: string): string[] =>
  text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

/**
 * The policy with each `path=value` applied, checked by the policy's schema; a problem names the
 * field. Nothing is changed on a problem.
 */
export function applyAssignments(current: Policy, assignments: ReadonlyArray<[string, string]>): Policy {
  const fields = new Map(policyFields(current));
  const next = structuredClone(current) as unknown as Record<string, Record<string, unknown>>;
  for (const [path, text] of assignments) {
    const was = fields.get(path);
    if (was === undefined) throw new PolicyInputError(path, 'is not a field of the policy');
    const keys = path.split('.');
    const last = keys.pop() as string;
    let node: Record<string, unknown> = next;
    for (const k of keys) node = node[k] as Record<string, unknown>;
    node[last] = Array.isArray(node[last]) ? listValue(text) : typedValue(path, was, text);
  }
  return checkedPolicy(next);
}

/** A policy as given, checked by its schema: a problem names the first wrong field. */
export function checkedPolicy(value: unknown): Policy {
  const parsed = policySchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  // A list's item names the list: it is one field (policyFields).
  const field = issue?.path.filter((k) => typeof k === 'string').join('.');
  throw new PolicyInputError(field || 'policy', issue?.message ?? 'is not a policy');
}

/** `path=value` arguments, split; a malformed one is an error naming it. */
export function parseAssignments(args: readonly string[]): Array<[string, string]> {
  return args.map((a) => {
    const at = a.indexOf('=');
    if (at <= 0)
      throw new PolicyInputError(
        a,
        'must be written path=value, e.g. withdrawals.dailyLimitCentavos=2000000',
      );
    return [a.slice(0, at).trim(), a.slice(at + 1)];
  });
}

/** A value as shown in a diff. */
export const shownValue = (v: PolicyValue) => (typeof v === 'string' ? v : String(v));
