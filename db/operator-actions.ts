import type pg from 'pg';

// The audit trail: every operator action, appended and never changed (a trigger refuses
// UPDATE, DELETE and TRUNCATE on the table).

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

type ActionOutcome = 'done' | 'refused' | 'conflict' | 'failed';

export interface NewOperatorAction {
  operatorId: number | null;
  operatorEmail: string;
  operatorRole: string | null;
  action: string;
  outcome: ActionOutcome;
  caseType?: string;
  caseId?: string;
  before?: unknown;
  after?: unknown;
  reason?: string;
}

export interface OperatorAction {
  id: number;
  at: string;
  operatorEmail: string;
  operatorRole: string | null;
  action: string;
  outcome: ActionOutcome;
  caseType: string | null;
  caseId: string | null;
  before: unknown;
  after: unknown;
  reason: string | null;
}

export async function recordAction(db: Queryable, a: NewOperatorAction): Promise<void> {
  await db.query(
    `INSERT INTO operator_actions (operator_id, operator_email, operator_role, action, outcome,
                                   case_type, case_id, before, after, reason)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      a.operatorId,
      a.operatorEmail,
      a.operatorRole,
      a.action,
      a.outcome,
      a.caseType ?? null,
      a.caseId ?? null,
      a.before === undefined ? null : JSON.stringify(a.before),
      a.after === undefined ? null : JSON.stringify(a.after),
      a.reason ?? null,
    ],
  );
}

export interface ActionFilter {
  /** One case's actions; all when absent. */
  caseIds?: string[];
  /** Newest first when listing a page; oldest first for an export. */
  order: 'newest' | 'oldest';
  limit: number;
}

export async function listActions(db: Queryable, f: ActionFilter): Promise<OperatorAction[]> {
  const { rows } = await db.query(
    `SELECT * FROM operator_actions
      WHERE $1::text[] IS NULL OR case_id = ANY($1::text[])
      ORDER BY id ${f.order === 'newest' ? 'DESC' : 'ASC'} LIMIT $2`,
    [f.caseIds ?? null, f.limit],
  );
  return rows.map((r) => ({
    id: r.id,
    at: (r.at as Date).toISOString(),
    operatorEmail: r.operator_email,
    operatorRole: r.operator_role,
    action: r.action,
    outcome: r.outcome,
    caseType: r.case_type,
    caseId: r.case_id,
    before: r.before,
    after: r.after,
    reason: r.reason,
  }));
}
