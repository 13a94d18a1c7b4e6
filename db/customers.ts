import type pg from 'pg';
import { CUSTOMER_VERIFICATION_UPDATED, customerStateJsonSql, customerStreamSql } from './events';
import type { Pool } from './pool';

// The customer read model (migration 1732000000007): one row per person by keyed CPF hash, and
// their registered accounts, with the reads of the person's flows the API and the money rules make
// (today's payouts, open flows). Callers pass hashes and masked forms, never a CPF or a key.

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

export interface VerificationWrite {
  cpfHash: string;
  cpfMasked: string;
  verification: 'pending' | 'approved' | 'rejected' | 'expired';
  at: Date;
  /** The onboarding's workflow id. */
  flow: string;
  /** Its run id; null when unknown (then only the sequence number orders writes). */
  run: string | null;
  seq: number;
}

/**
 * Upserts the person's verification from an onboarding's status change. A write applies only
 * when it is newer: a later seq of the run that wrote last, or the first write of a new run once
 * the previous onboarding expired (the only state a new onboarding of the CPF starts from). A
 * suspended verification waits for an operator: no onboarding write moves it.
 */
export async function recordVerification(db: Queryable, v: VerificationWrite): Promise<boolean> {
  const { rows } = await db.query(
    `WITH prev AS (SELECT verification FROM customers WHERE cpf_hash = $1),
          up AS (
     INSERT INTO customers (cpf_hash, cpf_masked, verification, verification_at, verification_by,
                            verification_flow, verification_run, verification_seq, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $4, $4)
     ON CONFLICT (cpf_hash) DO UPDATE SET
       verification = EXCLUDED.verification,
       -- Since when it is in this state: pending stays pending from kyc to review.
       verification_at = CASE WHEN customers.verification = EXCLUDED.verification
                              THEN customers.verification_at ELSE EXCLUDED.verification_at END,
       verification_by = EXCLUDED.verification_by,
       verification_flow = EXCLUDED.verification_flow,
       verification_run = EXCLUDED.verification_run,
       verification_seq = EXCLUDED.verification_seq,
       updated_at = EXCLUDED.updated_at
     WHERE customers.verification <> 'suspended' AND (
       customers.verification_flow IS NULL
       -- A row carried over from the flows table by the migration knows no run: seq orders it.
       OR ((customers.verification_run IS NULL OR customers.verification_run = EXCLUDED.verification_run)
           AND customers.verification_seq < EXCLUDED.verification_seq)
       OR (customers.verification_run IS DISTINCT FROM EXCLUDED.verification_run
           AND customers.verification = 'expired'))
     RETURNING *),
          ev AS (
     ${verificationEventSql("coalesce(prev.verification, 'none')", 'LEFT JOIN prev ON true')})
     SELECT (SELECT count(*) FROM up)::int AS changed, (SELECT count(*) FROM ev)::int AS events`,
    [v.cpfHash, v.cpfMasked, v.verification, v.at, v.flow, v.run, v.seq],
  );
  return (rows[0]?.changed ?? 0) > 0;
}

/**
 * The event of a change of verification, from the changed row `up`: only when the verification
 * itself changed (pending stays pending from kyc to review).
 */
function verificationEventSql(previous: string, joinPrev: string): string {
  return `SELECT pixflow_append_event('${CUSTOMER_VERIFICATION_UPDATED}', ${customerStreamSql('up')}, 'customer',
                                  up.cpf_hash, ${customerStateJsonSql('up', previous)}) AS id
       FROM up ${joinPrev}
      WHERE ${previous} <> up.verification`;
}

export interface KycFacts {
  status: string;
  under18: boolean | null;
  deceased: boolean | null;
  restricted: boolean | null;
  pep: boolean | null;
}

