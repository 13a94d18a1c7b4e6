import { readdirSync } from 'node:fs';
import { runner } from 'node-pg-migrate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brandsKnowing, knowsCustomer, meetCustomer } from '../../db/customer-brands';
import { MIGRATIONS_DIR, migrate } from '../../db/migrate';
import { createPool, type Pool } from '../../db/pool';
import { freshDatabase } from '../helpers/postgres';

// The people a brand knows, on a database the version before left: every person it had seen is
// the default brand's after the migration, a brand that moved money for a person knows them, and
// no other brand knows anyone until it meets them.

const THIS_MIGRATION = '1732000000040_customer_brands';
let pool: Pool;

beforeAll(async () => {
  const url = await freshDatabase();
  const before = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql') && f < THIS_MIGRATION);
  await runner({
    databaseUrl: url,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    count: before.length,
    checkOrder: true,
    log: () => {},
    logger: { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} },
  });
  pool = createPool(url, 2);
  await pool.query("INSERT INTO brands (id, name) VALUES ('bet-rio', 'Bet Rio'), ('bet-sul', 'Bet Sul')");
  // A verified person, a person whose onboarding had started (no customer row yet), and a person
  // bet-rio moved money for.
  await pool.query(
    `INSERT INTO customers (cpf_hash, cpf_masked, verification) VALUES ('h-verified', '***.111.111-**', 'approved')`,
  );
  await pool.query(
    `INSERT INTO flows (workflow_id, type, business_id, status, cpf_hash, cpf_masked, details, seq)
     VALUES ('onboarding-x', 'onboarding', 'x', 'kyc_pending', 'h-onboarding', '***.222.222-**', '{}', 1),
            ('bet-rio:deposit-1', 'deposit', '1', 'completed', 'h-rio', '***.333.333-**', '{}', 1)`,
  );
  await pool.query("UPDATE flows SET brand_id = 'bet-rio' WHERE workflow_id = 'bet-rio:deposit-1'");
  await migrate(url);
});

afterAll(async () => {
  await pool?.end();
});

describe('customer_brands after the migration', () => {
  it('makes every person seen before the default brand’s, and no other brand’s', async () => {
    expect(await brandsKnowing(pool, 'h-verified')).toEqual(['default']);
    expect(await brandsKnowing(pool, 'h-onboarding')).toEqual(['default']);
    expect(await knowsCustomer(pool, 'h-verified', 'bet-rio')).toBe(false);
    expect(await knowsCustomer(pool, 'h-verified', 'default')).toBe(true);
  });

  it('lets a brand that moved money for a person know them', async () => {
    expect(await brandsKnowing(pool, 'h-rio')).toEqual(['bet-rio', 'default']);
    expect(await knowsCustomer(pool, 'h-rio', 'bet-sul')).toBe(false);
  });

  it('meets a person once, keeping the first meeting', async () => {
    await meetCustomer(pool, 'h-verified', 'bet-sul');
    const first = await pool.query(
      "SELECT first_met_at FROM customer_brands WHERE cpf_hash = 'h-verified' AND brand_id = 'bet-sul'",
    );
    await meetCustomer(pool, 'h-verified', 'bet-sul');
    const again = await pool.query(
      "SELECT first_met_at FROM customer_brands WHERE cpf_hash = 'h-verified' AND brand_id = 'bet-sul'",
    );
    expect(again.rows).toEqual(first.rows);
    expect(await brandsKnowing(pool, 'h-verified')).toEqual(['bet-sul', 'default']);
    expect(await brandsKnowing(pool, 'h-nobody')).toEqual([]);
  });

  it('refuses a brand that does not exist', async () => {
    await expect(meetCustomer(pool, 'h-verified', 'no-such-brand')).rejects.toThrow(/foreign key/);
  });
});
