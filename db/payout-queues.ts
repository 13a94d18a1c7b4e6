import type pg from 'pg';
import { type FlowRow, flowRowOf } from './flows';
import { flowVisibleSql } from './operator-brands';

// The back office's two payout queues, over the withdrawals' flows rows: the payouts waiting for
// operators to approve them (four eyes), and every open payout by the time left to its prize
// deadline. The withdrawal workflow keeps in `details` what they show: dueAt, atRiskAt,
// deadlineState, waitedForPersonMs, approvalsRequired, approvedBy, refusedBy, refusal and
// requestedBy.

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

export const PAYOUT_APPROVALS_QUEUE = 'payouts-awaiting-approval';
export const PAYOUT_DEADLINES_QUEUE = 'payouts-deadline';
export const payoutQueueIds = [PAYOUT_APPROVALS_QUEUE, PAYOUT_DEADLINES_QUEUE] as const;

// Open: not yet in one of the withdrawal's final statuses (contracts/withdrawal.ts). Only a
// withdrawal whose rules were read carries a deadline.
const OPEN_WITH_DEADLINE = `f.type = 'withdrawal'
  AND f.status NOT IN ('completed', 'failed', 'stuck', 'refused')
  AND jsonb_typeof(f.details->'dueAt') = 'string'`;

export const PAYOUT_QUEUE_WHERE: Record<(typeof payoutQueueIds)[number], string> = {
  [PAYOUT_APPROVALS_QUEUE]: `f.type = 'withdrawal' AND f.status = 'awaiting_approval'`,
  [PAYOUT_DEADLINES_QUEUE]: OPEN_WITH_DEADLINE,
};

/** An open payout, with its deadline and its approvals as the workflow last recorded them. */
export interface PayoutItem {
  workflowId: string;
  /** The brand the withdrawal belongs to. */
  brandId: string;
  transactionId: string;
  status: string;
  cpfHash: string | null;
  cpfMasked: string | null;
  amountCentavos: number | null;
  createdAt: string;
  /** When it entered its status. */
  since: string;
  dueAt: string | null;
  atRiskAt: string | null;
  deadlineState: 'at_risk' | 'missed' | null;
  /** Time spent waiting for the person (biometric step-up). */
  waitedForPersonMs: number;
  /** Set only when four eyes apply. */
  approvalsRequired: number | null;
  approvedBy: string[];
  requestedBy: string | null;
  /** The operator who refused it, and why. */
  refusedBy: string | null;
  refusal: string | null;
}

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
const text = (v: unknown) => (typeof v === 'string' && v ? v : null);
const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);

/** The payout a withdrawal's flows row describes: details read defensively, they are the workflow's JSON. */
export function payoutOf(row: FlowRow): PayoutItem {
  const d = row.details ?? {};
  const state = d.deadlineState;
  return {
    workflowId: row.workflowId,
    brandId: (row as FlowRow & { brandId?: string }).brandId ?? 'default',
    transactionId: row.businessId,
    status: row.status,
    cpfHash: row.cpfHash,
    cpfMasked: row.cpfMasked,
    amountCentavos: row.amountCentavos === null ? null : Number(row.amountCentavos),
    createdAt: row.createdAt,
    since: row.updatedAt,
    dueAt: text(d.dueAt),
    atRiskAt: text(d.atRiskAt),
    deadlineState: state === 'at_risk' || state === 'missed' ? state : null,
    waitedForPersonMs: count(d.waitedForPersonMs) ?? 0,
    approvalsRequired: count(d.approvalsRequired),
    approvedBy: strings(d.approvedBy),
    requestedBy: text(d.requestedBy),
    refusedBy: text(d.refusedBy),
    refusal: text(d.refusal),
  };
}

// An unparsable dueAt sorts last rather than failing the query.
const DUE_AT = `(CASE WHEN f.details->>'dueAt' ~ '^\\d{4}-\\d{2}-\\d{2}T' THEN (f.details->>'dueAt')::timestamptz END)`;

async function listPayouts(
  db: Queryable,
  where: string,
  limit: number,
  brands: string[] | null,
): Promise<{ items: PayoutItem[]; total: number }> {
  const { rows } = await db.query(
    `SELECT f.*, count(*) OVER () AS total FROM flows f
      WHERE ${where} AND ${flowVisibleSql('$2')}
      ORDER BY ${DUE_AT} ASC NULLS LAST, f.created_at, f.workflow_id LIMIT $1`,
    [limit, brands],
  );
  return { total: Number(rows[0]?.total ?? 0), items: rows.map((r) => payoutOf(withBrand(r))) };
}

// biome-ignore lint/suspicious/noExplicitAny: a pg row
const withBrand = (r: any): FlowRow & { brandId: string } => ({ ...flowRowOf(r), brandId: r.brand_id });

/** The payouts awaiting approval, the least time left to their deadline first (of `brands`; null: all). */
export const listPayoutApprovals = (db: Queryable, limit: number, brands: string[] | null = null) =>
  listPayouts(db, PAYOUT_QUEUE_WHERE[PAYOUT_APPROVALS_QUEUE], limit, brands);

/** Every open payout with a deadline, the least time left first: the overdue at the top. */
export const listPayoutDeadlines = (db: Queryable, limit: number, brands: string[] | null = null) =>
  listPayouts(db, PAYOUT_QUEUE_WHERE[PAYOUT_DEADLINES_QUEUE], limit, brands);

/** One withdrawal's row as a payout; undefined when there is no such withdrawal. */
export async function getPayout(db: Queryable, workflowId: string): Promise<PayoutItem | undefined> {
  const { rows } = await db.query(
    `SELECT f.* FROM flows f WHERE f.workflow_id = $1 AND f.type = 'withdrawal'`,
    [workflowId],
  );
  return rows[0] ? payoutOf(withBrand(rows[0])) : undefined;
}
