import { type ActionOutcome, type OperatorActionName, recordAction } from '../db/operator-actions';
import {
  decidePolicyChange,
  getPolicyChange,
  insertPolicyChange,
  insertPolicyVersion,
  lockPolicyVersions,
  type PolicyChangeRow,
  type PolicyVersionRow,
} from '../db/policy';
import { inTransaction, type Pool } from '../db/pool';
import {
  applyAssignments,
  checkedPolicy,
  diffPolicies,
  type PolicyFieldChange,
  PolicyInputError,
  parseAssignments,
} from './diff';
import type { Policy } from './schema';

// Changing the policy (docs/policy.md): a change names a reason and is audited; one that loosens a
// money limit waits for a second, different admin (four eyes, as large payouts have); a tightening
// is a new version at once. Only admins change it: the back office and the CLI check the role.

/** Who changes the policy, as the audit trail names them. */
export interface PolicyActor {
  operatorId: number | null;
  operatorEmail: string;
  operatorRole: string | null;
}

/** Why a change or a decision on one was not taken; `field` names what it is about. */
export class PolicyChangeRefused extends Error {
  constructor(
    readonly kind: 'no_policy' | 'not_found' | 'not_pending' | 'same_admin' | 'stale',
    message: string,
  ) {
    super(message);
  }
}

export type ProposalOutcome =
  | { kind: 'applied'; version: number; changes: PolicyFieldChange[] }
  | { kind: 'pending'; changeId: number; baseVersion: number; changes: PolicyFieldChange[] };

export const MAX_REASON_LENGTH = 500;

/** A change's reason: required, trimmed, bounded. */
export function checkedReason(reason: string | undefined): string {
  const r = (reason ?? '').trim();
  if (!r) throw new PolicyInputError('reason', 'is required: say why the rules change');
  if (r.length > MAX_REASON_LENGTH)
    throw new PolicyInputError('reason', `must be at most ${MAX_REASON_LENGTH} characters`);
  return r;
}

const sameAdmin = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();

/** The version in force as a policy (checked: a row written by hand that is no policy fails here). */
export const policyOfRow = (row: PolicyVersionRow): Policy => checkedPolicy(row.policy);

/** A change's diff against the version it was proposed over. */
export const changesOf = (base: PolicyVersionRow, change: Pick<PolicyChangeRow, 'policy'>) =>
  diffPolicies(policyOfRow(base), checkedPolicy(change.policy));

async function audit(
  db: Parameters<typeof recordAction>[0],
  actor: PolicyActor,
  action: OperatorActionName,
  outcome: ActionOutcome,
  fields: { caseId?: string; before?: unknown; after?: unknown; reason?: string },
) {
  await recordAction(db, { ...actor, action, outcome, caseType: 'policy', ...fields });
}

const diffForAudit = (changes: PolicyFieldChange[]) =>
  changes.map((c) => ({ path: c.path, old: c.old, new: c.new, loosens: c.loosens }));

/**
 * Proposes `policy` in place of the version in force (`baseVersion`, when the proposer saw one:
 * refused if another version came meanwhile). Nothing changed is an error naming the policy; a
 * loosening waits for a second admin, anything else is the next version at once.
 */
export async function proposePolicyChange(
  pool: Pool,
  actor: PolicyActor,
  proposal: { policy: unknown; reason: string | undefined; baseVersion?: number },
): Promise<ProposalOutcome> {
  const policy = checkedPolicy(proposal.policy);
  const reason = checkedReason(proposal.reason);
  return inTransaction(pool, async (client) => {
    const current = await lockPolicyVersions(client);
    if (!current)
      throw new PolicyChangeRefused(
        'no_policy',
        'no policy version yet: a pixflow process seeds version 1 when it starts',
      );
    if (proposal.baseVersion !== undefined && proposal.baseVersion !== current.version)
      throw new PolicyChangeRefused(
        'stale',
        `the policy is at version ${current.version} now, not ${proposal.baseVersion}: look at it again before changing it`,
      );
    const changes = diffPolicies(policyOfRow(current), policy);
    if (changes.length === 0)
      throw new PolicyInputError('policy', 'changes nothing: every field is as in force');
    const before = { version: current.version };
    if (changes.some((c) => c.loosens)) {
      const changeId = await insertPolicyChange(client, {
        baseVersion: current.version,
        policy,
        reason,
        proposedBy: actor.operatorEmail,
      });
      await audit(client, actor, 'policy.propose', 'done', {
        caseId: `policy-change-${changeId}`,
        before,
        after: { changes: diffForAudit(changes) },
        reason,
      });
      return { kind: 'pending', changeId, baseVersion: current.version, changes };
    }
    const version = current.version + 1;
    await insertPolicyVersion(client, { version, policy, reason, changedBy: actor.operatorEmail });
    await audit(client, actor, 'policy.change', 'done', {
      caseId: `policy-v${version}`,
      before,
      after: { version, changes: diffForAudit(changes) },
      reason,
    });
    return { kind: 'applied', version, changes };
  });
}

