import type pg from 'pg';
import { isoSql } from './events';
import { flowIdVisibleSql } from './operator-brands';
import { prepared } from './pool';

// Monitoring alerts (migration 1732000000023, docs/monitoring.md): the monitor's cursor over the
// events, the movements its rules read, the alerts it writes with their `alert.raised` event in
// the same statement, and the back office's queue, decisions and export.

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** The event the database writes with each new alert (contracts/events.ts lists it with the rest). */
export const ALERT_RAISED = 'alert.raised';

/** A flows row as the rules read it: a movement of money, or the one that tripped them. */
export interface Movement {
  workflowId: string;
  type: 'deposit' | 'withdrawal';
  status: string;
  cpfHash: string;
  cpfMasked: string | null;
  amountCentavos: number;
  /** A deposit's when it was credited (it is final then), a withdrawal's when it was asked for. */
  at: Date;
}

const triggerEvents = prepared(
  'triggers-after',
  `SELECT position, type, stream_id FROM events
      WHERE position IS NOT NULL AND position > $1 AND type = ANY($2) ORDER BY position LIMIT $3`,
);

/** The events the monitor evaluates, after its cursor, in position order. */
export async function triggersAfter(
  db: Queryable,
  position: number,
  types: readonly string[],
  limit: number,
): Promise<Array<{ position: number; type: string; flowId: string }>> {
  const { rows } = await db.query(triggerEvents([position, types, limit]));
  return rows.map((r) => ({ position: Number(r.position), type: r.type, flowId: r.stream_id }));
}

const MONITOR = 'alerts';

/** The cursor, locked for the caller's transaction. */
export async function lockCursor(client: pg.PoolClient): Promise<number> {
  const { rows } = await client.query(
    'SELECT position FROM alert_monitor_cursor WHERE name = $1 FOR UPDATE',
    [MONITOR],
  );
  return Number(rows[0]?.position ?? 0);
}

export async function saveCursor(db: Queryable, position: number): Promise<void> {
  await db.query('UPDATE alert_monitor_cursor SET position = $2, updated_at = now() WHERE name = $1', [
    MONITOR,
    position,
  ]);
}

/**
 * The movement time of a flows row (`f`): a deposit's credit, a withdrawal's request. A request's
 * time never changes, so a payout evaluated while it awaits approval and again once completed is
 * the same movement at the same time both times.
 */
const movedAtSql = `CASE WHEN f.type = 'deposit' THEN f.updated_at ELSE f.created_at END`;

/**
 * A payout that passed the rules and any step-up: waiting for approvers, or gone to the provider.
 * Refused and failed ones moved no money.
 */
export const WITHDRAWAL_MOVED_STATUSES: readonly string[] = [
  'awaiting_approval',
  'sending',
  'processing',
  'completed',
  'stuck',
];

// Money that moved, or is about to: a credited deposit; a payout in one of the statuses above.
const MOVED_SQL = `((f.type = 'deposit' AND f.status = 'completed')
  OR (f.type = 'withdrawal' AND f.status IN (${WITHDRAWAL_MOVED_STATUSES.map((s) => `'${s}'`).join(', ')})))`;

/**
 * The columns a movement is made of. A person's window can hold many movements, each read for
 * every movement of theirs: the row's other columns (its details above all) are left in the table.
 */
const MOVEMENT_COLUMNS = 'f.workflow_id, f.type, f.status, f.cpf_masked, f.amount_centavos';

// biome-ignore lint/suspicious/noExplicitAny: a pg row
const movementOf = (r: any, cpfHash: string = r.cpf_hash): Movement => ({
  workflowId: r.workflow_id,
  type: r.type,
  status: r.status,
  cpfHash,
  cpfMasked: r.cpf_masked,
  amountCentavos: Number(r.amount_centavos ?? 0),
  at: r.moved_at as Date,
});

const movementOfFlowRow = prepared(
  'movement-of-flow',
  `SELECT ${MOVEMENT_COLUMNS}, f.cpf_hash, ${movedAtSql} AS moved_at FROM flows f
      WHERE f.workflow_id = $1 AND f.type IN ('deposit', 'withdrawal') AND f.cpf_hash IS NOT NULL`,
);

