import pg from 'pg';

// int8 (bigint) columns hold centavos; they fit safely in a JS number far beyond any Pix amount.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

export type Pool = pg.Pool;

export function createPool(databaseUrl: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max, idleTimeoutMillis: 30_000 });
  // An idle client losing its server (Postgres restart) must not crash the process.
  pool.on('error', () => {});
  return pool;
}

/** Answers once Postgres runs a statement: what a readiness probe asks of it. */
export async function ping(pool: Pick<pg.Pool, 'query'>): Promise<void> {
  await pool.query('SELECT 1');
}

const preparedTexts = new Map<string, string>();

/**
 * A statement each connection parses and plans once, then runs by name: for the statements every
 * flow runs, whose planning costs Postgres as much as running them. Its result columns must not
 * come from a table's `*`: a column a migration adds would change the result of a plan cached
 * before it, which Postgres refuses.
 */
export function prepared(name: string, text: string): (values: unknown[]) => pg.QueryConfig {
  const known = preparedTexts.get(name);
  if (known !== undefined && known !== text) throw new Error(`two statements prepared as "${name}"`);
  preparedTexts.set(name, text);
  return (values) => ({ name: `pixflow-${name}`, text, values });
}

/** Runs `fn` in one transaction on one connection: committed if it returns, rolled back if it throws. */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // The pool listens for a lost server only on idle clients: a held one losing Postgres between
  // two statements would otherwise throw out of the process. It is then discarded, not reused.
  let lost: Error | undefined;
  const onLost = (err: Error) => {
    lost = err;
  };
  client.on('error', onLost);
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.off('error', onLost);
    client.release(lost);
  }
}
