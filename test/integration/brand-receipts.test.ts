import { readdirSync } from 'node:fs';
import { runner } from 'node-pg-migrate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import { getWithdrawalReceipt, upsertWithdrawalReceipt } from '../../db/flows';
import { MIGRATIONS_DIR, migrate } from '../../db/migrate';
import { createPool, type Pool } from '../../db/pool';
import { freshDatabase } from '../helpers/postgres';

// Withdrawal receipts are kept by the withdrawal's workflow id (migration 036), on a real
// Postgres of its own: two brands' withdrawals of one transactionId keep their own receipts, and a
// receipt stored before the migration is read as the default brand's.

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

  it("keep two brands' receipts of one transactionId apart", async () => {
    const transactionId = 'same-tx-1';
    const ofDefault = withdrawalWorkflowId(transactionId);
    const ofBrand = withdrawalWorkflowId(transactionId, 'bet-rio');
    expect(ofBrand).not.toBe(ofDefault);
    await upsertWithdrawalReceipt(pool, {
      workflowId: ofDefault,
      transactionId,
      image: Buffer.from('default receipt'),
      paidAt: '2026-11-02T10:00:00.000Z',
    });
    expect(await getWithdrawalReceipt(pool, ofBrand)).toBeUndefined();
    await upsertWithdrawalReceipt(pool, {
      workflowId: ofBrand,
      transactionId,
      image: Buffer.from('bet-rio receipt'),
      paidAt: null,
    });
    // Storing one brand's again replaces its own alone.
    await upsertWithdrawalReceipt(pool, {
      workflowId: ofBrand,
      transactionId,
      image: Buffer.from('bet-rio receipt, again'),
      paidAt: '2026-11-02T11:00:00.000Z',
    });
    const d = await getWithdrawalReceipt(pool, ofDefault);
    const b = await getWithdrawalReceipt(pool, ofBrand);
    expect({ image: d?.image.toString(), paidAt: d?.paidAt }).toEqual({
      image: 'default receipt',
      paidAt: '2026-11-02T10:00:00.000Z',
    });
    expect({ image: b?.image.toString(), paidAt: b?.paidAt }).toEqual({
      image: 'bet-rio receipt, again',
      paidAt: '2026-11-02T11:00:00.000Z',
    });
    const { rows } = await pool.query(
      'SELECT workflow_id FROM withdrawal_receipts WHERE transaction_id = $1 ORDER BY workflow_id',
      [transactionId],
    );
    expect(rows.map((r) => r.workflow_id)).toEqual([ofBrand, ofDefault]);
  });
});
