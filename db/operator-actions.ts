import type pg from 'pg';

// The audit trail: every operator action, appended and never changed (a trigger refuses
// UPDATE, DELETE and TRUNCATE on the table).

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** Every action the audit trail records: the back office's and the operator CLI's. */
export const operatorActionNames = [
  'sign_in',
  'sign_out',
  'onboarding.review',
  'onboarding.approve',
  'onboarding.refuse',
  'deposit.resolution',
  'deposit.accept',
  'deposit.return',
  'audit.export',
  'api_key.create',
  'api_key.rotate',
  'api_key.revoke',
  'customer.close',
  'customer.reinstate',
  'alert.review',
  'alert.report',
  'alert.export',
  'withdrawal.decision',
  'withdrawal.approve',
  'withdrawal.refuse',
  'policy.change',
  'policy.propose',
  'policy.approve',
  'policy.reject',
  'brand.create',
  'brand.update',
  'brand.account.set',
  'brand.account.remove',
  'operator.brand.grant',
  'operator.brand.revoke',
] as const;
export type OperatorActionName = (typeof operatorActionNames)[number];

/** The reasons pixflow itself writes on a row (an operator's decision carries their own words). */
export const auditReasons = ['sign_in_rate_limited'] as const;
export type AuditReason = (typeof auditReasons)[number];

/** done: it took effect; refused: the role may not; conflict: the case was no longer open to it; failed: the flow did not take it. */
export const actionOutcomes = ['done', 'refused', 'conflict', 'failed'] as const;
export type ActionOutcome = (typeof actionOutcomes)[number];

export interface NewOperatorAction {
  operatorId: number | null;
  operatorEmail: string;
  operatorRole: string | null;
  action: OperatorActionName;
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
  /** Whose: the operator's address holds this, whatever its case. */
  operatorEmail?: string;
  action?: OperatorActionName;
  outcome?: ActionOutcome;
  /** At or after. */
  from?: Date;
  /** Before. */
  until?: Date;
  /** Keyset paging by id: rows older than this one (newest first)... */
  beforeId?: string;
  /** ...or newer than this one (still answered newest first). */
  afterId?: string;
  /** Newest first when listing a page; oldest first for an export. */
  order: 'newest' | 'oldest';
  limit: number;
  /** Only rows about these brands or about none (db/operator-brands.ts); every row when absent. */
  brands?: string[] | null;
}

/** `LIKE` reads % and _ as wildcards: a typed one is taken literally. */
const likeLiteral = (v: string) => v.replace(/[\\%_]/g, (c) => `\\${c}`);

// biome-ignore lint/suspicious/noExplicitAny: a pg row
const actionOf = (r: any): OperatorAction => ({
  id: Number(r.id),
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
});

export async function listActions(db: Queryable, f: ActionFilter): Promise<OperatorAction[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: (p: string) => string, value: unknown) => {
    params.push(value);
    where.push(sql(`$${params.length}`));
  };
  if (f.caseIds) add((p) => `case_id = ANY(${p}::text[])`, f.caseIds);
  if (f.operatorEmail) add((p) => `operator_email ILIKE '%' || ${p} || '%'`, likeLiteral(f.operatorEmail));
  if (f.action) add((p) => `action = ${p}`, f.action);
  if (f.outcome) add((p) => `outcome = ${p}`, f.outcome);
  if (f.from) add((p) => `at >= ${p}`, f.from);
  if (f.until) add((p) => `at < ${p}`, f.until);
  if (f.beforeId) add((p) => `id < ${p}::bigint`, f.beforeId);
  if (f.afterId) add((p) => `id > ${p}::bigint`, f.afterId);
  // The brand a row is about (migration operator_brands): its flow's, alert's, key's, brand's.
  if (f.brands)
    add(
      (p) => `(pixflow_action_brand(case_type, case_id, after) IS NULL
                OR pixflow_action_brand(case_type, case_id, after) = ANY(${p}::text[]))`,
      f.brands,
    );
  // A page after a cursor is the rows nearest it: read upwards, then turned newest first.
  const ascending = f.order === 'oldest' || f.afterId !== undefined;
  params.push(f.limit);
  const { rows } = await db.query(
    `SELECT * FROM operator_actions ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY id ${ascending ? 'ASC' : 'DESC'} LIMIT $${params.length}`,
    params,
  );
  const actions = rows.map(actionOf);
  return f.order === 'newest' && ascending ? actions.reverse() : actions;
}