/** Records a refused decision in the audit trail, outside the refused transaction. */
async function refusedDecision(
  pool: Pool,
  actor: PolicyActor,
  action: 'policy.approve' | 'policy.reject',
  id: number,
  err: PolicyChangeRefused,
): Promise<never> {
  await audit(pool, actor, action, err.kind === 'same_admin' ? 'refused' : 'conflict', {
    caseId: `policy-change-${id}`,
    reason: err.message,
  });
  throw err;
}

/**
 * Proposes `path=value` assignments (as the CLI and the back office take them) over `current`, the
 * version the proposer saw; `baseVersion` defaults to it, so a version that came meanwhile refuses
 * the change as stale.
 */
export function proposeAssignments(
  pool: Pool,
  actor: PolicyActor,
  p: {
    current: PolicyVersionRow;
    assignments: readonly string[];
    reason: string | undefined;
    baseVersion?: number;
  },
): Promise<ProposalOutcome> {
  const policy = applyAssignments(policyOfRow(p.current), parseAssignments(p.assignments));
  return proposePolicyChange(pool, actor, {
    policy,
    reason: p.reason,
    baseVersion: p.baseVersion ?? p.current.version,
  });
}

/**
 * A second admin approves a pending change: it becomes the next version, named for both. Refused
 * for its proposer (four eyes), for a change no longer pending, and for one proposed over a
 * version that is no longer in force (its diff would not be what was approved).
 */
export async function approvePolicyChange(
  pool: Pool,
  actor: PolicyActor,
  id: number,
): Promise<{ version: number; changes: PolicyFieldChange[] }> {
  try {
    return await inTransaction(pool, async (client) => {
      const change = await getPolicyChange(client, id, true);
      if (!change) throw new PolicyChangeRefused('not_found', `no policy change ${id}`);
      if (change.status !== 'pending')
        throw new PolicyChangeRefused('not_pending', `policy change ${id} is ${change.status} already`);
      if (sameAdmin(change.proposedBy, actor.operatorEmail))
        throw new PolicyChangeRefused(
          'same_admin',
          'the admin who proposed a change may not approve it: a second, different admin must',
        );
      const current = await lockPolicyVersions(client);
      if (!current || current.version !== change.baseVersion)
        throw new PolicyChangeRefused(
          'stale',
          `policy change ${id} was proposed over version ${change.baseVersion}, and version ${current?.version} is in force now: reject it and propose it again`,
        );
      const base = current;
      const changes = changesOf(base, change);
      const version = base.version + 1;
      await insertPolicyVersion(client, {
        version,
        policy: change.policy,
        reason: change.reason,
        changedBy: change.proposedBy,
        approvedBy: actor.operatorEmail,
      });
      await decidePolicyChange(client, id, { status: 'applied', decidedBy: actor.operatorEmail, version });
      await audit(client, actor, 'policy.approve', 'done', {
        caseId: `policy-change-${id}`,
        before: { version: base.version },
        after: { version, changes: diffForAudit(changes) },
        reason: change.reason,
      });
      return { version, changes };
    });
  } catch (err) {
    if (err instanceof PolicyChangeRefused) return refusedDecision(pool, actor, 'policy.approve', id, err);
    throw err;
  }
}

/** Rejects a pending change (its proposer may withdraw it); nothing else changes. */
export async function rejectPolicyChange(
  pool: Pool,
  actor: PolicyActor,
  id: number,
  note?: string,
): Promise<void> {
  try {
    await inTransaction(pool, async (client) => {
      const change = await getPolicyChange(client, id, true);
      if (!change) throw new PolicyChangeRefused('not_found', `no policy change ${id}`);
      if (change.status !== 'pending')
        throw new PolicyChangeRefused('not_pending', `policy change ${id} is ${change.status} already`);
      await decidePolicyChange(client, id, { status: 'rejected', decidedBy: actor.operatorEmail });
      await audit(client, actor, 'policy.reject', 'done', {
        caseId: `policy-change-${id}`,
        before: { status: 'pending' },
        after: { status: 'rejected' },
        ...(note?.trim() ? { reason: note.trim().slice(0, MAX_REASON_LENGTH) } : {}),
      });
    });
  } catch (err) {
    if (err instanceof PolicyChangeRefused) return refusedDecision(pool, actor, 'policy.reject', id, err);
    throw err;
  }
}
