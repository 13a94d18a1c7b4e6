import type pg from 'pg';
import { isoSql, WEBHOOK_ENDPOINT_DISABLED } from './events';
import { inTransaction, type Pool, prepared } from './pool';

// The delivery queue (migration 1732000000012): one row per (event, endpoint), claimed with
// FOR UPDATE SKIP LOCKED by any number of relays, leased while an attempt runs, and finished with
// the attempt's record in one transaction.

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

export interface ClaimedDelivery {
  id: number;
  eventId: string;
  endpointId: string;
  streamId: string;
  attempt: number;
  url: string;
  /** Sealed secrets that sign this attempt: the current one, and the previous during its overlap. */
  secrets: string[];
  body: {
    type: string;
    brand: string;
    timestamp: string;
    data: { flowId: string; flowType: string; businessId: string | null; sequence: number; state: unknown };
  };
}

export interface ClaimOptions {
  batch: number;
  /** How long a claimed delivery is left alone: longer than one attempt can take. */
  leaseMs: number;
  perEndpoint: number;
  /** Deliveries this process has in flight per endpoint: they count against perEndpoint. */
  busy: ReadonlyMap<string, number>;
}

const dueDeliveries = prepared(
  'claim-deliveries',
  `WITH due AS (
       SELECT d.id, d.endpoint_id FROM webhook_deliveries d
         JOIN webhook_endpoints ep ON ep.id = d.endpoint_id AND ep.enabled
        WHERE d.state = 'pending' AND d.next_attempt_at <= now()
        ORDER BY d.next_attempt_at LIMIT $1::int * 4),
     ranked AS (SELECT id, endpoint_id, row_number() OVER (PARTITION BY endpoint_id ORDER BY id) AS rn FROM due),
     pick AS (
       SELECT d.id FROM webhook_deliveries d JOIN ranked r ON r.id = d.id
        WHERE r.rn <= $3::int - coalesce(($4::jsonb ->> r.endpoint_id)::int, 0)
          AND d.state = 'pending' AND d.next_attempt_at <= now()
        LIMIT $1::int
        FOR UPDATE OF d SKIP LOCKED)
     UPDATE webhook_deliveries d
        SET attempts = d.attempts + 1, next_attempt_at = now() + $2::bigint * interval '1 millisecond'
       FROM pick, events e, webhook_endpoints ep
      WHERE d.id = pick.id AND e.id = d.event_id AND ep.id = d.endpoint_id
     RETURNING d.id, d.event_id, d.endpoint_id, d.stream_id, d.attempts, e.type, ${isoSql('e.created_at')} AS ts,
               e.stream_type, e.business_id, e.seq, e.data, e.brand_id, ep.url, ep.secret,
               CASE WHEN ep.previous_secret_until > now() THEN ep.previous_secret END AS previous_secret`,
);

/**
 * Claims due deliveries of enabled endpoints, at most `perEndpoint` in flight per endpoint (with
 * what `busy` says runs already), and leases them. Each comes with its event's body and its
 * endpoint's URL and sealed secrets.
 */
export async function claimDeliveries(pool: Pool, o: ClaimOptions): Promise<ClaimedDelivery[]> {
  const { rows } = await pool.query(
    dueDeliveries([o.batch, o.leaseMs, o.perEndpoint, JSON.stringify(Object.fromEntries(o.busy))]),
  );
  return rows.map((r) => ({
    id: Number(r.id),
    eventId: r.event_id,
    endpointId: r.endpoint_id,
    streamId: r.stream_id,
    attempt: r.attempts,
    url: r.url,
    secrets: [r.secret, ...(r.previous_secret ? [r.previous_secret] : [])],
    body: {
      type: r.type,
      brand: r.brand_id,
      timestamp: r.ts,
      data: {
        flowId: r.stream_id,
        flowType: r.stream_type,
        businessId: r.business_id ?? null,
        sequence: r.seq,
        state: r.data,
      },
    },
  }));
}

