import type pg from 'pg';
import { type FlowRow, flowRowOf } from './flows';
import { flowVisibleSql } from './operator-brands';
import { PAYOUT_QUEUE_WHERE, payoutQueueIds } from './payout-queues';

// The back office's work queues: views over the flows table, each the flows in one state that
// wants a person's attention, oldest first. A flow leaves its queue when its status moves on.

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

export const flowQueueIds = [
  'onboardings-awaiting-review',
  'deposits-held',
  'withdrawals-awaiting-biometrics',
  'failed',
  'reconciliation-gave-up',
  ...payoutQueueIds,
] as const;
export type FlowQueueId = (typeof flowQueueIds)[number];

/** The queue of people, not flows: the impeded whose account is not closed yet (listImpeded). */
export const IMPEDED_QUEUE = 'customers-impeded';
export const queueIds = [...flowQueueIds, IMPEDED_QUEUE] as const;
export type QueueId = (typeof queueIds)[number];

const QUEUE_WHERE: Record<FlowQueueId, string> = {
  'onboardings-awaiting-review': `f.type = 'onboarding' AND f.status = 'awaiting_review'`,
  'deposits-held': `f.type = 'deposit' AND f.status = 'held'`,
  'withdrawals-awaiting-biometrics': `f.type = 'withdrawal' AND f.status = 'awaiting_biometrics'`,
  failed: `f.type IN ('deposit', 'withdrawal') AND f.status = 'failed'`,
  // The withdrawal's deadline passed and no inquiry found the payout's outcome.
  'reconciliation-gave-up': `f.type = 'withdrawal' AND f.status = 'stuck'`,
  // Their own pages and order (payout-queues.ts).
  ...PAYOUT_QUEUE_WHERE,
};

export interface QueueCount {
  queue: QueueId;
  count: number;
  /** When the oldest flow in it entered its status; null when empty. */
  oldestSince: string | null;
}

/** `brands`: the flows of these brands and what every brand shares (db/operator-brands.ts); null: all. */
export async function countQueues(db: Queryable, brands: string[] | null = null): Promise<QueueCount[]> {
  const columns = flowQueueIds.map(
    (q, i) =>
      `count(*) FILTER (WHERE ${QUEUE_WHERE[q]}) AS n${i}, min(f.updated_at) FILTER (WHERE ${QUEUE_WHERE[q]}) AS o${i}`,
  );
  const { rows } = await db.query(
    `SELECT ${columns.join(', ')} FROM flows f
      WHERE (${flowQueueIds.map((q) => `(${QUEUE_WHERE[q]})`).join(' OR ')}) AND ${flowVisibleSql('$1')}`,
    [brands],
  );
  const r = rows[0] ?? {};
  const impeded = await db.query(
    `SELECT count(*) AS n, min(impeded_since) AS o FROM customers WHERE ${IMPEDED_WHERE}`,
  );
  const i = impeded.rows[0] ?? {};
  return [
    ...flowQueueIds.map((queue, i) => ({
      queue,
      count: Number(r[`n${i}`] ?? 0),
      oldestSince: r[`o${i}`] instanceof Date ? (r[`o${i}`] as Date).toISOString() : null,
    })),
    {
      queue: IMPEDED_QUEUE,
      count: Number(i.n ?? 0),
      oldestSince: i.o instanceof Date ? (i.o as Date).toISOString() : null,
    },
  ];
}

// A person stays impeded until an operator reinstates them; the queue holds those still open.
const IMPEDED_WHERE = `eligibility = 'impeded' AND closed_at IS NULL`;

/** An impeded person whose account is not closed yet, with the deadline to close it. */
export interface ImpededItem {
  cpfHash: string;
  cpfMasked: string;
  reason: string;
  since: string;
  until: string | null;
  source: string;
  registryAnswer: 'eligible' | 'impeded';
  /** `since` plus the period to close (the rules policy's `eligibility.impededCloseWithinMs`). */
  closeBy: string;
}

/** The impeded queue, the least time left to close first (the oldest impediment). */
export async function listImpeded(
  db: Queryable,
  f: { cpfHash?: string; closeWithinMs: number; limit: number },
): Promise<{ items: ImpededItem[]; total: number }> {
  const { rows } = await db.query(
    `SELECT cpf_hash, cpf_masked, impeded_reason, impeded_since, impeded_until, impeded_source,
            coalesce(registry_answer, eligibility) AS registry_answer, count(*) OVER () AS total
       FROM customers WHERE ${IMPEDED_WHERE} AND ($1::text IS NULL OR cpf_hash = $1)
      ORDER BY impeded_since, cpf_hash LIMIT $2`,
    [f.cpfHash ?? null, f.limit],
  );
  return {
    total: Number(rows[0]?.total ?? 0),
    items: rows.map((r) => {
      const since = r.impeded_since as Date;
      return {
        cpfHash: r.cpf_hash,
        cpfMasked: r.cpf_masked,
        reason: r.impeded_reason,
        since: since.toISOString(),
        until: r.impeded_until ? (r.impeded_until as Date).toISOString() : null,
        source: r.impeded_source,
        registryAnswer: r.registry_answer,
        closeBy: new Date(since.getTime() + f.closeWithinMs).toISOString(),
      };
    }),
  };
}

