import { type ActionOutcome, type OperatorActionName, recordAction } from '../db/operator-actions';
import {
  type BrandPolicyVersionRow,
  brandExists,
  decideBrandPolicyChange,
  getBrandPolicyChange,
  insertBrandPolicyChange,
  insertBrandPolicyVersion,
  lockBrandPolicyVersions,
  lockPolicyVersions,
  type PolicyVersionRow,
} from '../db/policy';
import { inTransaction, type Pool } from '../db/pool';
import {
  type BrandOverrides,
  checkBrandOfOverrides,
  checkedOverrides,
  checkOverridable,
  overrideOf,
  withOverrides,
} from './brand';
import {
  checkedReason,
  MAX_REASON_LENGTH,
  type PolicyActor,
  PolicyChangeRefused,
  policyOfRow,
} from './changes';
import { applyAssignments, diffPolicies, PolicyInputError, type PolicyValue, policyFields } from './diff';
import type { Policy } from './schema';

// Changing a brand's rules (docs/policy.md, Rules of a brand): as the operator's policy changes,
// with a reason, audited, four eyes on a loosening, but over the brand's own overrides. A change
// sets fields (an override) or gives them back to the operator's policy (inherit). Whether it
// loosens is judged on the brand's policy in force before and after, so taking back an override
// that was tighter than the operator's is a loosening too.

/** One field of a brand's change: its value in force before and after, and whether each was the brand's. */
export interface BrandFieldChange {
  path: string;
  old: PolicyValue;
  new: PolicyValue;
  /** Whether the brand set it before (else the operator's applied). */
  wasOverride: boolean;
  /** Whether the brand sets it after. */
  override: boolean;
  loosens: boolean;
}

export type BrandProposalOutcome =
  | { kind: 'applied'; version: number; changes: BrandFieldChange[] }
  | { kind: 'pending'; changeId: number; changes: BrandFieldChange[] };

/** The fields whose value in force or whose owner (the brand, the operator) `after` changes. */
export function brandChanges(
  operator: Policy,
  before: BrandOverrides,
  after: BrandOverrides,
): BrandFieldChange[] {
  const was = withOverrides(operator, before);
  const now = withOverrides(operator, after);
  const loosening = new Map(diffPolicies(was, now).map((c) => [c.path, c.loosens]));
  const oldValues = new Map(policyFields(was));
  return policyFields(now).flatMap(([path, value]) => {
    const old = oldValues.get(path) as PolicyValue;
    const wasOverride = path in before;
    const override = path in after;
    if (old === value && wasOverride === override) return [];
    return [{ path, old, new: value, wasOverride, override, loosens: loosening.get(path) ?? false }];
  });
}

/**
 * The overrides after `set` (path=value, as the CLI types them) and `inherit` (paths given back to
 * the operator's policy); a field a brand may not set is an error naming it, nothing changed.
 */
export function nextOverrides(
  operator: Policy,
  current: BrandOverrides,
  change: { set: ReadonlyArray<[string, string]>; inherit: readonly string[] },
): BrandOverrides {
  for (const [path] of change.set) checkOverridable(path);
  for (const path of change.inherit) checkOverridable(path);
  const typed = applyAssignments(withOverrides(operator, current), change.set);
  const next: BrandOverrides = { ...current };
  for (const [path] of change.set) next[path] = overrideOf(typed, path);
  for (const path of change.inherit) {
    if (!(path in next))
      throw new PolicyInputError(path, "is not set by the brand: it follows the operator's policy already");
    delete next[path];
  }
  return next;
}

const audit = (
  db: Parameters<typeof recordAction>[0],
  actor: PolicyActor,
  action: OperatorActionName,
  outcome: ActionOutcome,
  fields: { caseId?: string; before?: unknown; after?: unknown; reason?: string },
) => recordAction(db, { ...actor, action, outcome, caseType: 'brand-policy', ...fields });

const forAudit = (brand: string, changes: BrandFieldChange[]) => ({
  brand,
  changes: changes.map((c) => ({
    path: c.path,
    old: c.old,
    new: c.new,
    override: c.override,
    loosens: c.loosens,
  })),
});

