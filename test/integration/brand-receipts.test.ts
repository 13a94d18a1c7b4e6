import { readdirSync } from 'node:fs';
import { runner } from 'node-pg-migrate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import { getWithdrawalReceipt, upsertWithdrawalReceipt } from '../../db/flows';
import { MIGRATIONS_DIR, migrate } from '../../db/migrate';
import { createPool, type Pool } from '../../db/pool';
import { freshDatabase } from '../helpers/postgres';

// Withdrawal receipts are kept by the withdrawal's workflow id (migration 036, expand only), on a
// real Postgres of its own: a receipt stored before the migration, or by the previous version's
// writer during a rolling upgrade, is read as the default brand's withdrawal's.

const RECEIPTS_BY_FLOW = '1732000000036_receipts_by_flow';

let pool: Pool;

beforeAll(async () => {
  const databaseUrl = await freshDatabase();
  // Every migration before 036, then a receipt as the previous version stored it.
  const before = readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .findIndex((f) => f.startsWith(RECEIPTS_BY_FLOW));
  expect(before).toBeGreaterThan(0);
  await runner({
    databaseUrl,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    count: before,
    checkOrder: true,
    log: () => {},
  });
  pool = createPool(databaseUrl, 2);
  await pool.query(
    `INSERT INTO withdrawal_receipts (transaction_id, image, paid_at) VALUES ('old-1', '\\x6f6c64', '2026-11-01T12:00:00Z')`,
  );
  expect(await migrate(databaseUrl)).toContain(RECEIPTS_BY_FLOW);
});

afterAll(async () => {
  await pool?.end();
});

describe('withdrawal receipts by workflow id', () => {
  it('read a receipt stored before the migration as the default brand withdrawal', async () => {
    const old = await getWithdrawalReceipt(pool, withdrawalWorkflowId('old-1'));
    expect(old?.image.toString()).toBe('old');
    expect(old?.paidAt).toBe('2026-11-01T12:00:00.000Z');
    // Another brand's withdrawal of that transactionId has none.
    expect(await getWithdrawalReceipt(pool, withdrawalWorkflowId('old-1', 'bet-rio'))).toBeUndefined();
  });

  it('are stored and replaced by workflow id, and a writer of the previous version still stores by transactionId', async () => {
    const transactionId = 'same-tx-1';
    const workflowId = withdrawalWorkflowId(transactionId);
    await upsertWithdrawalReceipt(pool, {
      workflowId,
      transactionId,
      image: Buffer.from('first'),
      paidAt: null,
    });
    await upsertWithdrawalReceipt(pool, {
      workflowId,
      transactionId,
      image: Buffer.from('again'),
      paidAt: '2026-11-02T11:00:00.000Z',
    });
    const stored = await getWithdrawalReceipt(pool, workflowId);
    expect({ image: stored?.image.toString(), paidAt: stored?.paidAt }).toEqual({
      image: 'again',
      paidAt: '2026-11-02T11:00:00.000Z',
    });
    // A previous version's worker, still running its pinned withdrawals during a rolling upgrade,
    // writes as it always did: its receipt lands under the default brand's workflow id.
    const previous = `INSERT INTO withdrawal_receipts (transaction_id, image, paid_at) VALUES ($1, $2, $3)
       ON CONFLICT (transaction_id) DO UPDATE SET image = EXCLUDED.image, paid_at = EXCLUDED.paid_at`;
    await pool.query(previous, ['prev-1', Buffer.from('by the previous version'), null]);
    await pool.query(previous, ['prev-1', Buffer.from('by the previous version, again'), null]);
    expect((await getWithdrawalReceipt(pool, withdrawalWorkflowId('prev-1')))?.image.toString()).toBe(
      'by the previous version, again',
    );
  });
});
