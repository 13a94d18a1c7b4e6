import type pg from 'pg';
import { isoSql } from './events';

// Webhook endpoints (migration 1732000000012), each owned by the API key that created it and
// belonging to the brand that key acted for (migration 035): every read and write here is scoped
// by that owner and brand, so another key's endpoint, or another brand's (a platform key acting
// for another), is simply not found.
// Secrets arrive and leave sealed (the API seals and opens them).

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

export interface EndpointRow {
  id: string;
  url: string;
  description: string;
  events: string[];
  enabled: boolean;
  secret: string;
  previousSecret: string | null;
  previousSecretUntil: string | null;
  failingSince: string | null;
  disabledReason: string | null;
  disabledAt: string | null;
  createdAt: string;
  updatedAt: string;
}

const columns = `id, url, description, events, enabled, secret, previous_secret,
  ${isoSql('previous_secret_until')} AS previous_secret_until, ${isoSql('failing_since')} AS failing_since,
  disabled_reason, ${isoSql('disabled_at')} AS disabled_at, ${isoSql('created_at')} AS created_at,
  ${isoSql('updated_at')} AS updated_at`;

function endpointOf(r: Record<string, unknown>): EndpointRow {
  return {
    id: r.id as string,
    url: r.url as string,
    description: r.description as string,
    events: r.events as string[],
    enabled: r.enabled as boolean,
    secret: r.secret as string,
    previousSecret: (r.previous_secret as string | null) ?? null,
    previousSecretUntil: (r.previous_secret_until as string | null) ?? null,
    failingSince: (r.failing_since as string | null) ?? null,
    disabledReason: (r.disabled_reason as string | null) ?? null,
    disabledAt: (r.disabled_at as string | null) ?? null,
    createdAt: r.created_at as string,
    updatedAt: r.updated_at as string,
  };
}

export interface NewEndpoint {
  id: string;
  owner: string;
  /** The acting brand of the key creating it: the endpoint receives that brand's events only. */
  brand: string;
  url: string;
  description: string;
  events: string[];
  secret: string;
}

export async function createEndpoint(db: Queryable, e: NewEndpoint): Promise<EndpointRow> {
  const { rows } = await db.query(
    `INSERT INTO webhook_endpoints (id, owner, brand_id, url, description, events, secret)
     VALUES ($1, $2, $7, $3, $4, $5, $6) RETURNING ${columns}`,
    [e.id, e.owner, e.url, e.description, e.events, e.secret, e.brand],
  );
  return endpointOf(rows[0]);
}

export async function listEndpoints(db: Queryable, owner: string, brand: string): Promise<EndpointRow[]> {
  const { rows } = await db.query(
    `SELECT ${columns} FROM webhook_endpoints WHERE owner = $1 AND brand_id = $2 ORDER BY created_at, id`,
    [owner, brand],
  );
  return rows.map(endpointOf);
}

export async function getEndpoint(
  db: Queryable,
  id: string,
  owner: string,
  brand: string,
): Promise<EndpointRow | undefined> {
  const { rows } = await db.query(
    `SELECT ${columns} FROM webhook_endpoints WHERE id = $1 AND owner = $2 AND brand_id = $3`,
    [id, owner, brand],
  );
  return rows[0] ? endpointOf(rows[0]) : undefined;
}

export interface EndpointChange {
  url?: string | undefined;
  description?: string | undefined;
  events?: string[] | undefined;
  enabled?: boolean | undefined;
}

/**
 * Changes what is given. Enabling an endpoint forgets why it was disabled and its failures: its
 * pending deliveries resume.
 */
export async function updateEndpoint(
  db: Queryable,
  id: string,
  owner: string,
  brand: string,
  c: EndpointChange,
): Promise<EndpointRow | undefined> {
  const { rows } = await db.query(
    `UPDATE webhook_endpoints SET
       url = coalesce($3::text, url), description = coalesce($4::text, description),
       events = coalesce($5::text[], events), enabled = coalesce($6::boolean, enabled),
       disabled_reason = CASE WHEN $6::boolean IS TRUE THEN NULL ELSE disabled_reason END,
       disabled_at = CASE WHEN $6::boolean IS TRUE THEN NULL ELSE disabled_at END,
       failing_since = CASE WHEN $6::boolean IS TRUE THEN NULL ELSE failing_since END,
       updated_at = now()
     WHERE id = $1 AND owner = $2 AND brand_id = $7 RETURNING ${columns}`,
    [id, owner, c.url ?? null, c.description ?? null, c.events ?? null, c.enabled ?? null, brand],
  );
  return rows[0] ? endpointOf(rows[0]) : undefined;
}

export async function deleteEndpoint(
  db: Queryable,
  id: string,
  owner: string,
  brand: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    'DELETE FROM webhook_endpoints WHERE id = $1 AND owner = $2 AND brand_id = $3',
    [id, owner, brand],
  );
  return (rowCount ?? 0) > 0;
}

/** The new secret signs from now on; the one it replaces signs beside it for `overlapMs`. */
export async function rotateEndpointSecret(
  db: Queryable,
  id: string,
  owner: string,
  brand: string,
  sealed: string,
  overlapMs: number,
): Promise<EndpointRow | undefined> {
  const { rows } = await db.query(
    `UPDATE webhook_endpoints SET previous_secret = secret, secret = $3,
            previous_secret_until = now() + $4::bigint * interval '1 millisecond', updated_at = now()
      WHERE id = $1 AND owner = $2 AND brand_id = $5 RETURNING ${columns}`,
    [id, owner, sealed, overlapMs, brand],
  );
  return rows[0] ? endpointOf(rows[0]) : undefined;
}

export interface AttemptRow {
  id: number;
  eventId: string;
  eventType: string;
  attempt: number;
  at: string;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  response: string | null;
  outcome: 'delivered' | 'failed' | 'gone';
}

/** An endpoint's attempts, newest first, before an attempt id. */
export async function listAttempts(
  db: Queryable,
  endpointId: string,
  p: { before?: number | undefined; eventId?: string | undefined; limit: number },
): Promise<AttemptRow[]> {
  const { rows } = await db.query(
    `SELECT a.id, a.event_id, e.type, a.attempt, ${isoSql('a.at')} AS at, a.duration_ms, a.status_code, a.error,
            a.response, a.outcome
       FROM webhook_attempts a LEFT JOIN events e ON e.id = a.event_id
      WHERE a.endpoint_id = $1 AND ($2::bigint IS NULL OR a.id < $2) AND ($3::text IS NULL OR a.event_id = $3)
      ORDER BY a.id DESC LIMIT $4`,
    [endpointId, p.before ?? null, p.eventId ?? null, p.limit],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    eventId: r.event_id,
    eventType: r.type,
    attempt: r.attempt,
    at: r.at,
    durationMs: r.duration_ms,
    statusCode: r.status_code,
    error: r.error,
    response: r.response,
    outcome: r.outcome,
  }));
}
