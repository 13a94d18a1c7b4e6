import type pg from 'pg';

// Transaction-scoped advisory locks: held until the caller's transaction commits or rolls back,
// across every process on the database. Called inside inTransaction, on its client.

/** Waits for the lock named `name` (any text; hashed to Postgres' 64-bit key). */
export async function lockUntilCommit(client: pg.PoolClient, name: string): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [name]);
}

/** Takes the lock of numeric `key` if no other transaction holds it; answers whether it did. */
export async function tryLockUntilCommit(client: pg.PoolClient, key: number): Promise<boolean> {
  const { rows } = await client.query('SELECT pg_try_advisory_xact_lock($1) AS held', [key]);
  return Boolean(rows[0]?.held);
}