/** One flow as a movement; undefined when it is no deposit or withdrawal of a person. */
export async function movementOfFlow(db: Queryable, workflowId: string): Promise<Movement | undefined> {
  const { rows } = await db.query(movementOfFlowRow([workflowId]));
  return rows[0] ? movementOf(rows[0]) : undefined;
}

/** What the rules weigh a person's movement against (monitoring/rules.ts). */
export interface MovementContext {
  /** The person's movements between the two times (both included), oldest first. */
  movements: Movement[];
  /**
   * When the person registered: their onboarding's approval (final, so its row's last change),
   * else when pixflow first knew them.
   */
  registeredAt: Date | undefined;
  /** The person's alerts raised for movements since `from`: what the rules do not repeat. */
  recent: Array<{ rule: string; flowId: string; facts: Record<string, unknown> }>;
}

const movementContextRows = prepared(
  'movement-context',
  `SELECT p.registered_at, p.recent, m.*
       FROM (SELECT coalesce(
                (SELECT min(updated_at) FROM flows
                  WHERE type = 'onboarding' AND status = 'approved' AND cpf_hash = $1),
                (SELECT created_at FROM customers WHERE cpf_hash = $1)) AS registered_at,
              (SELECT coalesce(json_agg(json_build_object('rule', rule, 'flowId', flow_id, 'facts', facts)
                                        ORDER BY raised_at), '[]')
                 FROM alerts WHERE cpf_hash = $1 AND (facts->>'at')::timestamptz >= $2) AS recent) p
       LEFT JOIN LATERAL (
         SELECT * FROM (SELECT ${MOVEMENT_COLUMNS}, ${movedAtSql} AS moved_at FROM flows f
                         WHERE f.cpf_hash = $1 AND ${MOVED_SQL}) mv
          WHERE mv.moved_at >= $2 AND mv.moved_at <= $3 ORDER BY mv.moved_at, mv.workflow_id LIMIT $4) m ON true`,
);

/** The context of one movement, read in one statement: a pass evaluates one per triggering event. */
export async function movementContextOf(
  db: Queryable,
  cpfHash: string,
  from: Date,
  until: Date,
  limit = 2000,
): Promise<MovementContext> {
  const { rows } = await db.query(movementContextRows([cpfHash, from, until, limit]));
  const first = rows[0];
  return {
    movements: rows.filter((r) => r.workflow_id !== null).map((r) => movementOf(r, cpfHash)),
    registeredAt: (first?.registered_at as Date | null) ?? undefined,
    recent: (first?.recent ?? []) as MovementContext['recent'],
  };
}

export interface NewAlert {
  id: string;
  rule: string;
  cpfHash: string;
  cpfMasked: string | null;
  flowId: string;
  flowIds: string[];
  facts: Record<string, number | string>;
  /** The version of the rules policy whose thresholds raised it; none for an alert no threshold raises. */
  policyVersion?: number;
}

/**
 * Writes the alert and its `alert.raised` event in one statement; nothing when this rule already
 * flagged this person for this flow. Answers whether it was new.
 */
export async function raiseAlert(db: Queryable, a: NewAlert): Promise<boolean> {
  const { rows } = await db.query(
    `WITH ins AS (
       INSERT INTO alerts (id, rule, cpf_hash, cpf_masked, flow_id, flow_ids, facts, policy_version)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (rule, cpf_hash, flow_id) DO NOTHING RETURNING *)
     SELECT pixflow_append_event('${ALERT_RAISED}', ins.id, 'alert', ins.cpf_hash,
              jsonb_build_object('alertId', ins.id, 'rule', ins.rule, 'cpfHash', ins.cpf_hash,
                                 'cpfMasked', ins.cpf_masked, 'triggeredBy', ins.flow_id,
                                 'flowIds', to_jsonb(ins.flow_ids), 'facts', ins.facts,
                                 'raisedAt', ${isoSql('ins.raised_at')}),
              NULL, pixflow_stream_brand(ins.flow_id)) AS event
       FROM ins`,
    [
      a.id,
      a.rule,
      a.cpfHash,
      a.cpfMasked,
      a.flowId,
      a.flowIds,
      JSON.stringify(a.facts),
      a.policyVersion ?? null,
    ],
  );
  return rows.length > 0;
}