const overridesOfRow = (row: BrandPolicyVersionRow | undefined): BrandOverrides =>
  row ? checkedOverrides(row.overrides) : {};

/** The operator's version in force, held until commit so no operator change lands between judging and writing. */
async function operatorInForce(client: Parameters<typeof lockPolicyVersions>[0]): Promise<PolicyVersionRow> {
  const operator = await lockPolicyVersions(client);
  if (!operator)
    throw new PolicyChangeRefused(
      'no_policy',
      'no policy version yet: a pixflow process seeds version 1 when it starts',
    );
  return operator;
}

/**
 * Changes brand `brand`'s overrides: `set` fields, `inherit` others back. Refused, nothing written:
 * the default brand (its rules are the operator's), a field a brand may not set (the person's, the
 * operator's), a brand that does not exist, a change that changes nothing, and, when the proposer
 * says which versions they saw (`baseVersion`, the brand's, 0 before it had rules of its own;
 * `baseOperatorVersion`), a version of either that came meanwhile (stale). A loosening waits for
 * a second admin; anything else is the brand's next version at once.
 */
export async function proposeBrandPolicyChange(
  pool: Pool,
  actor: PolicyActor,
  p: {
    brand: string;
    set: ReadonlyArray<[string, string]>;
    inherit: readonly string[];
    reason: string | undefined;
    baseVersion?: number;
    baseOperatorVersion?: number;
  },
): Promise<BrandProposalOutcome> {
  checkBrandOfOverrides(p.brand);
  const reason = checkedReason(p.reason);
  for (const [path] of p.set) checkOverridable(path);
  for (const path of p.inherit) checkOverridable(path);
  return inTransaction(pool, async (client) => {
    if (!(await brandExists(client, p.brand)))
      throw new PolicyChangeRefused('not_found', `no brand ${p.brand}`);
    const current = await lockBrandPolicyVersions(client, p.brand);
    const operator = await operatorInForce(client);
    const baseVersion = current?.version ?? 0;
    // Checked under both locks, so the change is judged over the versions the proposer saw.
    if (
      (p.baseVersion !== undefined && p.baseVersion !== baseVersion) ||
      (p.baseOperatorVersion !== undefined && p.baseOperatorVersion !== operator.version)
    )
      throw new PolicyChangeRefused(
        'stale',
        `brand ${p.brand} is at version ${baseVersion} and the operator's policy at ${operator.version} now, not ${p.baseVersion ?? baseVersion} and ${p.baseOperatorVersion ?? operator.version}: look at them again before changing them`,
      );
    const base = policyOfRow(operator);
    const before = overridesOfRow(current);
    const after = nextOverrides(base, before, p);
    const changes = brandChanges(base, before, after);
    if (changes.length === 0)
      throw new PolicyInputError('policy', `changes nothing: every field of brand ${p.brand} is as in force`);
    if (changes.some((c) => c.loosens)) {
      const changeId = await insertBrandPolicyChange(client, {
        brand: p.brand,
        baseVersion,
        baseOperatorVersion: operator.version,
        overrides: after,
        reason,
        proposedBy: actor.operatorEmail,
      });
      await audit(client, actor, 'policy.propose', 'done', {
        caseId: `brand-policy-change-${changeId}`,
        before: { brand: p.brand, version: baseVersion, operatorVersion: operator.version },
        after: forAudit(p.brand, changes),
        reason,
      });
      return { kind: 'pending', changeId, changes };
    }
    const version = baseVersion + 1;
    await insertBrandPolicyVersion(client, {
      brand: p.brand,
      version,
      overrides: after,
      reason,
      changedBy: actor.operatorEmail,
    });
    await audit(client, actor, 'policy.change', 'done', {
      caseId: `brand-policy-${p.brand}-v${version}`,
      before: { brand: p.brand, version: baseVersion, operatorVersion: operator.version },
      after: { version, ...forAudit(p.brand, changes) },
      reason,
    });
    return { kind: 'applied', version, changes };
  });
}

const sameAdmin = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();

