import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../common/passwords';
import { DEFAULT_BRAND_ID } from '../../contracts/brand';
import {
  type BrandActor,
  BrandExists,
  BrandNotFound,
  createBrand,
  getBrand,
  listBrands,
  updateBrand,
} from '../../db/brands';
import { migrate } from '../../db/migrate';
import { listActions } from '../../db/operator-actions';
import { saveOperator } from '../../db/operators';
import { createPool, type Pool } from '../../db/pool';
import { freshDatabase } from '../helpers/postgres';

// The brands in Postgres, each write audited with it, and `npm run operator -- brand ...` as an
// admin runs it, against a database of its own.

const ROOT = path.resolve(__dirname, '../..');
const ANA = 'ana.admin@pixflow.local';
const CAIO = 'caio.reviewer@pixflow.local';
const ana: BrandActor = { operatorId: null, operatorEmail: ANA, operatorRole: 'admin' };

let databaseUrl: string;
let pool: Pool;

function brandCli(...args: string[]) {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'scripts/operator.ts'), 'brand', ...args],
    { cwd: ROOT, env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8' },
  );
  return { status: r.status, out: r.stdout, err: r.stderr };
}

const brandActions = () =>
  listActions(pool, { caseIds: undefined, order: 'oldest', limit: 100 }).then((all) =>
    all.filter((a) => a.action.startsWith('brand.')),
  );

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  await migrate(databaseUrl);
  pool = createPool(databaseUrl, 5);
  const passwordHash = await hashPassword('a long enough password for tests');
  await saveOperator(pool, { email: ANA, role: 'admin', passwordHash });
  await saveOperator(pool, { email: CAIO, role: 'reviewer', passwordHash });
}, 60_000);

afterAll(async () => {
  await pool?.end();
});

describe('brands in Postgres', () => {
  it('has the default brand once migrated, its operator fields unset', async () => {
    expect(await listBrands(pool)).toEqual([
      expect.objectContaining({
        id: DEFAULT_BRAND_ID,
        name: 'pixflow',
        legalName: null,
        cnpj: null,
        authorization: null,
      }),
    ]);
  });

  it('creates a brand with its audit row, and refuses its id a second time', async () => {
    const created = await createBrand(pool, ana, { id: 'bet-rio', name: 'Bet Rio', cnpj: '11222333000181' });
    expect(created).toMatchObject({
      id: 'bet-rio',
      name: 'Bet Rio',
      cnpj: '11222333000181',
      legalName: null,
    });
    expect(await getBrand(pool, 'bet-rio')).toEqual(created);
    await expect(createBrand(pool, ana, { id: 'bet-rio', name: 'Other' })).rejects.toBeInstanceOf(
      BrandExists,
    );
    expect((await getBrand(pool, 'bet-rio'))?.name).toBe('Bet Rio');
    const audit = await brandActions();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      action: 'brand.create',
      outcome: 'done',
      operatorEmail: ANA,
      caseType: 'brand',
      caseId: 'bet-rio',
      before: null,
      after: { id: 'bet-rio', name: 'Bet Rio', cnpj: '11222333000181', legalName: null, authorization: null },
    });
  });

  it('updates the fields named, audits before and after, and writes nothing when nothing changes', async () => {
    const { brand, changed } = await updateBrand(pool, ana, 'bet-rio', {
      legalName: 'Rio Apostas Ltda.',
      authorization: 'Portaria SPA/MF nº 1.234/2024',
    });
    expect(changed).toBe(true);
    expect(brand).toMatchObject({ id: 'bet-rio', name: 'Bet Rio', legalName: 'Rio Apostas Ltda.' });
    expect(brand.updatedAt > brand.createdAt).toBe(true);
    const [, update] = await brandActions();
    expect(update).toMatchObject({
      action: 'brand.update',
      caseId: 'bet-rio',
      before: { legalName: null, authorization: null, name: 'Bet Rio' },
      after: { legalName: 'Rio Apostas Ltda.', authorization: 'Portaria SPA/MF nº 1.234/2024' },
    });
    const again = await updateBrand(pool, ana, 'bet-rio', { name: 'Bet Rio' });
    expect(again.changed).toBe(false);
    expect(await brandActions()).toHaveLength(2);
  });

  it('refuses to update a brand that does not exist, writing nothing', async () => {
    await expect(updateBrand(pool, ana, 'no-such', { name: 'x' })).rejects.toBeInstanceOf(BrandNotFound);
    expect(await getBrand(pool, 'no-such')).toBeUndefined();
    expect(await brandActions()).toHaveLength(2);
  });

  it('applies updates at once one after the other, each audited against what the last left', async () => {
    const names = Array.from({ length: 8 }, (_, i) => `Bet Rio ${i}`);
    await Promise.all(names.map((name) => updateBrand(pool, ana, 'bet-rio', { name })));
    const updates = (await brandActions()).slice(2) as Array<{
      before: { name: string };
      after: { name: string };
    }>;
    expect(updates).toHaveLength(8);
    // A chain: each update's before is the previous one's after, and every name was applied once.
    const afters = updates.map((u) => u.after.name);
    expect(updates.map((u) => u.before.name)).toEqual(['Bet Rio', ...afters.slice(0, -1)]);
    expect([...afters].sort()).toEqual(names);
    expect((await getBrand(pool, 'bet-rio'))?.name).toBe(afters.at(-1));
  });

  it('holds the id and the CNPJ to their forms in the table too', async () => {
    await expect(createBrand(pool, ana, { id: 'Bad Id', name: 'x' })).rejects.toThrow(/brands_id_check/);
    await expect(createBrand(pool, ana, { id: 'ok-id', name: 'x', cnpj: '123' })).rejects.toThrow(
      /brands_cnpj_check/,
    );
    expect(await getBrand(pool, 'ok-id')).toBeUndefined();
  });
});

