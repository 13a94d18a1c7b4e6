import type pg from 'pg';
import { type CustomerRow, customerRowOf } from './customers';

// The destinations each person has been paid to (migration 1732000000010): a payout to a
// registered account not among them is the first one to it, and waits for a biometric
// identification; and what a payout's rules read of the person and the destination. Keyed
// hashes only.

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** A payout to the destination was sent; idempotent (the first one stays). */
export async function recordPayoutDestination(
  db: Queryable,
  p: { cpfHash: string; payeeHash: string; transactionId: string },
): Promise<void> {
  await db.query(
    `INSERT INTO payout_destinations (cpf_hash, payee_hash, first_transaction_id) VALUES ($1, $2, $3)
     ON CONFLICT (cpf_hash, payee_hash) DO NOTHING`,
    [p.cpfHash, p.payeeHash, p.transactionId],
  );
}

/** What a payout's rules read of the person and its destination (keyed hash), in one query. */
export interface PayoutStanding {
  customer?: CustomerRow;
  /** The destination is an active account the person registered. */
  registered: boolean;
  /** The person has been paid to the destination before. */
  paidBefore: boolean;
}

export async function payoutStandingOf(
  db: Queryable,
  cpfHash: string,
  payeeHash: string,
): Promise<PayoutStanding> {
  const { rows } = await db.query(
    `SELECT c.*,
            EXISTS (SELECT 1 FROM customer_accounts
                     WHERE cpf_hash = $1 AND key_hash = $2 AND removed_at IS NULL) AS payout_registered,
            EXISTS (SELECT 1 FROM payout_destinations WHERE cpf_hash = $1 AND payee_hash = $2) AS payout_paid_before
       FROM (SELECT 1) one LEFT JOIN customers c ON c.cpf_hash = $1`,
    [cpfHash, payeeHash],
  );
  const r = rows[0];
  return {
    ...(r?.cpf_hash ? { customer: customerRowOf(r) } : {}),
    registered: r?.payout_registered === true,
    paidBefore: r?.payout_paid_before === true,
  };
}
