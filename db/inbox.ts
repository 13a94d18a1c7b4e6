import { type Pool, prepared } from './pool';

// The webhook inbox: every authenticated provider notification, stored before the provider
// gets its 2xx, then signalled to its workflow (at once, or later by the relay).

const UNIQUE_VIOLATION = '23505';

export type NotificationPoint = 'deposit' | 'withdraw' | 'liveness';
/** Where a row came in: the first provider's points, or `api-pix`, a PSP speaking the Central Bank's API Pix. */
export type InboxPoint = NotificationPoint | 'api-pix';

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

/** Where a new notification went: a row of its own (signalled now or after the window), or into a waiting one. */
export type Stored = { id: number; deliverNow: boolean } | { joined: true };

/** A new row's columns, $1 to $9, as both inserts take them. */
function rowParams(row: NewInboxRow) {
  return [
    row.dedupeKey,
    row.point,
    row.workflowId,
    row.rawBody,
    JSON.stringify(row.headers),
    row.receivedAt,
    row.signalName,
    JSON.stringify(row.signalPayload),
    row.nextAttemptAt,
  ];
}

const insertInboxRow = prepared(
  'insert-inbox',
  `WITH joined AS (
       UPDATE webhook_inbox SET copies = copies + 1
       WHERE dedupe_key = $1 AND delivered_at IS NULL AND gave_up_at IS NULL AND claimed_at IS NULL
       RETURNING id
     ), copies AS (
       -- Locked, so a copy claimed after this statement began is read as claimed (not as the
       -- statement's snapshot had it), and its window holds this one.
       SELECT claimed_at, delivered_at FROM webhook_inbox WHERE dedupe_key = $1 FOR SHARE
     ), last_signal AS (
       SELECT max(COALESCE(delivered_at, claimed_at)) + make_interval(secs => $10::double precision / 1000) AS until
       FROM copies WHERE claimed_at IS NOT NULL
     )
     INSERT INTO webhook_inbox
       (dedupe_key, point, workflow_id, raw_body, headers, received_at, signal_name, signal_payload, next_attempt_at)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, CASE WHEN until > now() THEN until ELSE $9::timestamptz END
     FROM last_signal WHERE NOT EXISTS (SELECT 1 FROM joined)
     ON CONFLICT (dedupe_key) WHERE delivered_at IS NULL AND gave_up_at IS NULL AND claimed_at IS NULL
     DO NOTHING
     RETURNING id, next_attempt_at`,
);

/**
 * One statement on the request path. The provider's bodies carry no delivery id, so a key is not
 * kept once for ever: a copy joins an identical row that still waits for its signal (that
 * signal comes after both arrived); otherwise it gets a row of its own, signalled at once, or,
 * within `coalesceMs` of the last identical signal, when that window ends. A storm of copies
 * costs one signal per window, and no notification that arrives after a signal is lost.
 */
export async function insertInbox(pool: Pool, row: NewInboxRow, coalesceMs: number): Promise<Stored> {
  const r = await pool.query<{ id: number; next_attempt_at: Date }>(
    insertInboxRow([...rowParams(row), coalesceMs]),
  );
  const inserted = r.rows[0];
  // No row: it joined the waiting one (or a concurrent copy's, which the unique index kept one).
  if (!inserted) return { joined: true };
  return { id: inserted.id, deliverNow: inserted.next_attempt_at.getTime() === row.nextAttemptAt.getTime() };
}

const insertKeptRow = prepared(
  'insert-kept',
  `INSERT INTO webhook_inbox
       (dedupe_key, point, workflow_id, raw_body, headers, received_at, signal_name, signal_payload,
        next_attempt_at, claimed_at, delivered_at, attempts, last_error)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now(), now(), 1, $10)
     RETURNING id`,
);

/**
 * A notification with nothing to signal (it announces the flow's own request), kept as delivered
 * in the one statement on the request path, `note` saying why it was not signalled.
 */
export async function insertKept(pool: Pool, row: NewInboxRow, note: string): Promise<number> {
  const r = await pool.query<{ id: number }>(insertKeptRow([...rowParams(row), note]));
  return r.rows[0]?.id as number;
}

const claimRow = prepared(
  'claim-for-delivery',
  `UPDATE webhook_inbox SET claimed_at = now()
     WHERE id = $1 AND claimed_at IS NULL AND delivered_at IS NULL AND gave_up_at IS NULL`,
);

/**
 * Takes a waiting row for the request's own delivery; false when a relay took it or a copy's
 * window holds it. From here on identical copies get a row of their own.
 */
export async function claimForDelivery(pool: Pool, id: number): Promise<boolean> {
  const r = await pool.query(claimRow([id]));
  return r.rowCount === 1;
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
    `UPDATE webhook_inbox SET next_attempt_at = now() + make_interval(secs => $2::double precision / 1000),
       claimed_at = now()
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

const markRowDelivered = prepared(
  'mark-delivered',
  'UPDATE webhook_inbox SET delivered_at = now(), attempts = attempts + 1, last_error = $2 WHERE id = $1',
);

/** Delivered, or nothing left to deliver to (`note` says why, e.g. the workflow had closed). */
export async function markDelivered(pool: Pool, id: number, note?: string): Promise<void> {
  await pool.query(markRowDelivered([id, note ?? null]));
}

/**
 * The row waits again for its next attempt, and identical copies join it, unless a newer copy
 * already waits: then that one carries the notification and this row is done.
 */
export async function markRetry(pool: Pool, id: number, error: string, nextAttemptAt: Date): Promise<void> {
  try {
    await pool.query(
      `UPDATE webhook_inbox SET attempts = attempts + 1, last_error = $2, next_attempt_at = $3, claimed_at = NULL
       WHERE id = $1`,
      [id, error, nextAttemptAt],
    );
  } catch (err) {
    if ((err as { code?: string }).code !== UNIQUE_VIOLATION) throw err;
    await markDelivered(pool, id, `${error}; a newer identical notification waits and carries it`);
  }
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

/** The body a row was received with, as it came. */
export async function rawBodyOf(pool: Pool, id: number): Promise<string | undefined> {
  const { rows } = await pool.query('SELECT raw_body FROM webhook_inbox WHERE id = $1', [id]);
  return rows[0]?.raw_body;
}
