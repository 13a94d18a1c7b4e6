import type pg from 'pg';
import { knownByBrandSql } from './customer-brands';
import { flowStateJsonSql } from './events';
import { type Pool, prepared } from './pool';

// The flows table and the stored withdrawal receipts: what the flows' activities write (a flow's
// row with its status event, a receipt) and the typed reads the backend API makes.

type FlowType = 'onboarding' | 'deposit' | 'withdrawal' | 'biometrics';

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

export interface FlowRow {
  workflowId: string;
  type: FlowType;
  businessId: string;
  status: string;
  /** Keyed hash of the person's CPF (the PixflowCpfHash search attribute); every type keeps it. */
  cpfHash: string | null;
  cpfMasked: string | null;
  merchant: string | null;
  amountCentavos: number | null;
  reason: string | null;
  details: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

/** Position after the last row of a page: created_at in whole microseconds (exact), then workflow_id. */
export interface FlowCursor {
  createdUs: number;
  workflowId: string;
}

export interface FlowFilter {
  /**
   * The brand whose deposits and withdrawals are listed. Onboardings and biometrics belong to no
   * brand (a person's verification is shared by an operator's brands): each brand that met the
   * person lists them.
   */
  brand: string;
  type?: FlowType;
  status?: string;
  cpfHash?: string;
  createdFrom?: Date;
  createdTo?: Date;
  after?: FlowCursor;
  limit: number;
}

export interface FlowPage {
  items: FlowRow[];
  next?: FlowCursor;
}

export async function listFlows(pool: Pool, f: FlowFilter): Promise<FlowPage> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: (p: string) => string, value: unknown) => {
    params.push(value);
    where.push(sql(`$${params.length}`));
  };
  // A person's onboardings and identifications are listed to each brand that met them.
  add(
    (p) =>
      `(brand_id = ${p} OR (type IN ('onboarding', 'biometrics') AND ${knownByBrandSql(p, 'flows.cpf_hash')}))`,
    f.brand,
  );
  if (f.type) add((p) => `type = ${p}`, f.type);
  if (f.status) add((p) => `status = ${p}`, f.status);
  if (f.cpfHash) add((p) => `cpf_hash = ${p}`, f.cpfHash);
  if (f.createdFrom) add((p) => `created_at >= ${p}`, f.createdFrom);
  if (f.createdTo) add((p) => `created_at < ${p}`, f.createdTo);
  if (f.after) {
    // Microseconds as integer interval arithmetic: no float rounding, so no row is skipped or repeated.
    params.push(f.after.createdUs, f.after.workflowId);
    const us = `$${params.length - 1}`;
    const id = `$${params.length}`;
    where.push(
      `(created_at, workflow_id) < ('epoch'::timestamptz + ${us}::bigint * interval '1 microsecond', ${id})`,
    );
  }
  params.push(f.limit + 1);
  const { rows } = await pool.query(
    `SELECT workflow_id, type, business_id, status, cpf_hash, cpf_masked, merchant, amount_centavos, reason, details,
            created_at, updated_at,
            (extract(epoch FROM created_at) * 1000000)::bigint AS created_us
       FROM flows
      ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY created_at DESC, workflow_id DESC
      LIMIT $${params.length}`,
    params,
  );
  const more = rows.length > f.limit;
  const page = more ? rows.slice(0, f.limit) : rows;
  const last = page[page.length - 1];
  return {
    items: page.map(flowRowOf),
    next: more && last ? { createdUs: Number(last.created_us), workflowId: last.workflow_id } : undefined,
  };
}

/** A flows row as the API shows it. */
// biome-ignore lint/suspicious/noExplicitAny: a pg row
export function flowRowOf(r: any): FlowRow {
  return {
    workflowId: r.workflow_id,
    type: r.type,
    businessId: r.business_id,
    status: r.status,
    cpfHash: r.cpf_hash,
    cpfMasked: r.cpf_masked,
    merchant: r.merchant,
    amountCentavos: r.amount_centavos,
    reason: r.reason,
    details: r.details,
    createdAt: (r.created_at as Date).toISOString(),
    updatedAt: (r.updated_at as Date).toISOString(),
  };
}

export interface StoredReceipt {
  image: Buffer;
  contentType: string;
  paidAt: string | null;
}

/**
 * A withdrawal's stored receipt, by the workflow id of the withdrawal (of its brand): another
 * brand's withdrawal of the same transactionId has its own (flow_receipts, migration 037; one the
 * previous version stored by transactionId is there too, as the default brand's).
 */
