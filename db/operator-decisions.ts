import { createHash, randomUUID } from 'node:crypto';
import type pg from 'pg';

// Decisions that move money or decide a person, recorded by the side that authenticated the
// operator before the flow is sent them (operator_decisions, append-only), and the flows' checks
// of them: each taken once (operator_decision_uses), each refusal counted (refused_decisions).

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** What a decision decides (the table's CHECK; contracts/decision.ts names the same for the flows). */
export type DecisionKind =
  | 'withdrawal.decision'
  | 'deposit.resolution'
  | 'onboarding.review'
  | 'deposit.return';

export interface NewDecision {
  workflowId: string;
  kind: DecisionKind;
  decision: string;
  reason?: string | undefined;
  operatorId: number | null;
  operatorEmail: string;
  operatorRole: string;
  /** How the operator was authenticated: `session:<hash>` or `api_key:<id>`, never a secret. */
  authenticatedBy: string;
}

/** A back-office session as a decision names it: a digest of its id, never the id. */
export const sessionRef = (sessionId: string) =>
  `session:${createHash('sha256').update(sessionId).digest('hex').slice(0, 24)}`;

/** An API key as a decision names it: the principal's id (a record's id, or a digest prefix). */
export const apiKeyRef = (principalId: string) => `api_key:${principalId}`;

/**
 * A decision taken through the API: the caller names who decided (`by`), and the key that was
 * checked is what the flow reads back as its proof. Its id.
 */
export function recordApiKeyDecision(
  db: Queryable,
  principalId: string,
  d: { workflowId: string; kind: DecisionKind; decision: string; reason?: string | undefined; by: string },
): Promise<string> {
  return recordDecision(db, {
    workflowId: d.workflowId,
    kind: d.kind,
    decision: d.decision,
    reason: d.reason,
    operatorId: null,
    operatorEmail: d.by,
    operatorRole: 'api_key',
    authenticatedBy: apiKeyRef(principalId),
  });
}

export interface RecordedDecision {
  id: string;
  workflowId: string;
  kind: string;
  decision: string;
  reason: string | null;
  operatorEmail: string;
  operatorRole: string;
}

/**
 * Records a decision and answers its id, which the update or signal carries. Written on the pool
 * (committed at once), never inside a transaction still open: the worker must read it.
 */
export async function recordDecision(db: Queryable, d: NewDecision): Promise<string> {
  const id = randomUUID();
  await db.query(
    `INSERT INTO operator_decisions (id, workflow_id, kind, decision, reason, operator_id, operator_email,
                                     operator_role, authenticated_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      id,
      d.workflowId,
      d.kind,
      d.decision,
      d.reason?.trim() || null,
      d.operatorId,
      d.operatorEmail.toLowerCase(),
      d.operatorRole,
      d.authenticatedBy,
    ],
  );
  return id;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function findDecision(db: Queryable, id: string): Promise<RecordedDecision | undefined> {
  if (!UUID.test(id)) return undefined;
  const { rows } = await db.query(
    `SELECT id, workflow_id, kind, decision, reason, operator_email, operator_role
       FROM operator_decisions WHERE id = $1`,
    [id],
  );
  const r = rows[0];
  return r
    ? {
        id: r.id,
        workflowId: r.workflow_id,
        kind: r.kind,
        decision: r.decision,
        reason: r.reason,
        operatorEmail: r.operator_email,
        operatorRole: r.operator_role,
      }
    : undefined;
}

/** Where a check runs: the flow run and its local activity, the same on a retried check. */
export interface CheckSite {
  workflowId: string;
  runId: string;
  activityId: string;
}

/**
 * Takes a decision for this check: true when it is this check's (first use, or this same check
 * retried), false when another check took it before.
 */
export async function useDecision(db: Queryable, id: string, at: CheckSite): Promise<boolean> {
  const { rows } = await db.query(
    `WITH taken AS (
       INSERT INTO operator_decision_uses (decision_id, workflow_id, run_id, activity_id)
       VALUES ($1, $2, $3, $4) ON CONFLICT (decision_id) DO NOTHING RETURNING run_id, activity_id)
     SELECT run_id, activity_id FROM taken
      UNION ALL
     SELECT run_id, activity_id FROM operator_decision_uses WHERE decision_id = $1`,
    [id, at.workflowId, at.runId, at.activityId],
  );
  const r = rows[0];
  return r !== undefined && r.run_id === at.runId && r.activity_id === at.activityId;
}

/** Counts a refused decision, once per check. */
export async function recordRefusedDecision(
  db: Queryable,
  at: CheckSite,
  kind: DecisionKind | 'withdrawal.step_up',
  cause: string,
): Promise<void> {
  await db.query(
    `INSERT INTO refused_decisions (workflow_id, run_id, activity_id, kind, cause)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (run_id, activity_id) DO NOTHING`,
    [at.workflowId, at.runId, at.activityId, kind, cause],
  );
}

/** How many decisions the flow refused, by cause. */
export async function refusedDecisionsOf(db: Queryable, workflowId: string): Promise<Record<string, number>> {
  const { rows } = await db.query(
    'SELECT cause, count(*)::int AS n FROM refused_decisions WHERE workflow_id = $1 GROUP BY cause',
    [workflowId],
  );
  return Object.fromEntries(rows.map((r) => [r.cause as string, r.n as number]));
}
