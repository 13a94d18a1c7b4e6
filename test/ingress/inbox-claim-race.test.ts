import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertInbox, type NewInboxRow } from '../../db/inbox';
import type { Pool } from '../../db/pool';
import { testPool } from '../helpers/postgres';
import { waitUntil } from '../helpers/wait';

// A copy of a notification that arrives while the first one is being claimed for its signal:
// it must be held for the coalescing window, not signalled at once a second time. The claim is
// held open in a transaction of its own so that the copy's statement starts before the claim
// commits and finishes after it, every time.

let pool: Pool;
const WINDOW_MS = 5_000;

beforeAll(() => {
  pool = testPool();
});
afterAll(async () => {
  await pool?.end();
});

function copy(key: string): NewInboxRow {
  return {
    dedupeKey: key,
    point: 'deposit',
    workflowId: `deposit-${key}`,
    rawBody: '{}',
    headers: {},
    receivedAt: new Date(),
    signalName: 'providerNotification',
    signalPayload: { type: 'deposit', action: 'updated', id: key },
    nextAttemptAt: new Date(),
  };
}

describe('webhook inbox: a copy racing the claim of the first', () => {
  it('is held for the window, not signalled at once', async () => {
    const key = `race-${randomBytes(6).toString('hex')}`;
    const first = await insertInbox(pool, copy(key), WINDOW_MS);
    expect(first).toMatchObject({ deliverNow: true });
    const firstId = (first as { id: number }).id;

    // The claim, as the request's own delivery makes it, left uncommitted.
    const claimer = await pool.connect();
    await claimer.query('BEGIN');
    await claimer.query('UPDATE webhook_inbox SET claimed_at = now() WHERE id = $1', [firstId]);
    const racing = insertInbox(pool, copy(key), WINDOW_MS);
    // The copy's statement has started and waits on the claimed row's lock.
    await waitUntil(
      async () =>
        (
          await pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%webhook_inbox%'`,
          )
        ).rows[0]?.n ?? 0,
      (n) => n >= 1,
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    await claimer.query('COMMIT');
    claimer.release();

    const second = await racing;
    expect(second).toMatchObject({ deliverNow: false });
    // Its own row, waiting for the window after the first one's claim.
    const { rows } = await pool.query<{ held: boolean }>(
      `SELECT next_attempt_at > now() + interval '3 seconds' AS held FROM webhook_inbox WHERE id = $1`,
      [(second as { id: number }).id],
    );
    expect(rows).toEqual([{ held: true }]);
  });
});
