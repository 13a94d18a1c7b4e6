import type { Pool } from './pool';

// Typed reads over the flows table (written by the flows' recordFlow activity) and the stored
// withdrawal receipts, for the backend API.

type FlowType = 'onboarding' | 'deposit' | 'withdrawal' | 'biometrics';

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

export async function getWithdrawalReceipt(
  pool: Pool,
  transactionId: string,
): Promise<StoredReceipt | undefined> {
  const { rows } = await pool.query(
    'SELECT image, content_type, paid_at FROM withdrawal_receipts WHERE transaction_id = $1',
    [transactionId],
  );
  const r = rows[0];
  if (!r) return undefined;
  return {
    image: r.image as Buffer,
    contentType: r.content_type,
    paidAt: r.paid_at ? (r.paid_at as Date).toISOString() : null,
  };
}
