import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable, isUnavailable } from '../../http/problem';
import { freePort } from '../helpers/ports';

// Which Postgres failures mean "not now" (a 503 with Retry-After on every route) and which are
// the query's own (a 500): test/integration/postgres-restart.test.ts restarts a real server.

/** An error as node-postgres reads it from the server's ErrorResponse. */
const serverError = (code: string, message: string) =>
  Object.assign(new pg.DatabaseError(message, message.length, 'error'), { code, severity: 'FATAL' });

/** What connecting to `port` (nothing listening) really fails with. */
async function connectFailure(host: string, port: number): Promise<unknown> {
  const client = new pg.Client({ host, port, user: 'pixflow', database: 'pixflow', password: 'x' });
  return client.connect().then(
    () => undefined,
    (err: unknown) => err,
  );
}

describe('isDatabaseUnavailable', () => {
  it('takes a server shutting down, crashed, starting up or full, and any connection exception', () => {
    for (const [code, message] of [
      ['57P01', 'terminating connection due to administrator command'],
      ['57P02', 'terminating connection because of crash of another server process'],
      ['57P03', 'the database system is not yet accepting connections'],
      ['57P03', 'the database system is starting up'],
      ['53300', 'sorry, too many clients already'],
      ['08006', 'connection failure'],
      ['08001', 'could not connect'],
    ] as const)
      expect(isDatabaseUnavailable(serverError(code, message)), code).toBe(true);
  });

  it("takes a refused connection, on one address or localhost's every one", async () => {
    const port = await freePort();
    const refused = await connectFailure('127.0.0.1', port);
    expect((refused as { code?: string }).code).toBe('ECONNREFUSED');
    expect(isDatabaseUnavailable(refused)).toBe(true);
    expect(isUnavailable(await connectFailure('localhost', port))).toBe(true);
  });

  it("takes node-postgres's words for a connection lost or not made in time", () => {
    for (const message of [
      'Connection terminated unexpectedly',
      'Connection terminated due to connection timeout',
      'timeout exceeded when trying to connect',
    ])
      expect(isDatabaseUnavailable(new Error(message)), message).toBe(true);
  });

  it("leaves a query's own failure, and another service's refused connection, to be what they are", async () => {
    for (const [code, message] of [
      ['23505', 'duplicate key value violates unique constraint'],
      ['42601', 'syntax error at or near "SELEC"'],
      ['40001', 'could not serialize access due to concurrent update'],
      ['57014', 'canceling statement due to statement timeout'],
    ] as const)
      expect(isDatabaseUnavailable(serverError(code, message)), code).toBe(false);
    // fetch's failure to reach a provider or a registry: their own answers say what to do.
    const port = await freePort();
    const fetchFailure = await fetch(`http://127.0.0.1:${port}/`).catch((err: unknown) => err);
    expect(isDatabaseUnavailable(fetchFailure)).toBe(false);
    expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
    expect(isDatabaseUnavailable(new AggregateError([]))).toBe(false);
  });
});