export interface AlertRow {
  id: string;
  rule: string;
  cpfHash: string;
  cpfMasked: string | null;
  flowId: string;
  flowIds: string[];
  facts: Record<string, number | string>;
  raisedAt: string;
  status: string;
  decidedBy: string | null;
  decidedAt: string | null;
  note: string | null;
  /** The version of the rules policy it was raised under; null: raised before the policy. */
  policyVersion: number | null;
}

// biome-ignore lint/suspicious/noExplicitAny: a pg row
const alertOf = (r: any): AlertRow => ({
  id: r.id,
  rule: r.rule,
  cpfHash: r.cpf_hash,
  cpfMasked: r.cpf_masked,
  flowId: r.flow_id,
  flowIds: r.flow_ids,
  facts: r.facts,
  raisedAt: (r.raised_at as Date).toISOString(),
  status: r.status,
  decidedBy: r.decided_by,
  decidedAt: r.decided_at ? (r.decided_at as Date).toISOString() : null,
  note: r.note,
  policyVersion: r.policy_version ?? null,
});

export interface AlertFilter {
  status?: string;
  rule?: string;
  cpfHash?: string;
  /** Raised at or after. */
  from?: Date;
  /** Raised before. */
  until?: Date;
  order: 'oldest' | 'newest';
  limit: number;
  /** Only alerts raised by a flow of these brands or of none (db/operator-brands.ts); all when absent. */
  brands?: string[] | null;
}

/** Alerts by the filter, with how many match in all. */
export async function listAlerts(
  db: Queryable,
  f: AlertFilter,
): Promise<{ items: AlertRow[]; total: number }> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: (p: string) => string, value: unknown) => {
    params.push(value);
    where.push(sql(`$${params.length}`));
  };
  if (f.status) add((p) => `status = ${p}`, f.status);
  if (f.rule) add((p) => `rule = ${p}`, f.rule);
  if (f.cpfHash) add((p) => `cpf_hash = ${p}`, f.cpfHash);
  if (f.from) add((p) => `raised_at >= ${p}`, f.from);
  if (f.until) add((p) => `raised_at < ${p}`, f.until);
  if (f.brands) add((p) => flowIdVisibleSql(p, 'flow_id'), f.brands);
  params.push(f.limit);
  const { rows } = await db.query(
    `SELECT *, count(*) OVER () AS total FROM alerts ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY raised_at ${f.order === 'oldest' ? 'ASC' : 'DESC'}, id LIMIT $${params.length}`,
    params,
  );
  return { items: rows.map(alertOf), total: Number(rows[0]?.total ?? 0) };
}

/** One alert, locked for the caller's transaction when asked. */
export async function getAlert(db: Queryable, id: string, lock = false): Promise<AlertRow | undefined> {
  const { rows } = await db.query(`SELECT * FROM alerts WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
  return rows[0] ? alertOf(rows[0]) : undefined;
}

/** Marks an alert, when it is in one of the statuses it may be marked from; undefined otherwise. */
export async function decideAlert(
  db: Queryable,
  d: { id: string; status: string; from: readonly string[]; by: string; note: string; at: Date },
): Promise<AlertRow | undefined> {
  const { rows } = await db.query(
    `UPDATE alerts SET status = $2, decided_by = $3, decided_at = $4, note = $5
      WHERE id = $1 AND status = ANY($6) RETURNING *`,
    [d.id, d.status, d.by, d.at, d.note, d.from],
  );
  return rows[0] ? alertOf(rows[0]) : undefined;
}

/**
 * An alert on a flow whose provider answered what no rule of its connector reads (`op`, `field`):
 * one per flow, whoever asks again. Answers whether it was new; none when the flow has no row
 * with a person yet.
 */
export async function raiseUnclassifiedAnswer(
  db: Queryable,
  a: { id: string; workflowId: string; op: string; field: string },
): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT cpf_hash, cpf_masked FROM flows WHERE workflow_id = $1 AND cpf_hash IS NOT NULL LIMIT 1`,
    [a.workflowId],
  );
  const person = rows[0] as { cpf_hash: string; cpf_masked: string | null } | undefined;
  if (!person) return false;
  return raiseAlert(db, {
    id: a.id,
    rule: 'provider_unclassified',
    cpfHash: person.cpf_hash,
    cpfMasked: person.cpf_masked,
    flowId: a.workflowId,
    flowIds: [a.workflowId],
    facts: { op: a.op, field: a.field },
  });
}