/** Upserts the facts of the person's latest KYC answer and when it was read. */
export async function recordKycFacts(
  db: Queryable,
  p: { cpfHash: string; cpfMasked: string; facts: KycFacts; readAt: Date },
): Promise<void> {
  const f = p.facts;
  await db.query(
    `INSERT INTO customers (cpf_hash, cpf_masked, kyc_status, under_18, deceased, restricted, pep, kyc_read_at,
                            created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $8)
     ON CONFLICT (cpf_hash) DO UPDATE SET
       kyc_status = EXCLUDED.kyc_status, under_18 = EXCLUDED.under_18, deceased = EXCLUDED.deceased,
       restricted = EXCLUDED.restricted, pep = EXCLUDED.pep, kyc_read_at = EXCLUDED.kyc_read_at,
       updated_at = EXCLUDED.updated_at
     WHERE customers.kyc_read_at IS NULL OR customers.kyc_read_at <= EXCLUDED.kyc_read_at`,
    [p.cpfHash, p.cpfMasked, f.status, f.under18, f.deceased, f.restricted, f.pep, p.readAt],
  );
}

/** Creates the person's row if there is none (verification `none`). */
async function ensureCustomer(db: Queryable, cpfHash: string, cpfMasked: string): Promise<void> {
  await db.query(
    'INSERT INTO customers (cpf_hash, cpf_masked) VALUES ($1, $2) ON CONFLICT (cpf_hash) DO NOTHING',
    [cpfHash, cpfMasked],
  );
}

export interface AccountRow {
  id: number;
  kind: 'pix_key' | 'bank_account';
  pixType: string | null;
  masked: string;
  source: 'deposit' | 'api';
  createdAt: string;
}

export interface NewAccount {
  cpfHash: string;
  cpfMasked: string;
  kind: AccountRow['kind'];
  pixType: string | null;
  keyHash: string;
  masked: string;
  source: AccountRow['source'];
}

const accountOf = (r: Record<string, unknown>): AccountRow => ({
  id: Number(r.id),
  kind: r.kind as AccountRow['kind'],
  pixType: (r.pix_type as string | null) ?? null,
  masked: r.masked as string,
  source: r.source as AccountRow['source'],
  createdAt: (r.created_at as Date).toISOString(),
});

/**
 * Registers an account (and the person, if new). Idempotent: the same active key again answers
 * the row that holds it, with `created` false.
 */
export async function addAccount(
  pool: Pool,
  a: NewAccount,
): Promise<{ account: AccountRow; created: boolean }> {
  await ensureCustomer(pool, a.cpfHash, a.cpfMasked);
  const inserted = await pool.query(
    `INSERT INTO customer_accounts (cpf_hash, kind, pix_type, key_hash, masked, source)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (cpf_hash, key_hash) WHERE removed_at IS NULL DO NOTHING
     RETURNING id, kind, pix_type, masked, source, created_at`,
    [a.cpfHash, a.kind, a.pixType, a.keyHash, a.masked, a.source],
  );
  if (inserted.rows[0]) return { account: accountOf(inserted.rows[0]), created: true };
  const existing = await pool.query(
    `SELECT id, kind, pix_type, masked, source, created_at FROM customer_accounts
      WHERE cpf_hash = $1 AND key_hash = $2 AND removed_at IS NULL`,
    [a.cpfHash, a.keyHash],
  );
  const row = existing.rows[0];
  // Removed between the two statements: register it again.
  if (!row) return addAccount(pool, a);
  return { account: accountOf(row), created: false };
}

export async function listAccounts(db: Queryable, cpfHash: string): Promise<AccountRow[]> {
  const { rows } = await db.query(
    `SELECT id, kind, pix_type, masked, source, created_at FROM customer_accounts
      WHERE cpf_hash = $1 AND removed_at IS NULL ORDER BY created_at, id`,
    [cpfHash],
  );
  return rows.map(accountOf);
}