export interface QueueFilter {
  cpfHash?: string;
  /** Entered its status at or after. */
  since?: Date;
  /** Entered its status before. */
  until?: Date;
  /** Only this flow type (the queues that mix deposits and withdrawals). */
  type?: 'deposit' | 'withdrawal';
  /** The flows of these brands and what every brand shares (db/operator-brands.ts); all when null or absent. */
  brands?: string[] | null;
  limit: number;
}

/** A flows row, with when it entered its status and what the person's KYC said. */
export interface QueueItem extends FlowRow {
  /** The brand the flow belongs to (an onboarding's is the default brand's, and every brand's). */
  brandId: string;
  since: string;
  pep: boolean | null;
  kycStatus: string | null;
  verification: string | null;
}

// biome-ignore lint/suspicious/noExplicitAny: a pg row
function itemOf(r: any): QueueItem {
  const row = flowRowOf(r);
  return {
    ...row,
    brandId: r.brand_id ?? 'default',
    since: row.updatedAt,
    pep: r.pep,
    kycStatus: r.kyc_status,
    verification: r.verification,
  };
}

export async function listQueue(
  db: Queryable,
  queue: FlowQueueId,
  f: QueueFilter,
): Promise<{ items: QueueItem[]; total: number }> {
  const where = [QUEUE_WHERE[queue]];
  const params: unknown[] = [];
  const add = (sql: (p: string) => string, value: unknown) => {
    params.push(value);
    where.push(sql(`$${params.length}`));
  };
  if (f.cpfHash) add((p) => `f.cpf_hash = ${p}`, f.cpfHash);
  if (f.since) add((p) => `f.updated_at >= ${p}`, f.since);
  if (f.until) add((p) => `f.updated_at < ${p}`, f.until);
  if (f.type) add((p) => `f.type = ${p}`, f.type);
  if (f.brands) add((p) => flowVisibleSql(p), f.brands);
  params.push(f.limit);
  const { rows } = await db.query(
    `SELECT f.*, c.pep, c.kyc_status, c.verification, count(*) OVER () AS total
       FROM flows f LEFT JOIN customers c ON c.cpf_hash = f.cpf_hash
      WHERE ${where.join(' AND ')}
      ORDER BY f.updated_at, f.workflow_id LIMIT $${params.length}`,
    params,
  );
  return {
    total: Number(rows[0]?.total ?? 0),
    items: rows.map(itemOf),
  };
}

/** One flow's row, for its case page. */
export async function getFlowRow(db: Queryable, workflowId: string): Promise<QueueItem | undefined> {
  const { rows } = await db.query(
    `SELECT f.*, c.pep, c.kyc_status, c.verification
       FROM flows f LEFT JOIN customers c ON c.cpf_hash = f.cpf_hash WHERE f.workflow_id = $1`,
    [workflowId],
  );
  const r = rows[0];
  if (!r) return undefined;
  return itemOf(r);
}

/** A person's flows, newest first: those of `brands` and what every brand shares (null: all). */
export async function flowsOfPerson(
  db: Queryable,
  cpfHash: string,
  brands: string[] | null = null,
  limit = 100,
): Promise<QueueItem[]> {
  const { rows } = await db.query(
    `SELECT f.*, NULL::boolean AS pep, NULL AS kyc_status, NULL AS verification
       FROM flows f WHERE f.cpf_hash = $1 AND ${flowVisibleSql('$3')} ORDER BY f.created_at DESC LIMIT $2`,
    [cpfHash, limit, brands],
  );
  return rows.map(itemOf);
}

/**
 * The flows with one of these workflow ids, or whose payment has this end-to-end id (E2E, kept in
 * flows.details once the provider gave one), newest first.
 */
export async function findFlows(
  db: Queryable,
  q: { workflowIds: string[]; e2eId: string; brands: string[] | null },
  limit = 20,
): Promise<QueueItem[]> {
  const { rows } = await db.query(
    `SELECT f.*, c.pep, c.kyc_status, c.verification
       FROM flows f LEFT JOIN customers c ON c.cpf_hash = f.cpf_hash
      WHERE (f.workflow_id = ANY($1::text[])
             OR (f.details->>'e2eId' = $2 AND f.details->>'e2eId' <> ''))
        AND ${flowVisibleSql('$4')}
      ORDER BY f.created_at DESC, f.workflow_id LIMIT $3`,
    [q.workflowIds, q.e2eId, limit, q.brands],
  );
  return rows.map(itemOf);
}
