import type { Pool } from './pool';

// The webhook inbox: every authenticated provider notification, stored before the provider
// gets its 2xx, then signalled to its workflow (at once, or later by the relay).

export type InboxPoint = 'deposit' | 'withdraw' | 'liveness';

export interface NewInboxRow {
  dedupeKey: string;
  point: InboxPoint;
  workflowId: string;
  rawBody: string;
  headers: Record<string, string>;
  receivedAt: Date;
  signalName: string;
  signalPayload: unknown;
  /** Until then the relay leaves the row alone: the request's own fast path is delivering it. */
  nextAttemptAt: Date;
}

export interface InboxRow {
  id: number;
  point: InboxPoint;
  workflowId: string;
  signalName: string;
  signalPayload: unknown;
  receivedAt: Date;
  attempts: number;
}

/** One statement on the request path. Returns the new row's id, or undefined for a duplicate. */
export async function insertInbox(pool: Pool, row: NewInboxRow): Promise<number | undefined> {
  const r = await pool.query<{ id: number }>(
    `INSERT INTO webhook_inbox
       (dedupe_key, point, workflow_id, raw_body, headers, received_at, signal_name, signal_payload, next_attempt_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (dedupe_key) DO NOTHING
     RETURNING id`,
    [
      row.dedupeKey,
      row.point,
      row.workflowId,
      row.rawBody,
      JSON.stringify(row.headers),
      row.receivedAt,
      row.signalName,
      JSON.stringify(row.signalPayload),
      row.nextAttemptAt,
    ],
  );
  return r.rows[0]?.id;
}

/**
 * Claims up to `limit` due rows for `leaseMs`: other relays (other API processes) skip locked
 * rows and, once this statement commits, see the pushed next_attempt_at and leave them alone.
 */
export async function claimPending(pool: Pool, limit: number, leaseMs: number): Promise<InboxRow[]> {
  const r = await pool.query<{
    id: number;
    point: InboxPoint;
    workflow_id: string;
    signal_name: string;
    signal_payload: unknown;
    received_at: Date;
    attempts: number;
  }>(
    `UPDATE webhook_inbox SET next_attempt_at = now() + make_interval(secs => $2::double precision / 1000)
     WHERE id IN (
       SELECT id FROM webhook_inbox
       WHERE delivered_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= now()
       ORDER BY next_attempt_at
       LIMIT $1
       FOR UPDATE SKIP LOCKED)
     RETURNING id, point, workflow_id, signal_name, signal_payload, received_at, attempts`,
    [limit, leaseMs],
  );
  return r.rows.map((x) => ({
    id: x.id,
    point: x.point,
    workflowId: x.workflow_id,
    signalName: x.signal_name,
    signalPayload: x.signal_payload,
    receivedAt: x.received_at,
    attempts: x.attempts,
  }));
}

/** Delivered, or nothing left to deliver to (`note` says why, e.g. the workflow had closed). */
export async function markDelivered(pool: Pool, id: number, note?: string): Promise<void> {
  await pool.query(
    'UPDATE webhook_inbox SET delivered_at = now(), attempts = attempts + 1, last_error = $2 WHERE id = $1',
    [id, note ?? null],
  );
}

export async function markRetry(pool: Pool, id: number, error: string, nextAttemptAt: Date): Promise<void> {
  await pool.query(
    'UPDATE webhook_inbox SET attempts = attempts + 1, last_error = $2, next_attempt_at = $3 WHERE id = $1',
    [id, error, nextAttemptAt],
  );
}

export async function markGaveUp(pool: Pool, id: number, error: string): Promise<void> {
  await pool.query(
    'UPDATE webhook_inbox SET attempts = attempts + 1, last_error = $2, gave_up_at = now() WHERE id = $1',
    [id, error],
  );
}

/** Notifications not yet delivered (and not given up): the inbox backlog metric. */
export async function countPending(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM webhook_inbox WHERE delivered_at IS NULL AND gave_up_at IS NULL',
  );
  return rows[0]?.n ?? 0;
}