/** Soft delete; false when the person has no such active account. */
export async function removeAccount(db: Queryable, cpfHash: string, id: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE customer_accounts SET removed_at = now()
      WHERE cpf_hash = $1 AND id = $2 AND removed_at IS NULL`,
    [cpfHash, id],
  );
  return (rowCount ?? 0) > 0;
}

export interface CustomerRow {
  cpfHash: string;
  cpfMasked: string;
  verification: string;
  verificationAt: string | null;
  verificationBy: string | null;
  verificationFlow: string | null;
  kyc: {
    status: string | null;
    under18: boolean | null;
    deceased: boolean | null;
    restricted: boolean | null;
    pep: boolean | null;
    readAt: string | null;
  };
  suspension: { reason: string; at: string; evidence: Record<string, unknown> } | null;
  lastBiometric: { at: string; outcome: string } | null;
  createdAt: string;
  updatedAt: string;
}

const isoOrNull = (v: unknown) => (v instanceof Date ? v.toISOString() : null);

export async function getCustomer(db: Queryable, cpfHash: string): Promise<CustomerRow | undefined> {
  const { rows } = await db.query('SELECT * FROM customers WHERE cpf_hash = $1', [cpfHash]);
  return rows[0] ? customerRowOf(rows[0]) : undefined;
}

/** A customers row as the read model gives it. */
// biome-ignore lint/suspicious/noExplicitAny: a pg row
export function customerRowOf(r: any): CustomerRow {
  return {
    cpfHash: r.cpf_hash,
    cpfMasked: r.cpf_masked,
    verification: r.verification,
    verificationAt: isoOrNull(r.verification_at),
    verificationBy: r.verification_by,
    verificationFlow: r.verification_flow,
    kyc: {
      status: r.kyc_status,
      under18: r.under_18,
      deceased: r.deceased,
      restricted: r.restricted,
      pep: r.pep,
      readAt: isoOrNull(r.kyc_read_at),
    },
    suspension: r.suspended_at
      ? {
          reason: r.suspended_reason,
          at: isoOrNull(r.suspended_at) as string,
          evidence: r.suspended_evidence,
        }
      : null,
    lastBiometric: r.last_biometric_at
      ? { at: isoOrNull(r.last_biometric_at) as string, outcome: r.last_biometric_outcome }
      : null,
    createdAt: isoOrNull(r.created_at) as string,
    updatedAt: isoOrNull(r.updated_at) as string,
  };
}

/**
 * Suspends a verification a closed onboarding left in `expected` (approved or rejected), with the
 * reason and the evidence. Conditional, so a repeat or a race with another change is a no-op.
 */
export async function suspendVerification(
  db: Queryable,
  p: { cpfHash: string; expected: string; reason: string; evidence: Record<string, unknown>; at: Date },
): Promise<boolean> {
  const { rows } = await db.query(
    `WITH up AS (
       UPDATE customers SET verification = 'suspended', verification_at = $4, suspended_reason = $3,
              suspended_at = $4, suspended_evidence = $5, updated_at = $4
        WHERE cpf_hash = $1 AND verification = $2
       RETURNING *)
     ${verificationEventSql('$2::text', '')}`,
    [p.cpfHash, p.expected, p.reason, p.at, JSON.stringify(p.evidence)],
  );
  return rows.length > 0;
}

/** The person's verification as the customer row holds it, if there is one. */
export async function verificationOfHash(db: Queryable, cpfHash: string): Promise<string | undefined> {
  const { rows } = await db.query('SELECT verification FROM customers WHERE cpf_hash = $1', [cpfHash]);
  return rows[0]?.verification;
}

/** The business day payout limits count in (Brazil's Pix and its regulator count by Brasília time). */
export const PAYOUT_DAY_ZONE = 'America/Sao_Paulo';

/** Withdrawal statuses that sent nothing and never will: they do not count against the limit. */
const NOTHING_SENT = ['failed', 'refused'];

/**
 * The sum of the person's withdrawals asked for today (Brasília day) that were not refused and have
 * not failed, and how many: what the daily limit counts (one withdrawal left out, when asked).
 */
export async function payoutsToday(
  db: Queryable,
  cpfHash: string,
  now: Date,
  except?: string,
): Promise<{ totalCentavos: number; count: number; dayStart: string }> {
  const { rows } = await db.query(
    `WITH day AS (SELECT (date_trunc('day', $2::timestamptz AT TIME ZONE '${PAYOUT_DAY_ZONE}')
                          AT TIME ZONE '${PAYOUT_DAY_ZONE}') AS start)
     SELECT COALESCE(sum(amount_centavos), 0)::bigint AS total, count(flows.workflow_id)::int AS n, day.start
       FROM day LEFT JOIN flows ON flows.type = 'withdrawal' AND flows.cpf_hash = $1
                              AND flows.status <> ALL($3::text[])
                              AND flows.workflow_id IS DISTINCT FROM $4
                              AND flows.created_at >= day.start AND flows.created_at < day.start + interval '1 day'
      GROUP BY day.start`,
    [cpfHash, now, NOTHING_SENT, except ?? null],
  );
  const r = rows[0];
  return { totalCentavos: Number(r.total), count: Number(r.n), dayStart: (r.start as Date).toISOString() };
}

export interface OpenFlow {
  workflowId: string;
  type: string;
  status: string;
  amountCentavos: number | null;
  createdAt: string;
}

/**
 * The person's flows not in one of the given final statuses, newest first. With `brand`, only
 * that brand's deposits and withdrawals; the person's verification flows (onboardings,
 * biometrics) are shared by the brands, so every brand sees them.
 */
export async function openFlows(
  db: Queryable,
  cpfHash: string,
  finalStatuses: Record<string, readonly string[]>,
  limit = 50,
  brand?: string,
): Promise<OpenFlow[]> {
  const params: unknown[] = [cpfHash];
  const finished = Object.entries(finalStatuses).map(([type, statuses]) => {
    params.push(type, [...statuses]);
    return `(type = $${params.length - 1} AND status = ANY($${params.length}::text[]))`;
  });
  let ofBrand = '';
  if (brand !== undefined) {
    params.push(brand);
    ofBrand = `AND (brand_id = $${params.length} OR type NOT IN ('deposit', 'withdrawal'))`;
  }
  params.push(limit);
  const { rows } = await db.query(
    `SELECT workflow_id, type, status, amount_centavos, created_at FROM flows
      WHERE cpf_hash = $1 ${finished.length ? `AND NOT (${finished.join(' OR ')})` : ''} ${ofBrand}
      ORDER BY created_at DESC LIMIT $${params.length}`,
    params,
  );
  return rows.map((r) => ({
    workflowId: r.workflow_id,
    type: r.type,
    status: r.status,
    amountCentavos: r.amount_centavos,
    createdAt: (r.created_at as Date).toISOString(),
  }));
}

/** Whether pixflow has seen the person: a customer row, or any flow of theirs. */
export async function customerKnown(db: Queryable, cpfHash: string): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT EXISTS (SELECT 1 FROM customers WHERE cpf_hash = $1)
         OR EXISTS (SELECT 1 FROM flows WHERE cpf_hash = $1) AS known`,
    [cpfHash],
  );
  return rows[0]?.known === true;
}