async function refused(
  pool: Pool,
  actor: PolicyActor,
  action: 'policy.approve' | 'policy.reject',
  id: number,
  err: PolicyChangeRefused,
): Promise<never> {
  await audit(pool, actor, action, err.kind === 'same_admin' ? 'refused' : 'conflict', {
    caseId: `brand-policy-change-${id}`,
    reason: err.message,
  });
  throw err;
}

/** A pending change of brand `brand`, held for this transaction; refused unless it is one. */
async function pendingChangeOf(
  client: Parameters<typeof getBrandPolicyChange>[0],
  id: number,
  brand: string,
) {
  const change = await getBrandPolicyChange(client, id, true);
  if (!change || change.brand !== brand)
    throw new PolicyChangeRefused('not_found', `no policy change ${id} of brand ${brand}`);
  if (change.status !== 'pending')
    throw new PolicyChangeRefused('not_pending', `policy change ${id} is ${change.status} already`);
  return change;
}

/**
 * A second admin approves a brand's pending change: it becomes the brand's next version, named
 * for both. Refused for its proposer, and when the brand's or the operator's version changed
 * since it was proposed (its diff would not be what is approved).
 */
export async function approveBrandPolicyChange(
  pool: Pool,
  actor: PolicyActor,
  brand: string,
  id: number,
): Promise<{ version: number; changes: BrandFieldChange[] }> {
  try {
    return await inTransaction(pool, async (client) => {
      const change = await pendingChangeOf(client, id, brand);
      if (sameAdmin(change.proposedBy, actor.operatorEmail))
        throw new PolicyChangeRefused(
          'same_admin',
          'the admin who proposed a change may not approve it: a second, different admin must',
        );
      const current = await lockBrandPolicyVersions(client, brand);
      const operator = await operatorInForce(client);
      if ((current?.version ?? 0) !== change.baseVersion || operator.version !== change.baseOperatorVersion)
        throw new PolicyChangeRefused(
          'stale',
          `policy change ${id} was proposed over brand ${brand}'s version ${change.baseVersion} and the operator's version ${change.baseOperatorVersion}; brand ${brand} is at ${current?.version ?? 0} and the operator at ${operator.version} now: reject it and propose it again`,
        );
      const overrides = checkedOverrides(change.overrides);
      const changes = brandChanges(policyOfRow(operator), overridesOfRow(current), overrides);
      const version = change.baseVersion + 1;
      await insertBrandPolicyVersion(client, {
        brand,
        version,
        overrides,
        reason: change.reason,
        changedBy: change.proposedBy,
        approvedBy: actor.operatorEmail,
      });
      await decideBrandPolicyChange(client, id, {
        status: 'applied',
        decidedBy: actor.operatorEmail,
        version,
      });
      await audit(client, actor, 'policy.approve', 'done', {
        caseId: `brand-policy-change-${id}`,
        before: { brand, version: change.baseVersion, operatorVersion: operator.version },
        after: { version, ...forAudit(brand, changes) },
        reason: change.reason,
      });
      return { version, changes };
    });
  } catch (err) {
    if (err instanceof PolicyChangeRefused) return refused(pool, actor, 'policy.approve', id, err);
    throw err;
  }
}

/** Rejects a brand's pending change (its proposer may withdraw it); nothing else changes. */
export async function rejectBrandPolicyChange(
  pool: Pool,
  actor: PolicyActor,
  brand: string,
  id: number,
  note?: string,
): Promise<void> {
  try {
    await inTransaction(pool, async (client) => {
      await pendingChangeOf(client, id, brand);
      await decideBrandPolicyChange(client, id, { status: 'rejected', decidedBy: actor.operatorEmail });
      await audit(client, actor, 'policy.reject', 'done', {
        caseId: `brand-policy-change-${id}`,
        before: { brand, status: 'pending' },
        after: { brand, status: 'rejected' },
        ...(note?.trim() ? { reason: note.trim().slice(0, MAX_REASON_LENGTH) } : {}),
      });
    });
  } catch (err) {
    if (err instanceof PolicyChangeRefused) return refused(pool, actor, 'policy.reject', id, err);
    throw err;
  }
}
