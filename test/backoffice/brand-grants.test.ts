import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { runner } from 'node-pg-migrate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../common/passwords';
import { MIGRATIONS_DIR, migrate } from '../../db/migrate';
import { grantedBrands } from '../../db/operator-brands';
import { saveOperator } from '../../db/operators';
import { createPool, type Pool } from '../../db/pool';
import { freshDatabase } from '../helpers/postgres';

// The brands each operator is granted, on a real Postgres: an install upgrading to migration 038
// keeps every operator seeing every brand it has, a new operator sees the default brand, and
// `npm run operator -- grants|grant|revoke` as an admin runs it, each change audited and bad input
// named with nothing written.

const ROOT = path.resolve(__dirname, '../..');
const OPERATOR_BRANDS = '1732000000038_operator_brands';
const ANA = 'ana.admin@example.com';
const CAIO = 'caio.reviewer@example.com';

let databaseUrl: string;
let pool: Pool;

function cli(...args: string[]) {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'scripts/operator.ts'), ...args],
    {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl },
      encoding: 'utf8',
    },
  );
  return { status: r.status, out: r.stdout, err: r.stderr };
}

const idOf = async (email: string) =>
  Number((await pool.query('SELECT id FROM operators WHERE email = $1', [email])).rows[0].id);
const grantsOf = async (email: string) => grantedBrands(pool, await idOf(email));
const grantRows = async () =>
  (
    await pool.query(
      `SELECT action, outcome, case_type, case_id, operator_email, before, after FROM operator_actions
        WHERE action LIKE 'operator.brand.%' ORDER BY id`,
    )
  ).rows;

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  // The install as the previous version left it: two brands, an admin and a reviewer.
  const before = readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .findIndex((f) => f.startsWith(OPERATOR_BRANDS));
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
  pool = createPool(databaseUrl, 3);
  await pool.query(`INSERT INTO brands (id, name) VALUES ('bet-rio', 'Bet Rio')`);
  const passwordHash = await hashPassword('a long enough password for tests');
  await saveOperator(pool, { email: ANA, role: 'admin', passwordHash });
  await saveOperator(pool, { email: CAIO, role: 'reviewer', passwordHash });
  expect(await migrate(databaseUrl)).toContain(OPERATOR_BRANDS);
}, 120_000);

afterAll(async () => {
  await pool?.end();
});

describe('operators and their brands', () => {
  it('after the upgrade, every operator from before is granted every brand there was: nobody sees less', async () => {
    expect(await grantsOf(CAIO)).toEqual(['bet-rio', 'default']);
    expect(await grantsOf(ANA)).toEqual(['bet-rio', 'default']);
  });

  it('grants a new operator the default brand alone, as a single-brand install needs', async () => {
    await saveOperator(pool, {
      email: 'new@example.com',
      passwordHash: await hashPassword('another long password'),
    });
    expect(await grantsOf('new@example.com')).toEqual(['default']);
  });

  it('the CLI grants and revokes as an admin, each audited once, and lists the grants', async () => {
    const granted = cli('grant', '--email', 'NEW@example.com', '--brand', 'bet-rio', '--as', ANA);
    expect(granted.status, granted.err).toBe(0);
    expect(granted.out).toContain('granted bet-rio to NEW@example.com');
    expect(await grantsOf('new@example.com')).toEqual(['bet-rio', 'default']);
    // The same again changes nothing and writes nothing.
    const again = cli('grant', '--email', 'new@example.com', '--brand', 'bet-rio', '--as', ANA);
    expect(again.status).toBe(0);
    expect(again.out).toContain('unchanged');
    const revoked = cli('revoke', '--email', 'new@example.com', '--brand', 'default', '--as', ANA);
    expect(revoked.status, revoked.err).toBe(0);
    expect(await grantsOf('new@example.com')).toEqual(['bet-rio']);
    expect(await grantRows()).toEqual([
      {
        action: 'operator.brand.grant',
        outcome: 'done',
        case_type: 'operator',
        case_id: 'new@example.com',
        operator_email: ANA,
        before: { brands: ['default'] },
        after: { brand: 'bet-rio', brands: ['bet-rio', 'default'] },
      },
      {
        action: 'operator.brand.revoke',
        outcome: 'done',
        case_type: 'operator',
        case_id: 'new@example.com',
        operator_email: ANA,
        before: { brands: ['bet-rio', 'default'] },
        after: { brand: 'default', brands: ['bet-rio'] },
      },
    ]);
    const list = cli('grants');
    expect(list.status).toBe(0);
    expect(list.out).toContain(`${ANA}\tadmin\tevery brand (admin)`);
    expect(list.out).toContain('new@example.com\tviewer\tbet-rio');
  });

  it('refuses bad input by its option, and what does not exist, with nothing written', async () => {
    const rows = (await grantRows()).length;
    const notAdmin = cli('grant', '--email', CAIO, '--brand', 'bet-rio', '--as', CAIO);
    expect(notAdmin.status).toBe(2);
    expect(notAdmin.err).toContain('--as');
    const badBrand = cli('grant', '--email', CAIO, '--brand', 'Bet Rio', '--as', ANA);
    expect(badBrand.status).toBe(2);
    expect(badBrand.err).toContain('--brand');
    const noBrand = cli('grant', '--email', CAIO, '--brand', 'bet-sp', '--as', ANA);
    expect(noBrand.status).toBe(1);
    expect(noBrand.err).toContain('no brand bet-sp');
    const noOperator = cli('revoke', '--email', 'nobody@example.com', '--brand', 'default', '--as', ANA);
    expect(noOperator.status).toBe(1);
    expect(noOperator.err).toContain('nobody@example.com: no such operator');
    expect((await grantRows()).length).toBe(rows);
    expect(await grantsOf(CAIO)).toEqual(['bet-rio', 'default']);
  });
});