/**
 * The person's last biometric identification: a later one replaces it, a late write of an older
 * one does not.
 */
export async function recordLastBiometric(
  db: Queryable,
  b: { cpfHash: string; outcome: string; at: Date },
): Promise<void> {
  await db.query(
    `UPDATE customers SET last_biometric_at = $2, last_biometric_outcome = $3, updated_at = now()
      WHERE cpf_hash = $1 AND (last_biometric_at IS NULL OR last_biometric_at <= $2)`,
    [b.cpfHash, b.at, b.outcome],
  );
}

/**
 * Locks the person's row until the transaction ends (created if missing, unless the caller read it
 * already: rows are never deleted), so payouts of one person are checked against the daily limit
 * one at a time.
 */
export async function lockCustomer(
  db: Queryable,
  cpfHash: string,
  cpfMasked: string,
  o: { exists?: boolean } = {},
): Promise<void> {
  if (!o.exists) await ensureCustomer(db, cpfHash, cpfMasked);
  await db.query('SELECT 1 FROM customers WHERE cpf_hash = $1 FOR UPDATE', [cpfHash]);
}

/** Who the registry says the person is (name and CPF), from their latest KYC answer. */
export async function kycIdentity(
  db: Queryable,
  cpfHash: string,
): Promise<{ cpf: string | null; name: string | null } | undefined> {
  const { rows } = await db.query(
    `SELECT record->>'cpf' AS cpf, record->>'name' AS name FROM kyc_records
      WHERE cpf_hash = $1 ORDER BY received_at DESC LIMIT 1`,
    [cpfHash],
  );
  return rows[0] ? { cpf: rows[0].cpf, name: rows[0].name } : undefined;
}
