import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { migrate } from '../../db/migrate';
import { createPool, type Pool } from '../../db/pool';
import { type ClaimedDelivery, claimDeliveries } from '../../db/webhook-deliveries';
import { deliveredRecorder } from '../../events/outbox-relay';
import { freshDatabase } from '../helpers/postgres';

// Delivered attempts that end together are recorded together, in one transaction, with what
// recording one alone does: the delivery delivered, its attempt kept, its stream's next event
// made due. A stream an appender holds is waited for, so an event appended meanwhile is never
// left waiting; a batch that fails records its attempts one by one.

let pool: Pool;

beforeAll(async () => {
  // A database of its own: no relay runs on it, and no other test's deliveries are in it.
  const url = await freshDatabase();
  await migrate(url);
  pool = createPool(url, 5);
}, 60_000);
afterAll(async () => {
  await pool?.end();
});
beforeEach(async () => {
  await pool.query('TRUNCATE events, event_streams, webhook_endpoints CASCADE');
  await endpoint('ep_1');
});

async function endpoint(id: string) {
  await pool.query(
    `INSERT INTO webhook_endpoints (id, owner, url, events, secret)
     VALUES ($1, 'owner', 'https://example.com/hooks', '{*}', 'sealed')`,
    [id],
  );
}

async function append(stream: string, db: Pick<Pool, 'query'> = pool) {
  await db.query(`SELECT pixflow_append_event('test.happened', $1, 'test', NULL, '{}'::jsonb)`, [stream]);
}

const claim = () => claimDeliveries(pool, { batch: 50, leaseMs: 60_000, perEndpoint: 64, busy: new Map() });

const answered = (d: ClaimedDelivery) => ({
  delivery: d,
  at: new Date(),
  durationMs: 3,
  statusCode: 204,
  response: null,
});

async function deliveries(stream: string) {
  const { rows } = await pool.query<{ seq: number; state: string; waiting: boolean }>(
    `SELECT seq, state, next_attempt_at = 'infinity' AS waiting FROM webhook_deliveries
      WHERE stream_id = $1 ORDER BY seq`,
    [stream],
  );
  return rows.map((r) => [r.seq, r.state, r.waiting]);
}

describe('delivered attempts recorded together', () => {
  it('are one transaction, and each makes its stream’s next event due', async () => {
    const streams = Array.from({ length: 10 }, (_, i) => `s-${i}`);
    for (const s of streams) {
      await append(s);
      await append(s);
    }
    const first = await claim();
    expect(first.map((d) => d.streamId).sort()).toEqual([...streams].sort());
    const record = deliveredRecorder(pool);
    await Promise.all(first.map((d) => record(answered(d))));
    const { rows } = await pool.query<{ n: number; transactions: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS transactions FROM webhook_attempts
        WHERE outcome = 'delivered' AND status_code = 204`,
    );
    expect(rows[0]).toEqual({ n: 10, transactions: 1 });
    for (const s of streams)
      expect(await deliveries(s)).toEqual([
        [1, 'delivered', false],
        [2, 'pending', false],
      ]);
    // The next events are due, and claimed in their turn.
    const second = await claim();
    expect(second.map((d) => [d.streamId, d.body.data.sequence]).sort()).toEqual(
      streams.map((s) => [s, 2]).sort(),
    );
  });

  it('wait for a stream an appender holds, and the event appended meanwhile becomes due', async () => {
    await append('held');
    await append('free');
    const claimed = await claim();
    const held = claimed.find((d) => d.streamId === 'held') as ClaimedDelivery;
    const free = claimed.find((d) => d.streamId === 'free') as ClaimedDelivery;
    const appender = await pool.connect();
    try {
      await appender.query('BEGIN');
      // Behind a pending one, its delivery waits (due at infinity) for that one to be recorded.
      await append('held', appender);
      const record = deliveredRecorder(pool);
      const heldDone = record(answered(held));
      await record(answered(free));
      expect(await deliveries('free')).toEqual([[1, 'delivered', false]]);
      expect(await deliveries('held')).toEqual([[1, 'pending', false]]);
      await appender.query('COMMIT');
      await heldDone;
    } finally {
      // Discarded, not pooled: a failed expectation may leave its transaction open.
      appender.release(true);
    }
    expect(await deliveries('held')).toEqual([
      [1, 'delivered', false],
      [2, 'pending', false],
    ]);
  });

  it('one by one when the batch fails: an attempt whose endpoint is gone fails alone', async () => {
    await endpoint('ep_2');
    await append('s-a');
    await append('s-b');
    const claimed = await claim();
    expect(claimed).toHaveLength(4);
    await pool.query("DELETE FROM webhook_endpoints WHERE id = 'ep_2'");
    const record = deliveredRecorder(pool);
    const outcomes = await Promise.allSettled(claimed.map((d) => record(answered(d))));
    const byEndpoint = claimed.map((d, i) => [d.endpointId, outcomes[i]?.status]);
    expect(byEndpoint.filter(([ep]) => ep === 'ep_1').map(([, s]) => s)).toEqual(['fulfilled', 'fulfilled']);
    expect(byEndpoint.filter(([ep]) => ep === 'ep_2').map(([, s]) => s)).toEqual(['rejected', 'rejected']);
    expect(await deliveries('s-a')).toEqual([[1, 'delivered', false]]);
    expect(await deliveries('s-b')).toEqual([[1, 'delivered', false]]);
  });
});
