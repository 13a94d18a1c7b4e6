import type pg from 'pg';
import { CUSTOMER_IMPEDED, customerStreamSql, isoSql } from './events';

// The registry of impeded people's last answer about a person, on their customers row (migration
// 1732000000019): what a deposit reuses while it is fresh, and the person's `impeded` record.

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

export interface EligibilityRecord {
  status: 'eligible' | 'impeded';
  checkedAt: Date;
  impeded: { reason: string; since: string; until: string | null; source: string } | null;
}

/** The person's last recorded answer, if any. */
export async function eligibilityOfHash(
  db: Queryable,
  cpfHash: string,
): Promise<EligibilityRecord | undefined> {
  const { rows } = await db.query(
    `SELECT eligibility, eligibility_checked_at, impeded_reason, impeded_since, impeded_until, impeded_source
       FROM customers WHERE cpf_hash = $1 AND eligibility IS NOT NULL`,
    [cpfHash],
  );
  const r = rows[0];
  if (!r) return undefined;
  return {
    status: r.eligibility,
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
 * Answers whether the event was written.
 */
export async function recordEligibility(db: Queryable, w: EligibilityWrite): Promise<boolean> {
  const { rows } = await db.query(
    `WITH prev AS (SELECT eligibility, impeded_reason FROM customers WHERE cpf_hash = $1),
          up AS (
     INSERT INTO customers (cpf_hash, cpf_masked, eligibility, eligibility_checked_at, impeded_reason,
                            impeded_until, impeded_since, impeded_source, cpf_sealed, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $3 = 'impeded' THEN $4::timestamptz END,
             CASE WHEN $3 = 'impeded' THEN $7 END, $8, $4, $4)
     ON CONFLICT (cpf_hash) DO UPDATE SET
       cpf_sealed = COALESCE(EXCLUDED.cpf_sealed, customers.cpf_sealed),
       eligibility = EXCLUDED.eligibility,
       eligibility_checked_at = EXCLUDED.eligibility_checked_at,
       impeded_reason = EXCLUDED.impeded_reason,
       impeded_until = EXCLUDED.impeded_until,
       impeded_since = CASE WHEN customers.eligibility = 'impeded'
                             AND customers.impeded_reason = EXCLUDED.impeded_reason
                            THEN customers.impeded_since ELSE EXCLUDED.impeded_since END,
       impeded_source = CASE WHEN customers.eligibility = 'impeded'
                              AND customers.impeded_reason = EXCLUDED.impeded_reason
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
