import { readdirSync } from 'node:fs';
import { runner } from 'node-pg-migrate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import { getWithdrawalReceipt, upsertWithdrawalReceipt } from '../../db/flows';
import { MIGRATIONS_DIR, migrate } from '../../db/migrate';
import { createPool, type Pool } from '../../db/pool';
import { freshDatabase } from '../helpers/postgres';

// Withdrawal receipts are kept by the withdrawal's workflow id alone (flow_receipts, migration 037),
// on a real Postgres of its own: two brands' receipts of one transactionId are kept apart; a
// receipt stored before the migrations, or by a previous version's writer during a rolling
// upgrade (by transactionId before 036, by workflow id in withdrawal_receipts after it), is read
// as the default brand's withdrawal's; and a default brand's receipt this version stores is still
// found where the previous version reads.

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

/** How the previous versions wrote a receipt: by transactionId alone (before 036), and by workflow id (036). */
const BY_TRANSACTION_ID = `INSERT INTO withdrawal_receipts (transaction_id, image, paid_at) VALUES ($1, $2, $3)
   ON CONFLICT (transaction_id) DO UPDATE SET image = EXCLUDED.image, paid_at = EXCLUDED.paid_at`;
const BY_WORKFLOW_ID = `INSERT INTO withdrawal_receipts (workflow_id, transaction_id, image, paid_at) VALUES ($1, $2, $3, $4)
   ON CONFLICT (workflow_id) DO UPDATE SET image = EXCLUDED.image, paid_at = EXCLUDED.paid_at`;

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
    await pool.query(BY_TRANSACTION_ID, ['prev-1', Buffer.from('by the previous version'), null]);
    await pool.query(BY_TRANSACTION_ID, ['prev-1', Buffer.from('by the previous version, again'), null]);
    expect((await getWithdrawalReceipt(pool, withdrawalWorkflowId('prev-1')))?.image.toString()).toBe(
      'by the previous version, again',
    );
    // The version just before (036) wrote by workflow id into the same table: read the same way.
    await pool.query(BY_WORKFLOW_ID, [withdrawalWorkflowId('prev-2'), 'prev-2', Buffer.from('by 036'), null]);
    await pool.query(BY_WORKFLOW_ID, [
      withdrawalWorkflowId('prev-2'),
      'prev-2',
      Buffer.from('by 036, again'),
      null,
    ]);
    expect((await getWithdrawalReceipt(pool, withdrawalWorkflowId('prev-2')))?.image.toString()).toBe(
      'by 036, again',
    );
  });

  it("keep two brands' receipts of one transactionId apart", async () => {
    const transactionId = 'two-brands-1';
    const atDefault = withdrawalWorkflowId(transactionId);
    const atBrand = withdrawalWorkflowId(transactionId, 'bet-rio');
    await upsertWithdrawalReceipt(pool, {
      workflowId: atDefault,
      transactionId,
      image: Buffer.from('default'),
      paidAt: null,
    });
    await upsertWithdrawalReceipt(pool, {
      workflowId: atBrand,
      transactionId,
      image: Buffer.from('bet-rio'),
      paidAt: '2026-11-03T10:00:00.000Z',
    });
    // Stored again (the activity retried), each replaces its own alone.
    await upsertWithdrawalReceipt(pool, {
      workflowId: atBrand,
      transactionId,
      image: Buffer.from('bet-rio, again'),
      paidAt: '2026-11-03T10:00:00.000Z',
    });
    expect((await getWithdrawalReceipt(pool, atDefault))?.image.toString()).toBe('default');
    expect(await getWithdrawalReceipt(pool, atBrand)).toMatchObject({
      paidAt: '2026-11-03T10:00:00.000Z',
      contentType: 'image/png',
    });
    expect((await getWithdrawalReceipt(pool, atBrand))?.image.toString()).toBe('bet-rio, again');
    // A previous version's worker storing the default brand's again changes only the default brand's.
    await pool.query(BY_TRANSACTION_ID, [
      transactionId,
      Buffer.from('default, by the previous version'),
      null,
    ]);
    expect((await getWithdrawalReceipt(pool, atDefault))?.image.toString()).toBe(
      'default, by the previous version',
    );
    expect((await getWithdrawalReceipt(pool, atBrand))?.image.toString()).toBe('bet-rio, again');
  });

  it("are still found where the previous version reads them, the default brand's alone", async () => {
    const transactionId = 'read-by-previous-1';
    await upsertWithdrawalReceipt(pool, {
      workflowId: withdrawalWorkflowId(transactionId),
      transactionId,
      image: Buffer.from('this version'),
      paidAt: null,
    });
    await upsertWithdrawalReceipt(pool, {
      workflowId: withdrawalWorkflowId(transactionId, 'bet-rio'),
      transactionId,
      image: Buffer.from('bet-rio'),
      paidAt: null,
    });
    // The previous version's API reads withdrawal_receipts by workflow id (036) or transactionId.
    const { rows } = await pool.query<{ workflow_id: string; image: Buffer }>(
      'SELECT workflow_id, image FROM withdrawal_receipts WHERE transaction_id = $1',
      [transactionId],
    );
    expect(rows.map((r) => ({ workflowId: r.workflow_id, image: r.image.toString() }))).toEqual([
      { workflowId: withdrawalWorkflowId(transactionId), image: 'this version' },
    ]);
  });
});
