import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../common/config';
import { createLogger } from '../../common/logger';
import { migrate } from '../../db/migrate';
import { createPool, type Pool } from '../../db/pool';
import { type EventsRelay, eventsRelaySettings, startEventsRelay } from '../../events/outbox-relay';
import { freshDatabase } from '../helpers/postgres';
import { waitUntil } from '../helpers/wait';

// The events relay is woken by a committed event (LISTEN/NOTIFY) instead of polling for it: with
// a minute between idle looks, a new event is still positioned for the pull API within moments,
// and a listening connection Postgres drops is made again.

const IDLE_MS = 60_000;
let pool: Pool;
let relay: EventsRelay;

beforeAll(async () => {
  // A database of its own: the relay must not deliver other tests' events.
  const url = await freshDatabase();
  await migrate(url);
  pool = createPool(url, 3);
  const config = loadConfig({});
  relay = startEventsRelay({
    pool,
    log: createLogger('relay-wake-test', 'silent'),
    codecKeys: config.codecKeys,
    settings: { ...eventsRelaySettings(config), intervalMs: 100, idleMs: IDLE_MS },
  });
  await waitUntil(relay.listening, (yes) => yes);
}, 60_000);
afterAll(async () => {
  await relay?.stop();
  await pool?.end();
});

/** Appends an event as the flows do; answers how long until the relay positioned it. */
async function msUntilPositioned(stream: string): Promise<number> {
  const t0 = Date.now();
  const { rows } = await pool.query(
    `SELECT pixflow_append_event('test.happened', $1, 'test', NULL, '{}'::jsonb) AS id`,
    [stream],
  );
  await waitUntil(
    async () =>
      (await pool.query('SELECT position FROM events WHERE id = $1', [rows[0].id])).rows[0]?.position,
    (position) => position !== null && position !== undefined,
    { timeoutMs: 10_000, intervalMs: 20 },
  );
  return Date.now() - t0;
}

describe('the events relay wakes on a committed event', () => {
  it('positions a new event at once, though its idle look is a minute away', async () => {
    // Let the passes at start go by: only a wake can come before the idle minute.
    await new Promise((r) => setTimeout(r, 500));
    for (const stream of ['s-1', 's-2', 's-3']) expect(await msUntilPositioned(stream)).toBeLessThan(2_000);
  });

  it('listens again after Postgres drops its connection, and is woken as before', async () => {
    const { rowCount } = await pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND query = 'LISTEN pixflow_events'`,
    );
    expect(rowCount).toBe(1);
    await waitUntil(relay.listening, (yes) => !yes, { timeoutMs: 5_000, intervalMs: 10 });
    await waitUntil(relay.listening, (yes) => yes, { timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 500));
    expect(await msUntilPositioned('s-4')).toBeLessThan(2_000);
  });
});
