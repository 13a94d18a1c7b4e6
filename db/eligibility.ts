import type pg from 'pg';
import { CUSTOMER_CLOSED, CUSTOMER_IMPEDED, customerStreamSql, isoSql } from './events';

// The registry of impeded people's last answer about a person, on their customers row (migration
// 1732000000019): what a deposit reuses while it is fresh, and the person's `impeded` record.
// The record outlives the registry's bar: it stays until an operator reinstates the person
// (migration 1732000000022), so a later `eligible` answer never lets deposits in by itself.

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

export interface EligibilityRecord {
  /** The recorded eligibility: `impeded` from the registry's bar until an operator reinstates. */
  status: 'eligible' | 'impeded';
  /** The registry's latest answer, which may be `eligible` while the record still holds. */
  registryAnswer: 'eligible' | 'impeded';
  checkedAt: Date;
  impeded: { reason: string; since: string; until: string | null; source: string } | null;
  closed: { at: string; by: string; reason: string } | null;
}

/** The person's last recorded answer, if any. */
export async function eligibilityOfHash(
  db: Queryable,
  cpfHash: string,
): Promise<EligibilityRecord | undefined> {
  const { rows } = await db.query(`SELECT * FROM customers WHERE cpf_hash = $1 AND eligibility IS NOT NULL`, [
    cpfHash,
  ]);
  const r = rows[0];
  if (!r) return undefined;
  return recordOf(r);
}

/** What a new deposit's rules read about the person, in one statement (activities/deposit-screening.ts). */
export interface DepositStanding {
  verification: string | undefined;
  eligibility: EligibilityRecord | undefined;
  /** Whether the person ever set a deposit limit: without one, nothing is reserved. */
  hasDepositLimits: boolean;
}

/** The person's verification, last eligibility answer and whether they set deposit limits. */
export async function depositStandingOfHash(db: Queryable, cpfHash: string): Promise<DepositStanding> {
  const { rows } = await db.query(
    `SELECT c.*, EXISTS (SELECT 1 FROM deposit_limits WHERE cpf_hash = $1) AS has_deposit_limits
       FROM (SELECT 1) one LEFT JOIN customers c ON c.cpf_hash = $1`,
    [cpfHash],
  );
  const r = rows[0];
  return {
    verification: r?.verification ?? undefined,
    eligibility: r?.eligibility ? recordOf(r) : undefined,
    hasDepositLimits: r?.has_deposit_limits === true,
  };
}

/**
 * Locks the person's customers row until the transaction ends (an operator's decision on them)
 * and answers their recorded eligibility, if any.
 */
export async function lockCustomerEligibility(
  client: pg.PoolClient,
  cpfHash: string,
): Promise<EligibilityRecord | undefined> {
  const { rows } = await client.query('SELECT * FROM customers WHERE cpf_hash = $1 FOR UPDATE', [cpfHash]);
  return rows[0] && rows[0].eligibility !== null ? recordOf(rows[0]) : undefined;
}

// biome-ignore lint/suspicious/noExplicitAny: a pg row
export function recordOf(r: any): EligibilityRecord {
  return {
    status: r.eligibility,
    registryAnswer: r.registry_answer ?? r.eligibility,
    checkedAt: r.eligibility_checked_at,
    impeded:
      r.eligibility === 'impeded'
        ? {
            reason: r.impeded_reason,
            since: (r.impeded_since as Date).toISOString(),
            until: r.impeded_until ? (r.impeded_until as Date).toISOString() : null,
            source: r.impeded_source,
          }
        : null,
    closed: r.closed_at
      ? { at: (r.closed_at as Date).toISOString(), by: r.closed_by, reason: r.closed_reason }
      : null,
  };
}

export interface EligibilityWrite {
  cpfHash: string;
  cpfMasked: string;
  /** The CPF sealed (common/secret-box.ts), so the rescreening can ask about the person again. */
  cpfSealed?: string;
  status: 'eligible' | 'impeded';
  reason: string | null;
  until: string | null;
  /** Which check asked: registry:<purpose>. */
  source: string;
  at: Date;
}

/**
 * Records an answer (and the person, if new); an older answer never replaces a newer one. A
 * person newly impeded, or impeded for another reason, gets a `customer.impeded` event in the
 * same statement; `since` and `source` stay those of the first answer while the reason holds.
 * An `eligible` answer for a person recorded impeded is kept as the registry's latest answer
 * only: the impediment stays until an operator reinstates them (reinstate below).
 * Answers whether the event was written.
 */