export interface AttemptResult {
  delivery: Pick<ClaimedDelivery, 'id' | 'eventId' | 'endpointId' | 'streamId' | 'attempt'>;
  at: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  response: string | null;
  outcome: 'delivered' | 'failed' | 'gone';
  /** When to try again after a failure; undefined: the schedule is over, give it up. */
  retryAt?: Date | undefined;
  /** Failing this long since the last success disables the endpoint. */
  disableAfterMs: number;
}

/**
 * Records an attempt and what follows from it, in one transaction: the delivery delivered, due
 * again, or given up (then the next event of its stream is due); the endpoint's health, and the
 * endpoint disabled (with its event) on a 410 or after failing for `disableAfterMs`. Answers
 * whether the endpoint was disabled by it.
 */
export async function finishAttempt(pool: Pool, a: AttemptResult): Promise<{ disabled: boolean }> {
  const d = a.delivery;
  const final = a.outcome === 'delivered' || a.retryAt === undefined;
  return inTransaction(pool, async (db) => {
    // The stream's appenders hold this lock too: none adds an event behind this one unseen.
    await db.query('SELECT 1 FROM event_streams WHERE stream_id = $1 FOR UPDATE', [d.streamId]);
    await db.query(
      `INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, attempt, at, duration_ms, status_code,
                                     error, response, outcome)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        d.id,
        d.endpointId,
        d.eventId,
        d.attempt,
        a.at,
        a.durationMs,
        a.statusCode,
        a.error,
        a.response,
        a.outcome,
      ],
    );
    await db.query(
      `UPDATE webhook_deliveries SET
         state = CASE WHEN $2::text = 'delivered' THEN 'delivered' WHEN $3::timestamptz IS NULL THEN 'failed' ELSE state END,
         delivered_at = CASE WHEN $2::text = 'delivered' THEN now() ELSE delivered_at END,
         next_attempt_at = coalesce($3::timestamptz, next_attempt_at)
       WHERE id = $1 AND state = 'pending'`,
      [d.id, a.outcome, a.outcome === 'delivered' ? null : (a.retryAt ?? null)],
    );
    if (final) await releaseNext(db, d.endpointId, d.streamId);
    if (a.outcome === 'delivered') {
      await db.query(
        'UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL',
        [d.endpointId],
      );
      return { disabled: false };
    }
    return { disabled: await noteFailure(db, d.endpointId, a.outcome === 'gone', a.disableAfterMs) };
  });
}

export type DeliveredAttempt = Pick<
  AttemptResult,
  'delivery' | 'at' | 'durationMs' | 'statusCode' | 'response'
>;

const finishDeliveredCall = prepared(
  'finish-delivered',
  `SELECT id FROM pixflow_finish_delivered($1::bigint[], $2::text[], $3::text[], $4::text[], $5::int[],
                                          $6::timestamptz[], $7::int[], $8::int[], $9::text[]) AS id`,
);

/**
 * Records delivered attempts together, in one statement whatever their number (migration
 * 1732000000042): what finishAttempt does for each, for the deliveries whose stream no appender
 * holds now, their streams locked only while it runs. Answers the others, left untouched:
 * finishAttempt records them one by one, waiting for their stream.
 */
export async function finishDelivered(pool: Pool, attempts: DeliveredAttempt[]): Promise<DeliveredAttempt[]> {
  if (attempts.length === 0) return [];
  const d = attempts.map((a) => a.delivery);
  const { rows } = await pool.query<{ id: number }>(
    finishDeliveredCall([
      d.map((x) => x.id),
      d.map((x) => x.endpointId),
      d.map((x) => x.eventId),
      d.map((x) => x.streamId),
      d.map((x) => x.attempt),
      attempts.map((a) => a.at),
      attempts.map((a) => a.durationMs),
      attempts.map((a) => a.statusCode),
      attempts.map((a) => a.response),
    ]),
  );
  const left = new Set(rows.map((r) => Number(r.id)));
  return attempts.filter((a) => left.has(a.delivery.id));
}

/** The next pending event of the stream for the endpoint becomes due, if it was waiting. */
async function releaseNext(db: Queryable, endpointId: string, streamId: string) {
  await db.query(
    `UPDATE webhook_deliveries SET next_attempt_at = now()
      WHERE id = (SELECT id FROM webhook_deliveries
                   WHERE endpoint_id = $1 AND stream_id = $2 AND state = 'pending' ORDER BY seq LIMIT 1)
        AND next_attempt_at = 'infinity'`,
    [endpointId, streamId],
  );
}

/** Marks the endpoint failing; disables it (and appends the event saying so) when it must be. */
async function noteFailure(db: Queryable, endpointId: string, gone: boolean, disableAfterMs: number) {
  const { rows } = await db.query(
    `WITH cur AS (
       SELECT id, ($2::boolean OR coalesce(failing_since, now()) <= now() - $3::bigint * interval '1 millisecond') AS off
         FROM webhook_endpoints WHERE id = $1 AND enabled FOR UPDATE),
     up AS (
       UPDATE webhook_endpoints ep SET
         failing_since = coalesce(ep.failing_since, now()),
         enabled = NOT cur.off,
         disabled_reason = CASE WHEN cur.off THEN (CASE WHEN $2::boolean THEN 'gone' ELSE 'failing' END) END,
         disabled_at = CASE WHEN cur.off THEN now() END,
         updated_at = CASE WHEN cur.off THEN now() ELSE ep.updated_at END
        FROM cur WHERE ep.id = cur.id
       RETURNING ep.*)
     SELECT up.enabled, CASE WHEN NOT up.enabled THEN pixflow_append_event('${WEBHOOK_ENDPOINT_DISABLED}', up.id,
              'webhook_endpoint', up.id, jsonb_build_object('id', up.id, 'url', up.url, 'reason', up.disabled_reason,
              'disabledAt', ${isoSql('up.disabled_at')}), up.owner, up.brand_id) END AS event
       FROM up`,
    [endpointId, gone, disableAfterMs],
  );
  return rows[0] !== undefined && rows[0].enabled === false;
}

/**
 * Sends an event again to the caller's enabled endpoints subscribed to its type (or to one of
 * them): a new delivery, or the old one made due again, with the same webhook-id. Answers the
 * endpoints it goes to; undefined when the caller cannot see the event (another key's own, or
 * another brand's: the acting brand's endpoints get the acting brand's events only).
 */
export async function redeliverEvent(
  db: Queryable,
  eventId: string,
  owner: string,
  brand: string,
  endpointId?: string,
): Promise<string[] | undefined> {
  const { rows: seen } = await db.query(
    'SELECT 1 FROM events WHERE id = $1 AND (owner IS NULL OR owner = $2) AND brand_id = $3',
    [eventId, owner, brand],
  );
  if (seen.length === 0) return undefined;
  const { rows } = await db.query(
    `INSERT INTO webhook_deliveries (event_id, endpoint_id, stream_id, seq, next_attempt_at)
     SELECT e.id, ep.id, e.stream_id, e.seq, now()
       FROM events e JOIN webhook_endpoints ep
         ON ep.owner = $2 AND ep.brand_id = e.brand_id AND ep.enabled AND ('*' = ANY (ep.events) OR e.type = ANY (ep.events))
      WHERE e.id = $1 AND ($3::text IS NULL OR ep.id = $3)
     ON CONFLICT (event_id, endpoint_id) DO UPDATE SET state = 'pending', next_attempt_at = now(), delivered_at = NULL
     RETURNING endpoint_id`,
    [eventId, owner, endpointId ?? null],
  );
  return rows.map((r) => r.endpoint_id as string);
}
