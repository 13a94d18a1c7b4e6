import type pg from 'pg';
import { type Listener, listenOn } from './listen';
import { inTransaction, type Pool, prepared } from './pool';

// The outbox (migrations 1732000000012, 035 for each event's brand, 041 for a person's events at
// every brand that knows them): events are appended by pixflow_append_event in the statement or
// transaction that makes the change they tell of; here are the SQL pieces writers use to call
// it, the sequencer that gives committed events their reading order, and the reads of the pull
// API.

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** The event types the database writes itself (contracts/events.ts lists them with the rest). */
export const CUSTOMER_VERIFICATION_UPDATED = 'customer.verification_updated';
export const WEBHOOK_ENDPOINT_DISABLED = 'webhook_endpoint.disabled';
export const CUSTOMER_IMPEDED = 'customer.impeded';
export const CUSTOMER_CLOSED = 'customer.closed';

/** A timestamptz as the API writes times: ISO 8601 in UTC with milliseconds. */
export const isoSql = (expr: string) =>
  `to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A flows row (aliased `t`) as the flow's public state, the shape of GET /v1/flows' items. */
export const flowStateJsonSql = (t: string) => `jsonb_build_object(
  'workflowId', ${t}.workflow_id, 'type', ${t}.type, 'businessId', ${t}.business_id, 'status', ${t}.status,
  'cpfHash', ${t}.cpf_hash, 'cpfMasked', ${t}.cpf_masked, 'merchant', ${t}.merchant,
  'amountCentavos', ${t}.amount_centavos, 'reason', ${t}.reason, 'details', ${t}.details,
  'createdAt', ${isoSql(`${t}.created_at`)}, 'updatedAt', ${isoSql(`${t}.updated_at`)})`;

/** A customers row (`t`) after a change of its verification, with the one before (`previous`). */
export const customerStateJsonSql = (t: string, previous: string) => `jsonb_build_object(
  'cpfHash', ${t}.cpf_hash, 'cpfMasked', ${t}.cpf_masked, 'verification', ${t}.verification,
  'previous', ${previous}, 'at', ${isoSql(`${t}.verification_at`)},
  'by', ${t}.verification_flow, 'reason', ${t}.suspended_reason)`;

/** The customer's event stream: one per person, by keyed CPF hash. */
export const customerStreamSql = (t: string) => `'customer-' || ${t}.cpf_hash`;

export interface EventRow {
  id: string;
  type: string;
  /** The brand the event belongs to (migration 1732000000035). */
  brand: string;
  timestamp: string;
  position: number;
  data: {
    flowId: string;
    flowType: string;
    businessId: string | null;
    sequence: number;
    state: Record<string, unknown>;
  };
}

const SEQUENCER_LOCK = 0x706978_6576; // "pix" "ev": one sequencer at a time, across processes

const positionEvents = prepared(
  'position-events',
  `WITH base AS (SELECT coalesce(max(position), 0) AS b FROM events),
        todo AS (SELECT id, row_number() OVER (ORDER BY inserted) AS rn
                   FROM events WHERE position IS NULL ORDER BY inserted LIMIT $1)
   UPDATE events e SET position = base.b + todo.rn
     FROM todo, base
    WHERE e.id = todo.id AND e.position IS NULL`,
);

/**
 * Gives the committed events without a position the next positions, in the order they were
 * inserted; one sequencer at a time (a transaction-scoped advisory lock, skipped when another
 * process holds it). An event that commits later than a bigger-numbered one is positioned in a
 * later round, after it: a reader paging by position never passes an event it has not seen.
 * Answers how many it positioned.
 */
export async function sequenceEvents(pool: Pool, batch = 1000): Promise<number> {
  return inTransaction(pool, async (client) => {
    const { rows: lock } = await client.query('SELECT pg_try_advisory_xact_lock($1) AS held', [
      SEQUENCER_LOCK,
    ]);
    if (!lock[0]?.held) return 0;
    // A statement of its own after the lock: its snapshot sees every earlier sequencer's positions.
    const { rowCount } = await client.query(positionEvents([batch]));
    return rowCount ?? 0;
  });
}

export interface EventFilter {
  /** Only events after this position. */
  after?: number;
  types?: string[];
  flowId?: string;
  /** The caller's API key digest: events about other keys' own things are left out. */
  owner: string;
  /** The acting brand: only its events. */
  brand: string;
  limit: number;
}

/** Events in position order (oldest first), after a position. */
export async function listEvents(db: Queryable, f: EventFilter): Promise<EventRow[]> {
  const where = ['brand_id = $3', 'position IS NOT NULL', 'position > $1', '(owner IS NULL OR owner = $2)'];
  const params: unknown[] = [f.after ?? 0, f.owner, f.brand];
  if (f.types?.length) {
    params.push(f.types);
    where.push(`type = ANY($${params.length})`);
  }
  if (f.flowId) {
    params.push(f.flowId);
    where.push(`stream_id = $${params.length}`);
  }
  params.push(f.limit);
  const { rows } = await db.query(
    `SELECT ${eventColumns} FROM events WHERE ${where.join(' AND ')} ORDER BY position LIMIT $${params.length}`,
    params,
  );
  return rows.map(eventOf);
}

/**
 * The events of some flows (or a person's stream), oldest first, for a case's timeline: every
 * one committed, positioned yet or not. Never an endpoint's owner-only events. A person's event
 * appended for several brands is one change, shown once: by the copy of one of `brands` (the
 * operator's; null, every brand) if there is one, else the default brand's, else the first.
 */
export async function timelineOf(
  db: Queryable,
  streamIds: string[],
  limit = 500,
  brands: readonly string[] | null = null,
): Promise<EventRow[]> {
  const { rows } = await db.query(
    `SELECT * FROM (
       SELECT DISTINCT ON (stream_id, seq) ${eventColumns}, created_at
         FROM events WHERE stream_id = ANY($1) AND owner IS NULL
        ORDER BY stream_id, seq, brand_id = ANY(coalesce($3::text[], '{}')) DESC, brand_id = 'default' DESC,
                 inserted) one
      ORDER BY created_at, stream_id, seq LIMIT $2`,
    [streamIds, limit, brands],
  );
  return rows.map(eventOf);
}

/** One event the caller sees: not another key's own, not another brand's. */
export async function getEvent(
  db: Queryable,
  id: string,
  owner: string,
  brand: string,
): Promise<EventRow | undefined> {
  const { rows } = await db.query(
    `SELECT ${eventColumns} FROM events WHERE id = $1 AND (owner IS NULL OR owner = $2) AND brand_id = $3`,
    [id, owner, brand],
  );
  return rows[0] ? eventOf(rows[0]) : undefined;
}

const eventColumns = `id, type, brand_id, ${isoSql('created_at')} AS ts, coalesce(position, 0) AS position, stream_id,
  stream_type, business_id, seq, data`;

function eventOf(r: Record<string, unknown>): EventRow {
  return {
    id: r.id as string,
    type: r.type as string,
    brand: r.brand_id as string,
    timestamp: r.ts as string,
    position: Number(r.position),
    data: {
      flowId: r.stream_id as string,
      flowType: r.stream_type as string,
      businessId: (r.business_id as string | null) ?? null,
      sequence: r.seq as number,
      state: r.data as Record<string, unknown>,
    },
  };
}

/**
 * Deletes the events older than the retention (their deliveries and attempts go with them), a
 * batch per statement so no one transaction holds many rows; answers how many.
 */
export async function pruneEvents(pool: Pool, keepMs: number, batch = 5000): Promise<number> {
  let total = 0;
  for (;;) {
    const { rowCount } = await pool.query(
      `DELETE FROM events WHERE id IN (
         SELECT id FROM events WHERE created_at < now() - $1::bigint * interval '1 millisecond' LIMIT $2)`,
      [keepMs, batch],
    );
    total += rowCount ?? 0;
    if ((rowCount ?? 0) < batch) return total;
  }
}

/** The channel a committed event notifies (migration 1732000000025). */
const EVENTS_CHANNEL = 'pixflow_events';

export type EventsListener = Listener;

/**
 * Calls `onEvent` on each notification of committed events, on a connection of its own (the
 * pool's settings). A lost connection is made again after `retryMs`, and `onEvent` is called once
 * it listens again, for the events committed meanwhile.
 */
export function listenForEvents(
  pool: Pool,
  onEvent: () => void,
  onLost: (err: unknown) => void,
  retryMs = 1_000,
): EventsListener {
  return listenOn(pool, EVENTS_CHANNEL, onEvent, onLost, retryMs);
}