export async function getWithdrawalReceipt(
  pool: Pool,
  workflowId: string,
): Promise<StoredReceipt | undefined> {
  const { rows } = await pool.query(
    'SELECT image, content_type, paid_at FROM flow_receipts WHERE workflow_id = $1',
    [workflowId],
  );
  const r = rows[0];
  if (!r) return undefined;
  return {
    image: r.image as Buffer,
    contentType: r.content_type,
    paidAt: r.paid_at ? (r.paid_at as Date).toISOString() : null,
  };
}

/** A flow's row as its flow writes it: the person's CPF only as its keyed hash and masked form. */
export type FlowRowWrite = Omit<FlowRow, 'createdAt' | 'updatedAt'> & {
  seq: number;
  at: Date;
  /** The run that writes; null when unknown (then only the sequence number orders writes). */
  runId: string | null;
  /**
   * The brand the flow belongs to, set by its first write and never changed; absent: the default
   * brand's (a flow from before brands, an onboarding).
   */
  brandId?: string;
};

// The row's upsert, and in the same statement its event when the status changed (or a new run
// of the id began): the outbox entry exists exactly when the change does.
const upsertFlowStatement = prepared(
  'upsert-flow',
  `WITH prev AS (SELECT status, run_id FROM flows WHERE workflow_id = $1),
       up AS (
         INSERT INTO flows (workflow_id, type, business_id, status, cpf_hash, cpf_masked, merchant, amount_centavos,
                            reason, details, seq, created_at, updated_at, run_id, brand_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $13, COALESCE($14::text, 'default'))
         ON CONFLICT (workflow_id) DO UPDATE SET
           status = EXCLUDED.status, reason = EXCLUDED.reason, details = EXCLUDED.details,
           amount_centavos = COALESCE(EXCLUDED.amount_centavos, flows.amount_centavos),
           seq = EXCLUDED.seq, updated_at = EXCLUDED.updated_at, run_id = COALESCE(EXCLUDED.run_id, flows.run_id)
         WHERE flows.seq < EXCLUDED.seq
            -- A new run of the same id (an onboarding started again, each biometric
            -- identification) counts from 1 again; the previous run has closed, so its rows lose.
            OR flows.run_id <> EXCLUDED.run_id
         RETURNING *)
  SELECT pixflow_append_event(up.type || '.' || up.status, up.workflow_id, up.type, up.business_id,
                              ${flowStateJsonSql('up')})
    FROM up LEFT JOIN prev ON true
   WHERE prev.status IS DISTINCT FROM up.status OR prev.run_id IS DISTINCT FROM up.run_id`,
);

/**
 * Upserts a flow's row, never moving it back to an older state, and appends its status event
 * when the status changed or a new run of the id began.
 */
export async function upsertFlowAndEvent(db: Queryable, row: FlowRowWrite): Promise<void> {
  await db.query(
    upsertFlowStatement([
      row.workflowId,
      row.type,
      row.businessId,
      row.status,
      row.cpfHash,
      row.cpfMasked,
      row.merchant,
      row.amountCentavos,
      row.reason,
      JSON.stringify(row.details),
      row.seq,
      row.at,
      row.runId,
      row.brandId ?? null,
    ]),
  );
}

/**
 * Appends the flow's event of this type unless the flow already has one, with the flow's state
 * as its row holds it; answers whether it appended. Run after the row's upsert in the same
 * transaction: that upsert's lock orders two writers.
 */
export async function appendFlowEventOnce(
  db: Queryable,
  workflowId: string,
  eventType: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `SELECT pixflow_append_event($2, f.workflow_id, f.type, f.business_id, ${flowStateJsonSql('f')})
    FROM flows f
   WHERE f.workflow_id = $1
     AND NOT EXISTS (SELECT 1 FROM events e WHERE e.stream_id = f.workflow_id AND e.type = $2)`,
    [workflowId, eventType],
  );
  return (rowCount ?? 0) > 0;
}

const upsertReceiptStatement = prepared(
  'upsert-flow-receipt',
  `INSERT INTO flow_receipts (workflow_id, transaction_id, image, paid_at) VALUES ($1, $2, $3, $4)
   ON CONFLICT (workflow_id) DO UPDATE SET image = EXCLUDED.image, paid_at = EXCLUDED.paid_at`,
);

/**
 * Stores a withdrawal's receipt image under its flow's workflow id, replacing one stored before
 * (idempotent).
 */
export async function upsertWithdrawalReceipt(
  db: Queryable,
  r: { workflowId: string; transactionId: string; image: Buffer; paidAt: string | null },
): Promise<void> {
  await db.query(upsertReceiptStatement([r.workflowId, r.transactionId, r.image, r.paidAt]));
}
