import type { Pool } from './pool';

// The reconciliation's queue is the flows table itself: the rows of flows waiting for the
// provider, each due on a back-off schedule counted from when it started waiting.

/** A flow whose provider-side state is due to be looked up. */
export interface DueCheck {
  workflowId: string;
  type: 'deposit' | 'withdrawal';
  /** txid of a deposit, transactionId of a withdrawal. */
  businessId: string;
  /** Checks made so far, this one included. */
  checks: number;
}

const WAITING = `((type = 'deposit' AND status = 'awaiting_payment') OR (type = 'withdrawal' AND status = 'processing'))`;
/** When a waiting row is due: its next check, or one schedule step after it started waiting. */
const DUE_AT = `COALESCE(next_check_at, updated_at + make_interval(secs => ($1::int[])[1] / 1000.0))`;

/**
 * Takes up to `limit` due rows, the longest overdue first, and moves each one's next check along
 * the schedule (ms; its last step repeats) before it is made: a sweep that dies midway costs a
 * row one step of delay, and two sweeps never take the same row (SKIP LOCKED).
 */
export async function claimDueChecks(
  pool: Pool,
  scheduleMs: readonly number[],
  limit: number,
): Promise<DueCheck[]> {
  const { rows } = await pool.query<{
    workflow_id: string;
    type: DueCheck['type'];
    business_id: string;
    checks: number;
  }>(
    `WITH due AS (
       SELECT workflow_id FROM flows
        WHERE ${WAITING} AND ${DUE_AT} <= now()
        ORDER BY ${DUE_AT}
        LIMIT $2
        FOR UPDATE SKIP LOCKED
     )
     UPDATE flows f
        SET checks = f.checks + 1,
            next_check_at = now() + make_interval(secs => ($1::int[])[LEAST(f.checks + 2, cardinality($1::int[]))] / 1000.0)
       FROM due
      WHERE f.workflow_id = due.workflow_id
     RETURNING f.workflow_id, f.type, f.business_id, f.checks`,
    [scheduleMs, limit],
  );
  return rows.map((r) => ({
    workflowId: r.workflow_id,
    type: r.type,
    businessId: r.business_id,
    checks: r.checks,
  }));
}

/** How many waiting rows are due now: the sweep's backlog. */
export async function countDueChecks(pool: Pool, scheduleMs: readonly number[]): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM flows WHERE ${WAITING} AND ${DUE_AT} <= now()`,
    [scheduleMs],
  );
  return Number(rows[0]?.n ?? 0);
}