describe('npm run operator -- brand', () => {
  it('lists and shows the brands, the CNPJ as printed', () => {
    const list = brandCli('list');
    expect(list.status, list.err).toBe(0);
    expect(list.out).toContain('default\tpixflow\n');
    expect(list.out).toMatch(/^bet-rio\tBet Rio \d\tRio Apostas Ltda\., CNPJ 11\.222\.333\/0001-81$/m);
    const shown = brandCli('show', 'default');
    expect(shown.status, shown.err).toBe(0);
    expect(shown.out).toContain('default: pixflow');
    expect(shown.out).toContain('  CNPJ:          (not set)');
  });

  it('creates a brand as an admin, taking a punctuated CNPJ, audited under that admin', async () => {
    const r = brandCli(
      'create',
      'sorte-sul',
      '--name',
      'Sorte Sul',
      '--legal-name',
      'Sul Loterias S.A.',
      '--cnpj',
      '11.444.777/0001-61',
      '--authorization',
      'Portaria SPA/MF nº 5.678/2024',
      '--as',
      ANA,
    );
    expect(r.status, r.err).toBe(0);
    expect(r.out).toContain('created brand sorte-sul');
    expect(r.out).toContain('  CNPJ:          11.444.777/0001-61');
    expect(await getBrand(pool, 'sorte-sul')).toMatchObject({
      name: 'Sorte Sul',
      legalName: 'Sul Loterias S.A.',
      cnpj: '11444777000161',
      authorization: 'Portaria SPA/MF nº 5.678/2024',
    });
    const [audit] = await listActions(pool, { action: 'brand.create', order: 'newest', limit: 1 });
    expect(audit).toMatchObject({ caseId: 'sorte-sul', operatorEmail: ANA, operatorRole: 'admin' });
  });

  it('updates a brand as an admin, its id kept', async () => {
    const r = brandCli('update', 'default', '--cnpj', '11222333000181', '--as', ANA);
    expect(r.status, r.err).toBe(0);
    expect(r.out).toContain('updated brand default');
    expect(await getBrand(pool, 'default')).toMatchObject({ name: 'pixflow', cnpj: '11222333000181' });
    const [audit] = await listActions(pool, { action: 'brand.update', order: 'newest', limit: 1 });
    expect(audit).toMatchObject({
      caseId: 'default',
      before: { cnpj: null },
      after: { cnpj: '11222333000181' },
    });
  });

  it('bad input names the field, exits 2 and changes nothing', async () => {
    const before = await listBrands(pool);
    const auditBefore = (await brandActions()).length;
    const cases: Array<[string[], string]> = [
      [
        ['create', 'new-brand', '--name', 'New', '--cnpj', '11222333000182', '--as', ANA],
        '--cnpj: has invalid check digits',
      ],
      [
        ['create', 'new-brand', '--name', 'New', '--cnpj', '11111111111111', '--as', ANA],
        '--cnpj: is one digit repeated',
      ],
      [
        ['create', 'new-brand', '--name', 'New', '--cnpj', '1234', '--as', ANA],
        '--cnpj: must be 14 characters',
      ],
      [['create', 'New_Brand', '--name', 'New', '--as', ANA], 'BRAND_ID: must be 2 to 40 lower-case letters'],
      [['create', 'new-brand', '--as', ANA], '--name: is required'],
      [['create', 'new-brand', '--name', 'New'], '--as: must be the email address of an admin operator'],
      [
        ['create', 'new-brand', '--name', 'New', '--as', CAIO],
        `--as: ${CAIO} is not an enabled admin operator`,
      ],
      [['update', 'default', '--as', ANA], 'update: name at least one field to change'],
      [['update', 'default', '--legal-name', ' ', '--as', ANA], '--legal-name: must not be empty'],
      [['show'], 'BRAND_ID: is required'],
      [['rename', 'default'], 'command: must be list, show, create or update'],
      [['create', 'new-brand', '--nmae', 'New'], "Unknown option '--nmae'"],
    ];
    for (const [args, said] of cases) {
      const r = brandCli(...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.err, args.join(' ')).toContain(said);
    }
    expect(await listBrands(pool)).toEqual(before);
    expect(await brandActions()).toHaveLength(auditBefore);
  });

  it('a taken id or a missing brand is said plainly, exit 1', () => {
    const taken = brandCli('create', 'default', '--name', 'Again', '--as', ANA);
    expect(taken.status).toBe(1);
    expect(taken.err).toContain('BRAND_ID: a brand default exists already');
    const missing = brandCli('update', 'no-such', '--name', 'x', '--as', ANA);
    expect(missing.status).toBe(1);
    expect(missing.err).toContain('BRAND_ID: no brand no-such');
    const unseen = brandCli('show', 'no-such');
    expect(unseen.status).toBe(1);
    expect(unseen.err).toContain('BRAND_ID: no brand no-such');
  });
});
