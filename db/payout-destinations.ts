import type pg from 'pg';

// The destinations each person has been paid to (migration 1732000000010): a payout to a
// registered account not among them is the first one to it, and waits for a biometric
// identification. Keyed hashes only.

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
