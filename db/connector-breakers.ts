import type pg from 'pg';

// The circuit breaker of each connector deposits are routed to (docs/rules.md, Routing deposits),
// in Postgres so every worker skips a connector the others found down. Time is the caller's
// `now`, never the database's: one clock decides a deposit's routing.

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** When a breaker opens and for how long (the policy's `deposits.routing.breaker`). */
export interface BreakerSettings {
  /** Failed charge creations within the window that open it. */
  failures: number;
  windowMs: number;
  coolDownMs: number;
}

/** `half_open`: the cool-down passed; the next deposit tries the connector. */
export type BreakerState = 'closed' | 'open' | 'half_open';

export interface ConnectorBreaker {
  connector: string;
  state: BreakerState;
  /** Failed charge creations in the current window (0 once the window passed). */
  failures: number;
  /** Until when an open breaker skips the connector. */
  openUntil?: string;
  /** When it last opened. */
  openedAt?: string;
}

interface BreakerRow {
  connector: string;
  failures: number;
  window_started_at: Date | null;
  open_until: Date | null;
  opened_at: Date | null;
}

const closed = (connector: string): ConnectorBreaker => ({ connector, state: 'closed', failures: 0 });

function breakerOf(r: BreakerRow, now: Date, windowMs?: number): ConnectorBreaker {
  const inWindow =
    r.window_started_at !== null &&
    (windowMs === undefined || r.window_started_at.getTime() > now.getTime() - windowMs);
  const state: BreakerState =
    r.open_until === null ? 'closed' : r.open_until.getTime() > now.getTime() ? 'open' : 'half_open';
  return {
    connector: r.connector,
    state,
    failures: inWindow || state !== 'closed' ? r.failures : 0,
    ...(r.open_until ? { openUntil: r.open_until.toISOString() } : {}),
    ...(r.opened_at ? { openedAt: r.opened_at.toISOString() } : {}),
  };
}

/**
 * Records how a charge creation went, in one statement, so workers recording at once never lose
 * a count. A success closes the breaker and clears its count. A failure counts in the window
 * that began with the first failure of it (a failure after the window starts a new one); the
 * `failures`-th within it opens the breaker until now + cool-down. A failure of the try a
 * half-open breaker allows opens it again at once; one while it is open leaves it as it is.
 */
export async function recordChargeOutcome(
  db: Queryable,
  connector: string,
  ok: boolean,
  settings: BreakerSettings,
  now: Date,
): Promise<ConnectorBreaker> {
  // $1 connector, $2 ok, $3 now, $4 failures that open it, $5 window ms, $6 cool-down ms.
  const windowPassed = `(b.window_started_at IS NULL OR b.window_started_at <= $3::timestamptz - make_interval(secs => $5::bigint / 1000.0))`;
  const counted = `(CASE WHEN ${windowPassed} THEN 1 ELSE b.failures + 1 END)`;
  const reopen = `$3::timestamptz + make_interval(secs => $6::bigint / 1000.0)`;
  const { rows } = await db.query<BreakerRow>(
    `INSERT INTO connector_breakers AS b (connector, failures, window_started_at, open_until, opened_at, updated_at)
     VALUES ($1, CASE WHEN $2 THEN 0 ELSE 1 END,
             CASE WHEN $2 THEN NULL ELSE $3::timestamptz END,
             CASE WHEN NOT $2 AND $4::int <= 1 THEN ${reopen} END,
             CASE WHEN NOT $2 AND $4::int <= 1 THEN $3::timestamptz END,
             $3::timestamptz)
     ON CONFLICT (connector) DO UPDATE SET
       failures = CASE WHEN $2 THEN 0 ELSE ${counted} END,
       window_started_at = CASE WHEN $2 THEN NULL WHEN ${windowPassed} THEN $3::timestamptz ELSE b.window_started_at END,
       open_until = CASE
         WHEN $2 THEN NULL
         WHEN b.open_until > $3::timestamptz THEN b.open_until
         WHEN b.open_until IS NOT NULL OR ${counted}   >= $4::int THEN ${reopen}
       END,
       opened_at = CASE
         WHEN $2 THEN b.opened_at
         WHEN b.open_until > $3::timestamptz THEN b.opened_at
         WHEN b.open_until IS NOT NULL OR ${counted}   >= $4::int THEN $3::timestamptz
         ELSE b.opened_at
       END,
       probe_until = NULL,
       updated_at = $3::timestamptz
     RETURNING connector, failures, window_started_at, open_until, opened_at`,
    [connector, ok, now, settings.failures, settings.windowMs, settings.coolDownMs],
  );
  return breakerOf(rows[0] as BreakerRow, now);
}

/** The breakers of `names`, in that order; a connector never recorded is closed. */
export async function connectorBreakers(
  db: Queryable,
  names: readonly string[],
  now: Date,
  windowMs?: number,
): Promise<ConnectorBreaker[]> {
  const { rows } = await db.query<BreakerRow>(
    `SELECT connector, failures, window_started_at, open_until, opened_at
       FROM connector_breakers WHERE connector = ANY($1::text[])`,
    [names],
  );
  const byName = new Map(rows.map((r) => [r.connector, r]));
  return names.map((n) => {
    const r = byName.get(n);
    return r ? breakerOf(r, now, windowMs) : closed(n);
  });
}

/** The names among `names` whose breaker is open at `now` (the cool-down not over). */
export async function openBreakers(db: Queryable, names: readonly string[], now: Date): Promise<Set<string>> {
  const breakers = await connectorBreakers(db, names, now);
  return new Set(breakers.filter((b) => b.state === 'open').map((b) => b.connector));
}

/**
 * Takes the one try a half-open breaker allows, for `probeMs` (the charge's own time limit): true
 * for the deposit that took it; every other one skips the connector as open meanwhile. A try
 * that never records its outcome frees the breaker for another when `probeMs` passes.
 */
export async function claimHalfOpenTry(
  db: Queryable,
  connector: string,
  now: Date,
  probeMs: number,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE connector_breakers
        SET probe_until = $2::timestamptz + make_interval(secs => $3::bigint / 1000.0)
      WHERE connector = $1 AND open_until <= $2::timestamptz
        AND (probe_until IS NULL OR probe_until <= $2::timestamptz)`,
    [connector, now, probeMs],
  );
  return rowCount === 1;
}

/**
 * The connector each of these deposits' charges was made by (its flows row's `connector`), by
 * workflow id; a deposit from before routing has none.
 */
export async function depositConnectors(
  db: Queryable,
  workflowIds: readonly string[],
): Promise<Map<string, string>> {
  if (workflowIds.length === 0) return new Map();
  const { rows } = await db.query<{ workflow_id: string; connector: string }>(
    `SELECT workflow_id, details->>'connector' AS connector
       FROM flows WHERE workflow_id = ANY($1::text[]) AND details ? 'connector'`,
    [workflowIds],
  );
  return new Map(rows.map((r) => [r.workflow_id, r.connector]));
}