export async function recordEligibility(db: Queryable, w: EligibilityWrite): Promise<boolean> {
  const { rows } = await db.query(
    `WITH prev AS (SELECT eligibility, impeded_reason FROM customers WHERE cpf_hash = $1),
          up AS (
     INSERT INTO customers (cpf_hash, cpf_masked, eligibility, registry_answer, eligibility_checked_at,
                            impeded_reason, impeded_until, impeded_since, impeded_source, cpf_sealed,
                            created_at, updated_at)
     VALUES ($1, $2, $3, $3, $4, $5, $6, CASE WHEN $3 = 'impeded' THEN $4::timestamptz END,
             CASE WHEN $3 = 'impeded' THEN $7 END, $8, $4, $4)
     ON CONFLICT (cpf_hash) DO UPDATE SET
       cpf_sealed = COALESCE(EXCLUDED.cpf_sealed, customers.cpf_sealed),
       eligibility = CASE WHEN customers.eligibility = 'impeded' THEN 'impeded' ELSE EXCLUDED.eligibility END,
       registry_answer = EXCLUDED.registry_answer,
       eligibility_checked_at = EXCLUDED.eligibility_checked_at,
       impeded_reason = CASE WHEN EXCLUDED.eligibility = 'eligible' AND customers.eligibility = 'impeded'
                             THEN customers.impeded_reason ELSE EXCLUDED.impeded_reason END,
       impeded_until = CASE WHEN EXCLUDED.eligibility = 'eligible' AND customers.eligibility = 'impeded'
                            THEN customers.impeded_until ELSE EXCLUDED.impeded_until END,
       impeded_since = CASE WHEN customers.eligibility = 'impeded'
                             AND (customers.impeded_reason = EXCLUDED.impeded_reason OR EXCLUDED.eligibility = 'eligible')
                            THEN customers.impeded_since ELSE EXCLUDED.impeded_since END,
       impeded_source = CASE WHEN customers.eligibility = 'impeded'
                              AND (customers.impeded_reason = EXCLUDED.impeded_reason OR EXCLUDED.eligibility = 'eligible')
                             THEN customers.impeded_source ELSE EXCLUDED.impeded_source END,
       updated_at = EXCLUDED.updated_at
     WHERE customers.eligibility_checked_at IS NULL
        OR customers.eligibility_checked_at <= EXCLUDED.eligibility_checked_at
     RETURNING *),
          ev AS (
     SELECT pixflow_append_event('${CUSTOMER_IMPEDED}', ${customerStreamSql('up')}, 'customer', up.cpf_hash,
              jsonb_build_object('cpfHash', up.cpf_hash, 'cpfMasked', up.cpf_masked, 'impeded', true,
                                 'reason', up.impeded_reason, 'since', ${isoSql('up.impeded_since')},
                                 'until', ${isoSql('up.impeded_until')}, 'source', up.impeded_source)) AS id
       FROM up LEFT JOIN prev ON true
      WHERE up.eligibility = 'impeded'
        AND (prev.eligibility IS DISTINCT FROM 'impeded' OR prev.impeded_reason IS DISTINCT FROM up.impeded_reason))
     SELECT (SELECT count(*) FROM ev)::int AS events`,
    [w.cpfHash, w.cpfMasked, w.status, w.at, w.reason, w.until, w.source, w.cpfSealed ?? null],
  );
  return (rows[0]?.events ?? 0) > 0;
}

export interface ActiveCustomer {
  cpfHash: string;
  /** Null for a person screened before CPFs were kept sealed: the pass cannot ask about them. */
  cpfSealed: string | null;
}

/**
 * Customers active since `since` (a flow of theirs changed, or their verification did), after
 * `after` in cpf_hash order: the rescreening's keyset page. Eligibility answers do not count as
 * activity, or the rescreening would keep everyone active for ever.
 */
export async function activeCustomersPage(
  db: Queryable,
  p: { since: Date; after: string | null; limit: number },
): Promise<ActiveCustomer[]> {
  const { rows } = await db.query(
    `SELECT c.cpf_hash, c.cpf_sealed FROM customers c
      WHERE ($2::text IS NULL OR c.cpf_hash > $2)
        AND (c.verification_at >= $1
             OR EXISTS (SELECT 1 FROM flows f WHERE f.cpf_hash = c.cpf_hash AND f.updated_at >= $1))
      ORDER BY c.cpf_hash LIMIT $3`,
    [p.since, p.after, p.limit],
  );
  return rows.map((r) => ({ cpfHash: r.cpf_hash, cpfSealed: r.cpf_sealed }));
}

export interface ClosureWrite {
  cpfHash: string;
  by: string;
  reason: string;
  at: Date;
}

/**
 * Closes an impeded person's account, with a `customer.closed` event in the same statement.
 * Only an impeded, open person: answers the row after, or undefined when not (the caller reads
 * what it found).
 */
export async function closeCustomer(db: Queryable, w: ClosureWrite): Promise<EligibilityRecord | undefined> {
  const { rows } = await db.query(
    `WITH up AS (
       UPDATE customers SET closed_at = $2, closed_by = $3, closed_reason = $4, updated_at = $2
        WHERE cpf_hash = $1 AND eligibility = 'impeded' AND closed_at IS NULL
       RETURNING *),
          ev AS (
       SELECT pixflow_append_event('${CUSTOMER_CLOSED}', ${customerStreamSql('up')}, 'customer', up.cpf_hash,
                jsonb_build_object('cpfHash', up.cpf_hash, 'cpfMasked', up.cpf_masked, 'closed', true,
                                   'at', ${isoSql('up.closed_at')}, 'reason', up.impeded_reason)) AS id
         FROM up)
     SELECT up.*, (SELECT count(*) FROM ev) AS events FROM up`,
    [w.cpfHash, w.at, w.by, w.reason],
  );
  return rows[0] ? recordOf(rows[0]) : undefined;
}

/**
 * Lifts a person's recorded impediment (and closure), only when the registry's latest answer is
 * `eligible`: answers the row after, or undefined when not.
 */
export async function reinstateCustomer(
  db: Queryable,
  w: { cpfHash: string; at: Date },
): Promise<EligibilityRecord | undefined> {
  const { rows } = await db.query(
    `UPDATE customers SET eligibility = 'eligible', impeded_reason = NULL, impeded_until = NULL,
            impeded_since = NULL, impeded_source = NULL, closed_at = NULL, closed_by = NULL,
            closed_reason = NULL, updated_at = $2
      WHERE cpf_hash = $1 AND eligibility = 'impeded' AND registry_answer = 'eligible'
     RETURNING *`,
    [w.cpfHash, w.at],
  );
  return rows[0] ? recordOf(rows[0]) : undefined;
}

/** Whether the person's account is closed (a new deposit is refused). */
export async function isClosed(db: Queryable, cpfHash: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM customers WHERE cpf_hash = $1 AND closed_at IS NOT NULL', [
    cpfHash,
  ]);
  return rows.length > 0;
}
