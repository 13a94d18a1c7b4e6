import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../common/passwords';
import { listBrandAccounts } from '../../db/brand-accounts';
import { type BrandActor, createBrand } from '../../db/brands';
import { migrate } from '../../db/migrate';
import { listActions } from '../../db/operator-actions';
import { saveOperator } from '../../db/operators';
import { createPool, type Pool } from '../../db/pool';
import { freshDatabase } from '../helpers/postgres';

// Before another brand moves money, no brand's account may take the environment's webhook
// values, which are the default brand's (docs/brands.md): `npm run operator -- brand account set`
// as a process, with WEBHOOK_SECRET, WEBHOOK_PARTNER_ID and API_PIX_WEBHOOK_SECRET in its
// environment as the API's and the worker's, refuses another brand's account holding one, naming
// the option, exit 2 with nothing written and the value never printed; the default brand may.

const ROOT = path.resolve(__dirname, '../..');
const ANA = 'ana.admin@pixflow.local';
const ana: BrandActor = { operatorId: null, operatorEmail: ANA, operatorRole: 'admin' };
const BRAND = 'cli-money';
const fresh = () => randomBytes(18).toString('base64url');
const ENV = {
  WEBHOOK_SECRET: `env-webhook-${fresh()}`,
  WEBHOOK_PARTNER_ID: `env-partner-${randomBytes(3).toString('hex')}`,
  API_PIX_WEBHOOK_SECRET: `env-pix-webhook-${fresh()}`,
};
const CODEC_ID = 'kcli';
const CODEC = `${CODEC_ID}:${randomBytes(32).toString('base64')}`;
const HASH_KEY = fresh();

let databaseUrl: string;
let pool: Pool;
let dir: string;

function secretFile(value: string) {
  const file = path.join(dir, `secret-${randomBytes(4).toString('hex')}`);
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
  return file;
}

function accountCli(args: string[], input?: string) {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'scripts/operator.ts'), 'brand', 'account', ...args],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        CODEC_KEYS: CODEC,
        CODEC_ACTIVE_KEY_ID: CODEC_ID,
        PII_HASH_KEY: HASH_KEY,
        ...ENV,
      },
      encoding: 'utf8',
      ...(input !== undefined ? { input } : {}),
    },
  );
  return { status: r.status, out: r.stdout, err: r.stderr };
}

const identityPayments = (brand: string, over: { partnerId?: string; webhookSecret?: string } = {}) => [
  'set',
  brand,
  'identity-payments',
  '--base-url',
  'https://api.provider.example',
  '--auth-url',
  'https://auth.provider.example',
  '--client-id',
  `client-${brand}`,
  '--merchant',
  `merchant-${brand}`,
  '--partner-id',
  over.partnerId ?? `partner-${brand}`,
  '--client-secret-file',
  secretFile(fresh()),
  '--api-key-file',
  secretFile(fresh()),
  '--webhook-secret-file',
  secretFile(over.webhookSecret ?? fresh()),
  '--as',
  ANA,
];

/** An api-pix account's `set`, its webhook secret read from standard input. */
const apiPix = (brand: string) => [
  'set',
  brand,
  'api-pix',
  '--base-url',
  'https://pix.psp.example/api/v2',
  '--client-id',
  `client-${brand}`,
  '--pix-key',
  `${brand}@example.com`,
  '--cert-file',
  '/nonexistent/cert.pem',
  '--key-file',
  '/nonexistent/key.pem',
  '--webhook-origin',
  'https://hooks.example:8443',
  '--client-secret-file',
  secretFile(fresh()),
  '--webhook-secret-stdin',
  '--as',
  ANA,
];

const accountWrites = async () =>
  (await listActions(pool, { caseIds: undefined, order: 'oldest', limit: 200 })).filter((a) =>
    a.action.startsWith('brand.account.'),
  ).length;

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  await migrate(databaseUrl);
  pool = createPool(databaseUrl, 2);
  dir = mkdtempSync(path.join(os.tmpdir(), 'brand-money-cli-'));
  await saveOperator(pool, {
    email: ANA,
    role: 'admin',
    passwordHash: await hashPassword('a long enough password for tests'),
  });
  await createBrand(pool, ana, { id: BRAND, name: 'CLI Money' });
}, 60_000);

afterAll(async () => {
  await pool?.end();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("brand account set with the environment's webhook values", () => {
  it('refuses them for another brand, naming the option, exit 2, nothing written, the value never shown', async () => {
    const refusals = [
      {
        run: accountCli(identityPayments(BRAND, { webhookSecret: ENV.WEBHOOK_SECRET })),
        says: "--webhook-secret-stdin or --webhook-secret-file: is the environment's WEBHOOK_SECRET, the default brand's",
      },
      {
        run: accountCli(identityPayments(BRAND, { partnerId: ENV.WEBHOOK_PARTNER_ID })),
        says: "--partner-id: is the environment's WEBHOOK_PARTNER_ID, the default brand's",
      },
      {
        run: accountCli(apiPix(BRAND), `${ENV.API_PIX_WEBHOOK_SECRET}\n`),
        says: "--webhook-secret-stdin or --webhook-secret-file: is the environment's API_PIX_WEBHOOK_SECRET, the default brand's",
      },
    ];
    for (const { run, says } of refusals) {
      expect(run.status, run.err).toBe(2);
      expect(run.err).toContain(says);
      expect(run.err).toContain('nothing changed');
      for (const value of [ENV.WEBHOOK_SECRET, ENV.API_PIX_WEBHOOK_SECRET])
        expect(run.out + run.err).not.toContain(value);
    }
    expect(await listBrandAccounts(pool, BRAND)).toEqual([]);
    expect(await accountWrites()).toBe(0);
  });

  it('takes values of its own for another brand, and the environment’s for the default brand', async () => {
    const own = accountCli(identityPayments(BRAND));
    expect(own.status, own.err).toBe(0);
    // The API Pix listener's secret is not the first provider's: another brand may hold it there.
    const pix = accountCli(apiPix(BRAND), `${ENV.WEBHOOK_SECRET}\n`);
    expect(pix.status, pix.err).toBe(0);
    const byDefault = accountCli(
      identityPayments('default', { partnerId: ENV.WEBHOOK_PARTNER_ID, webhookSecret: ENV.WEBHOOK_SECRET }),
    );
    expect(byDefault.status, byDefault.err).toBe(0);
    expect((await listBrandAccounts(pool)).map((a) => `${a.brandId} ${a.connector}`)).toEqual([
      `${BRAND} api-pix`,
      `${BRAND} identity-payments`,
      'default identity-payments',
    ]);
  });
});
