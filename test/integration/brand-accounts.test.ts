import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCodecKeys } from '../../common/codec';
import { loadConfig } from '../../common/config';
import { hashPassword } from '../../common/passwords';
import { sealSecret } from '../../common/secret-box';
import {
  type AccountKeys,
  type AccountSources,
  connectorSettingsFor,
  NoSuchBrand,
  sealBrandAccount,
  UnreadableAccount,
} from '../../connectors/accounts';
import { toApiPixTxid } from '../../connectors/api-pix';
import { UnauthorizedError } from '../../connectors/errors';
import { brandConnectors } from '../../connectors/registry';
import type { BrandAccount } from '../../contracts/brand-account';
import {
  BrandAccountClash,
  getBrandAccount,
  listBrandAccounts,
  removeBrandAccount,
  sealedBrandAccounts,
  setBrandAccount,
} from '../../db/brand-accounts';
import { type BrandActor, BrandNotFound, createBrand } from '../../db/brands';
import { migrate } from '../../db/migrate';
import { listActions } from '../../db/operator-actions';
import { saveOperator } from '../../db/operators';
import { createPool, type Pool } from '../../db/pool';
import { startProviderSandbox } from '../contract/support';
import { startApiPixForTest } from '../helpers/api-pix';
import { freshDatabase } from '../helpers/postgres';
import { waitUntil } from '../helpers/wait';

// Each brand's connector accounts in Postgres (sealed, hashed, audited), resolved into the
// settings its connectors are built from (the default brand falling back to the environment),
// and `npm run operator -- brand account ...` as an admin runs it, against a database of its own.

const ROOT = path.resolve(__dirname, '../..');
const ANA = 'ana.admin@pixflow.local';
const CAIO = 'caio.reviewer@pixflow.local';
const ana: BrandActor = { operatorId: null, operatorEmail: ANA, operatorRole: 'admin' };

const fresh = () => randomBytes(18).toString('base64url');
const codecSpec = () => `k${randomBytes(3).toString('hex')}:${randomBytes(32).toString('base64')}`;

// This run's own keys, as the API's and the worker's would be: the CLI is given the same.
const CODEC = codecSpec();
const CODEC_ID = CODEC.split(':')[0] as string;
const HASH_KEY = fresh();
const keys: AccountKeys = { codecKeys: parseCodecKeys(CODEC, CODEC_ID), hashKey: HASH_KEY };

// The environment a single-brand install runs with: the default brand's accounts.
const environment = loadConfig({
  PROVIDER_BASE_URL: 'http://127.0.0.1:1',
  PROVIDER_MERCHANT: 'env-merchant',
  WEBHOOK_PARTNER_ID: 'env-partner',
});

let databaseUrl: string;
let pool: Pool;
let dir: string;

const sources = (): AccountSources => ({
  environment,
  keys,
  read: (brandId) => sealedBrandAccounts(pool, brandId),
});

function identityPayments(partnerId: string): Extract<BrandAccount, { connector: 'identity-payments' }> {
  return {
    connector: 'identity-payments',
    settings: {
      baseUrl: 'https://api.provider.example',
      authUrl: 'https://auth.provider.example',
      clientId: `client-${partnerId}`,
      merchant: `merchant-${partnerId}`,
      partnerId,
    },
    secrets: { clientSecret: fresh(), apiKey: fresh(), webhookSecret: fresh() },
  };
}

function apiPix(pixKey: string): Extract<BrandAccount, { connector: 'api-pix' }> {
  return {
    connector: 'api-pix',
    settings: {
      baseUrl: 'https://pix.psp.example/api/v2',
      clientId: 'psp-client',
      pixKey,
      certFile: path.join(os.tmpdir(), 'no-such-dir', 'cert.pem'),
      keyFile: path.join(os.tmpdir(), 'no-such-dir', 'key.pem'),
      webhookOrigin: 'https://hooks.bet-rio.example:8443',
    },
    secrets: { clientSecret: fresh(), webhookSecret: fresh() },
  };
}

const set = (brandId: string, account: BrandAccount) => {
  const sealed = sealBrandAccount(keys, brandId, account);
  return setBrandAccount(pool, ana, { ...sealed, settings: sealed.settings as Record<string, unknown> });
};

const accountActions = () =>
  listActions(pool, { caseIds: undefined, order: 'oldest', limit: 200 }).then((all) =>
    all.filter((a) => a.action.startsWith('brand.account.')),
  );

/** Every value of the account's secrets, to look for where none may be. */
const secretValues = (a: BrandAccount) => Object.values(a.secrets).filter((v): v is string => !!v);

function accountCli(args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}) {
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
        ...opts.env,
      },
      encoding: 'utf8',
      ...(opts.input !== undefined ? { input: opts.input } : {}),
    },
  );
  return { status: r.status, out: r.stdout, err: r.stderr };
}

/** A secret in a file of its own, as a container's secret is mounted. */
function secretFile(value: string) {
  const file = path.join(dir, `secret-${randomBytes(4).toString('hex')}`);
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
  return file;
}

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  await migrate(databaseUrl);
  pool = createPool(databaseUrl, 5);
  dir = mkdtempSync(path.join(os.tmpdir(), 'brand-accounts-'));
  const passwordHash = await hashPassword('a long enough password for tests');
  await saveOperator(pool, { email: ANA, role: 'admin', passwordHash });
  await saveOperator(pool, { email: CAIO, role: 'reviewer', passwordHash });
  await createBrand(pool, ana, { id: 'bet-rio', name: 'Bet Rio' });
  await createBrand(pool, ana, { id: 'sol-bet', name: 'Sol Bet' });
}, 60_000);

afterAll(async () => {
  await pool?.end();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("a brand's connector accounts in Postgres", () => {
  const rio = identityPayments('bet-rio-partner');

  it('sets an account with its audit row, which says "set" for each secret and holds none', async () => {
    const { account, created, changed } = await set('bet-rio', rio);
    expect({ created, changed }).toEqual({ created: true, changed: true });
    expect(account).toMatchObject({
      brandId: 'bet-rio',
      connector: 'identity-payments',
      settings: rio.settings,
      secretsSet: ['apiKey', 'clientSecret', 'webhookSecret'].sort(),
    });
    expect(Object.keys(account).sort()).toEqual(
      ['brandId', 'connector', 'createdAt', 'secretsSet', 'settings', 'updatedAt'].sort(),
    );
    const [audit] = await accountActions();
    expect(audit).toMatchObject({
      action: 'brand.account.set',
      outcome: 'done',
      operatorEmail: ANA,
      caseType: 'brand',
      caseId: 'bet-rio',
      before: null,
      after: {
        connector: 'identity-payments',
        settings: rio.settings,
        secrets: { clientSecret: 'set', apiKey: 'set', webhookSecret: 'set' },
      },
    });
    const written = JSON.stringify(audit);
    for (const secret of secretValues(rio)) expect(written).not.toContain(secret);
  });

  it('keeps the secrets sealed in the table: no column holds one in plain text', async () => {
    const { rows } = await pool.query(
      `SELECT settings::text AS settings, secrets_sealed, secret_hashes::text AS hashes
         FROM brand_connector_accounts WHERE brand_id = 'bet-rio'`,
    );
    expect(rows).toHaveLength(1);
    const raw = Object.values(rows[0] as Record<string, string>).join('\n');
    for (const secret of secretValues(rio)) expect(raw).not.toContain(secret);
    expect(rows[0].secrets_sealed).toMatch(new RegExp(`^${CODEC_ID}\\.`));
    // What reads accounts for showing them has no sealed text either.
    expect(JSON.stringify(await listBrandAccounts(pool))).not.toContain(rows[0].secrets_sealed);
    expect(await getBrandAccount(pool, 'bet-rio', 'identity-payments')).not.toHaveProperty('secretsSealed');
  });

  it('replaces an account, saying which secret changed, and writes nothing when nothing does', async () => {
    const next = { ...rio, secrets: { ...rio.secrets, clientSecret: fresh() } };
    expect((await set('bet-rio', next)).changed).toBe(true);
    const replaced = (await accountActions()).at(-1);
    expect(replaced).toMatchObject({
      before: { secrets: { clientSecret: 'set', apiKey: 'set', webhookSecret: 'set' } },
      after: { secrets: { clientSecret: 'changed', apiKey: 'unchanged', webhookSecret: 'unchanged' } },
    });
    expect(JSON.stringify(replaced)).not.toContain(next.secrets.clientSecret);
    const again = await set('bet-rio', next);
    expect({ created: again.created, changed: again.changed }).toEqual({ created: false, changed: false });
    expect(await accountActions()).toHaveLength(2);
    // The secrets that reach a connector are the new ones.
    const resolved = await connectorSettingsFor('bet-rio', sources());
    expect(resolved['identity-payments']?.account.clientSecret).toBe(next.secrets.clientSecret);
    Object.assign(rio.secrets, next.secrets);
  });

  it("refuses another brand's partner id or webhook secret, writing nothing", async () => {
    const before = await accountActions();
    const samePartner = identityPayments('bet-rio-partner');
    await expect(set('sol-bet', samePartner)).rejects.toEqual(
      new BrandAccountClash('identity-payments', 'partnerId'),
    );
    const sameSecret = identityPayments('sol-bet-partner');
    sameSecret.secrets.webhookSecret = rio.secrets.webhookSecret;
    await expect(set('sol-bet', sameSecret)).rejects.toEqual(
      new BrandAccountClash('identity-payments', 'webhookSecret'),
    );
    expect(await getBrandAccount(pool, 'sol-bet', 'identity-payments')).toBeUndefined();
    expect(await accountActions()).toEqual(before);
    // Its own partner id and secret are taken.
    expect((await set('sol-bet', identityPayments('sol-bet-partner'))).created).toBe(true);
  });

  it("refuses another brand's Pix key, and the same path secret is no clash at another connector", async () => {
    const rioPix = apiPix('3d94a38b-f344-460e-b6c9-489469b2fb03');
    // The API Pix listener's path is not the first provider's: the same secret routes nowhere twice.
    rioPix.secrets.webhookSecret = rio.secrets.webhookSecret;
    expect((await set('bet-rio', rioPix)).created).toBe(true);
    await expect(set('sol-bet', apiPix('3d94a38b-f344-460e-b6c9-489469b2fb03'))).rejects.toEqual(
      new BrandAccountClash('api-pix', 'pixKey'),
    );
  });

  it('applies sets at once one after the other, each audited against what the last left', async () => {
    await createBrand(pool, ana, { id: 'vento-bet', name: 'Vento Bet' });
    const base = identityPayments('vento-partner');
    // Another writer's account, not yet committed, when the sets start: each must wait for it
    // and replace it, never take the brand for having none.
    const holder = new pg.Client({ connectionString: databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      const first = sealBrandAccount(keys, 'vento-bet', base);
      await holder.query(
        `INSERT INTO brand_connector_accounts (brand_id, connector, settings, secrets_sealed, secret_hashes)
         VALUES ($1, $2, $3, $4, $5)`,
        [first.brandId, first.connector, first.settings, first.secretsSealed, first.secretHashes],
      );
      const tries = Array.from({ length: 4 }, () => ({
        ...base,
        secrets: { ...base.secrets, clientSecret: fresh() },
      }));
      const pending = Promise.all(tries.map((t) => set('vento-bet', t)));
      await waitUntil(
        async () =>
          (
            await pool.query(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
            )
          ).rows[0].n as number,
        (n) => n >= 4,
      );
      await holder.query('COMMIT');
      const results = await pending;
      expect(results.map((r) => r.created)).toEqual([false, false, false, false]);
    } finally {
      await holder.end();
    }
    const audits = (await accountActions()).filter((a) => a.caseId === 'vento-bet');
    expect(audits.map((a) => (a.after as { secrets: object }).secrets)).toEqual(
      Array.from({ length: 4 }, () => ({
        clientSecret: 'changed',
        apiKey: 'unchanged',
        webhookSecret: 'unchanged',
      })),
    );
  });

  it('refuses an account for a brand that does not exist', async () => {
    await expect(set('no-such', identityPayments('nobody'))).rejects.toBeInstanceOf(BrandNotFound);
    await expect(removeBrandAccount(pool, ana, 'no-such', 'api-pix')).rejects.toBeInstanceOf(BrandNotFound);
  });

  it('removes an account with its audit row, and says when there was none', async () => {
    expect(await removeBrandAccount(pool, ana, 'bet-rio', 'api-pix')).toBe(true);
    const removed = (await accountActions()).at(-1);
    expect(removed).toMatchObject({
      action: 'brand.account.remove',
      caseId: 'bet-rio',
      before: { connector: 'api-pix', secrets: { clientSecret: 'set', webhookSecret: 'set' } },
      after: null,
    });
    const count = (await accountActions()).length;
    expect(await removeBrandAccount(pool, ana, 'bet-rio', 'api-pix')).toBe(false);
    expect(await accountActions()).toHaveLength(count);
  });
});

describe("a brand's connector settings", () => {
  it("gives the default brand the environment's accounts while it has no record of its own", async () => {
    const resolved = await connectorSettingsFor('default', sources());
    expect(resolved['identity-payments']).toEqual({
      from: 'environment',
      account: {
        baseUrl: 'http://127.0.0.1:1',
        authUrl: environment.provider.authUrl,
        clientId: environment.PROVIDER_CLIENT_ID,
        clientSecret: environment.PROVIDER_CLIENT_SECRET,
        apiKey: environment.PROVIDER_API_KEY,
        merchant: 'env-merchant',
        partnerId: 'env-partner',
        webhookSecret: environment.WEBHOOK_SECRET,
      },
    });
    // The environment configures no API Pix PSP: the default brand has none either.
    expect(resolved['api-pix']).toBeUndefined();
  });

  it("gives the default brand its own record where it has one, the environment's elsewhere", async () => {
    const own = identityPayments('default-partner');
    await set('default', own);
    const resolved = await connectorSettingsFor('default', sources());
    expect(resolved['identity-payments']).toEqual({
      from: 'brand',
      account: { ...own.settings, ...own.secrets },
    });
    await removeBrandAccount(pool, ana, 'default', 'identity-payments');
    expect((await connectorSettingsFor('default', sources()))['identity-payments']?.from).toBe('environment');
  });

  it("gives another brand its records alone, never the default brand's accounts", async () => {
    await createBrand(pool, ana, { id: 'nova-bet', name: 'Nova Bet' });
    expect(await connectorSettingsFor('nova-bet', sources())).toEqual({
      brandId: 'nova-bet',
      'identity-payments': undefined,
      'api-pix': undefined,
    });
    const pix = apiPix('+5521987654321');
    await set('nova-bet', pix);
    const resolved = await connectorSettingsFor('nova-bet', sources());
    expect(resolved['identity-payments']).toBeUndefined();
    expect(resolved['api-pix']).toEqual({
      from: 'brand',
      account: {
        baseUrl: pix.settings.baseUrl,
        clientId: pix.settings.clientId,
        pixKey: pix.settings.pixKey,
        certFile: pix.settings.certFile,
        keyFile: pix.settings.keyFile,
        clientSecret: pix.secrets.clientSecret,
        webhookSecret: pix.secrets.webhookSecret,
        // Where the worker is to register the account's webhook at the PSP, its path secret in it.
        webhookUrl: `https://hooks.bet-rio.example:8443/webhooks/api-pix/${pix.secrets.webhookSecret}`,
      },
    });
  });

  it('says a brand that does not exist is none, and a record its codec key no longer opens is unreadable', async () => {
    await expect(connectorSettingsFor('no-such', sources())).rejects.toBeInstanceOf(NoSuchBrand);
    const other = codecSpec();
    const rotated: AccountKeys = {
      codecKeys: parseCodecKeys(other, other.split(':')[0] as string),
      hashKey: HASH_KEY,
    };
    await expect(connectorSettingsFor('bet-rio', { ...sources(), keys: rotated })).rejects.toThrow(
      UnreadableAccount,
    );
  });
  it("says what of a record does not read, never a secret's text", async () => {
    await createBrand(pool, ana, { id: 'raw-bet', name: 'Raw Bet' });
    const secret = fresh();
    const { settings } = apiPix('raw@bet.example');
    // Sealed, but not the JSON pixflow seals: what a hand-made row might hold.
    await setBrandAccount(pool, ana, {
      brandId: 'raw-bet',
      connector: 'api-pix',
      settings,
      secretsSealed: sealSecret(keys.codecKeys, `{"clientSecret": "${secret}"`),
      secretHashes: {},
    });
    const failure = await connectorSettingsFor('raw-bet', sources()).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(UnreadableAccount);
    expect((failure as Error).message).toBe(
      "brand raw-bet's api-pix account: its secrets are not the JSON pixflow seals",
    );
    await setBrandAccount(pool, ana, {
      brandId: 'raw-bet',
      connector: 'api-pix',
      settings: { ...settings, baseUrl: 'http://plain.example' },
      secretsSealed: sealSecret(keys.codecKeys, JSON.stringify({ clientSecret: secret })),
      secretHashes: { clientSecret: 'x' },
    });
    await expect(connectorSettingsFor('raw-bet', sources())).rejects.toThrow(
      "brand raw-bet's api-pix account: settings baseUrl are wrong",
    );
  });
});

describe("a brand's connectors", () => {
  it("speak for the brand's account: its own credentials, opened from the record, reach the provider", async () => {
    const own = identityPayments('lume-partner');
    // A provider that knows this brand's credentials alone.
    const sandbox = await startProviderSandbox({
      clientId: own.settings.clientId,
      clientSecret: own.secrets.clientSecret,
      apiKey: own.secrets.apiKey,
      merchant: own.settings.merchant,
    });
    try {
      own.settings.baseUrl = sandbox.url;
      own.settings.authUrl = sandbox.url;
      await createBrand(pool, ana, { id: 'lume', name: 'Lume' });
      await set('lume', own);
      const tuning = { provider: { timeoutMs: 5_000 } };
      const lume = brandConnectors(await connectorSettingsFor('lume', sources()), tuning);
      expect(lume.apiPix).toBeUndefined();
      expect(lume.collectors.names).toEqual(['identity-payments']);
      expect(await lume.provider?.kyc('73628883504', 'plan_basic')).toMatchObject({ status: 'regular' });
      // The default brand's environment credentials are not this brand's: the provider refuses them.
      const defaults = await connectorSettingsFor('default', {
        ...sources(),
        environment: loadConfig({ PROVIDER_BASE_URL: sandbox.url, PROVIDER_AUTH_URL: sandbox.url }),
      });
      const other = brandConnectors(defaults, tuning);
      await expect(other.provider?.kyc('73628883504', 'plan_basic')).rejects.toBeInstanceOf(
        UnauthorizedError,
      );
    } finally {
      await sandbox.close();
    }
  });

  it("speak for the brand's API Pix account: its certificate files, secret, Pix key and expiry reach the PSP", async () => {
    const psp = await startApiPixForTest();
    let built: ReturnType<typeof brandConnectors> | undefined;
    try {
      await createBrand(pool, ana, { id: 'mare-bet', name: 'Maré Bet' });
      await set('mare-bet', {
        connector: 'api-pix',
        settings: {
          baseUrl: psp.url,
          tokenUrl: psp.tokenUrl,
          clientId: psp.clientId,
          pixKey: psp.pixKey,
          certFile: psp.pki.merchantClient.cert,
          keyFile: psp.pki.merchantClient.key,
          caFile: psp.pki.pspCa.cert,
          expirySeconds: 600,
        },
        secrets: { clientSecret: psp.clientSecret },
      });
      built = brandConnectors(await connectorSettingsFor('mare-bet', sources()), {
        provider: { timeoutMs: 5_000 },
        apiPix: { timeoutMs: 5_000 },
      });
      expect(built.provider).toBeUndefined();
      expect(built.collectors.names).toEqual(['api-pix']);
      const txid = `${Date.now()}001`;
      const before = Date.now();
      const charge = await built.apiPix?.createCharge({
        txid,
        amountCentavos: 2_500,
        payer: { externalId: 'user-1', cpf: '73628883504', email: 'bia@example.com', name: 'Bia Lima' },
      });
      expect(Date.parse(charge?.expiresAt ?? '') - before).toBeLessThan(610_000);
      const cob = (await psp.state()).cobs.find((c: { txid: string }) => c.txid === toApiPixTxid(txid));
      expect(cob).toMatchObject({ chave: psp.pixKey, calendario: { expiracao: 600 } });
    } finally {
      built?.close();
      await psp.close();
    }
  });

  it("name an API Pix account's PEM file that cannot be read, with its brand", async () => {
    await expect(
      (async () =>
        brandConnectors(await connectorSettingsFor('nova-bet', sources()), {
          provider: { timeoutMs: 5_000 },
        }))(),
    ).rejects.toThrow(/^brand nova-bet's api-pix account: certFile ".*cert\.pem" cannot be read \(ENOENT\)$/);
  });
});

describe('npm run operator -- brand account', () => {
  it('sets an account from secret files and standard input, never printing a secret', async () => {
    const account = identityPayments('cli-partner');
    const r = accountCli(
      [
        'set',
        'sol-bet',
        'identity-payments',
        '--base-url',
        account.settings.baseUrl,
        '--auth-url',
        account.settings.authUrl,
        '--client-id',
        account.settings.clientId,
        '--merchant',
        account.settings.merchant,
        '--partner-id',
        account.settings.partnerId,
        '--client-secret-stdin',
        '--api-key-file',
        secretFile(account.secrets.apiKey),
        '--webhook-secret-file',
        secretFile(account.secrets.webhookSecret),
        '--as',
        ANA,
      ],
      { input: `${account.secrets.clientSecret}\n` },
    );
    expect(r.status, r.err).toBe(0);
    expect(r.out).toContain("replaced brand sol-bet's identity-payments account");
    expect(r.out).toContain('  partner id:       cli-partner');
    expect(r.out).toContain('  client secret:    set');
    for (const secret of secretValues(account)) expect(r.out + r.err).not.toContain(secret);
    // What the CLI sealed opens, with the API's and the worker's keys, to what was given.
    const resolved = await connectorSettingsFor('sol-bet', sources());
    expect(resolved['identity-payments']?.account).toEqual({ ...account.settings, ...account.secrets });
    const [audit] = await listActions(pool, { action: 'brand.account.set', order: 'newest', limit: 1 });
    expect(audit).toMatchObject({ caseId: 'sol-bet', operatorEmail: ANA, operatorRole: 'admin' });
  });

  it("shows a brand's accounts, secrets as set, and the default brand's fallback", () => {
    const shown = accountCli(['show', 'sol-bet']);
    expect(shown.status, shown.err).toBe(0);
    expect(shown.out).toContain("brand sol-bet's connector accounts:");
    expect(shown.out).toMatch(/^identity-payments: set /m);
    expect(shown.out).toContain('  webhook secret:   set');
    expect(shown.out).toContain('api-pix: none\n');
    const fallback = accountCli(['show', 'default']);
    expect(fallback.status, fallback.err).toBe(0);
    expect(fallback.out).toContain(
      "identity-payments: none of its own: the environment's settings (the default brand's)",
    );
  });

  it('refuses a secret on the command line by its option, without showing it, changing nothing', async () => {
    // One that starts as an option would, and one given with "=".
    const secret = `-${fresh()}`;
    const before = await getBrandAccount(pool, 'sol-bet', 'identity-payments');
    const r = accountCli(['set', 'sol-bet', 'api-pix', '--client-secret', secret, '--as', ANA]);
    expect(r.status).toBe(2);
    expect(r.err).toMatch(/^--client-secret: a secret is never taken on the command line/m);
    expect(r.err).toContain('nothing changed');
    expect(r.out + r.err).not.toContain(secret);
    const joined = accountCli(['set', 'sol-bet', 'identity-payments', `--api-key=${secret}`, '--as', ANA]);
    expect(joined.status).toBe(2);
    expect(joined.err).toMatch(/^--api-key: a secret is never taken on the command line/m);
    expect(joined.out + joined.err).not.toContain(secret);
    expect(await getBrandAccount(pool, 'sol-bet', 'identity-payments')).toEqual(before);
    expect(await getBrandAccount(pool, 'sol-bet', 'api-pix')).toBeUndefined();
  });

  it('names each bad option and exits 2 with nothing changed', async () => {
    const count = (await accountActions()).length;
    const badUrl = accountCli([
      'set',
      'sol-bet',
      'api-pix',
      '--base-url',
      'http://pix.psp.example',
      '--client-id',
      'c',
      '--pix-key',
      'k',
      '--cert-file',
      'c.pem',
      '--key-file',
      'k.pem',
      '--client-secret-file',
      secretFile(fresh()),
      '--as',
      ANA,
    ]);
    expect(badUrl.status).toBe(2);
    expect(badUrl.err).toContain('--base-url: must be an https:// URL');
    const missing = accountCli(['set', 'sol-bet', 'api-pix', '--client-id', 'c', '--as', ANA]);
    expect(missing.status).toBe(2);
    expect(missing.err).toMatch(/^--base-url: /m);
    expect(missing.err).toMatch(/^--client-secret-stdin or --client-secret-file: /m);
    const foreign = accountCli(['set', 'sol-bet', 'api-pix', '--partner-id', 'p', '--as', ANA]);
    expect(foreign.status).toBe(2);
    expect(foreign.err).toContain('--partner-id: is not a setting of an api-pix account; nothing changed');
    const unreadable = accountCli([
      'set',
      'sol-bet',
      'api-pix',
      '--client-secret-file',
      path.join(dir, 'absent'),
      '--as',
      ANA,
    ]);
    expect(unreadable.status).toBe(2);
    expect(unreadable.err).toMatch(
      /^--client-secret-file: cannot read ".*absent" \(ENOENT\); nothing changed$/m,
    );
    const connector = accountCli(['set', 'sol-bet', 'stripe', '--as', ANA]);
    expect(connector.status).toBe(2);
    expect(connector.err).toContain('CONNECTOR: must be identity-payments or api-pix');
    const stray = accountCli(['remove', 'sol-bet', 'identity-payments', '--merchant', 'm', '--as', ANA]);
    expect(stray.status).toBe(2);
    expect(stray.err).toContain('--merchant: is for set alone; nothing changed');
    const notAdmin = accountCli(['remove', 'sol-bet', 'identity-payments', '--as', CAIO]);
    expect(notAdmin.status).toBe(2);
    expect(notAdmin.err).toContain(`--as: ${CAIO} is not an enabled admin operator`);
    expect(await accountActions()).toHaveLength(count);
    expect(await getBrandAccount(pool, 'sol-bet', 'identity-payments')).toBeDefined();
  });

  it('refuses, in production, to seal under keys that are not its own, changing nothing', async () => {
    const count = (await accountActions()).length;
    const a = identityPayments('prod-partner');
    const r = accountCli(
      [
        'set',
        'sol-bet',
        'identity-payments',
        '--base-url',
        a.settings.baseUrl,
        '--auth-url',
        a.settings.authUrl,
        '--client-id',
        a.settings.clientId,
        '--merchant',
        a.settings.merchant,
        '--partner-id',
        a.settings.partnerId,
        '--client-secret-file',
        secretFile(a.secrets.clientSecret),
        '--api-key-file',
        secretFile(a.secrets.apiKey),
        '--webhook-secret-file',
        secretFile(a.secrets.webhookSecret),
        '--as',
        ANA,
      ],
      // Unset, the codec's keys would be the public development ones.
      { env: { NODE_ENV: 'production', CODEC_KEYS: '', CODEC_ACTIVE_KEY_ID: '' } },
    );
    expect(r.status).toBe(2);
    expect(r.err).toMatch(/^CODEC_KEYS: not set \(production needs its own\).*; nothing changed$/m);
    expect(await accountActions()).toHaveLength(count);
  });

  it("exits 1 for a brand that does not exist, and for another brand's partner id", () => {
    const unknown = accountCli(['show', 'no-such']);
    expect(unknown.status).toBe(1);
    expect(unknown.err).toContain('BRAND_ID: no brand no-such');
    const taken = identityPayments('cli-partner');
    const clash = accountCli(
      [
        'set',
        'nova-bet',
        'identity-payments',
        '--base-url',
        taken.settings.baseUrl,
        '--auth-url',
        taken.settings.authUrl,
        '--client-id',
        taken.settings.clientId,
        '--merchant',
        taken.settings.merchant,
        '--partner-id',
        'cli-partner',
        '--client-secret-file',
        secretFile(taken.secrets.clientSecret),
        '--api-key-file',
        secretFile(taken.secrets.apiKey),
        '--webhook-secret-stdin',
        '--as',
        ANA,
      ],
      { input: taken.secrets.webhookSecret },
    );
    expect(clash.status).toBe(1);
    expect(clash.err).toContain("--partner-id: another brand's identity-payments account has it already");
  });

  it("takes an API Pix account's webhook client CA file, an api-pix setting alone", async () => {
    await createBrand(pool, ana, { id: 'ceu-bet', name: 'Céu Bet' });
    const pix = apiPix(`ceu-${fresh()}@bet.example`);
    const options = (caFile: string) => [
      'set',
      'ceu-bet',
      'api-pix',
      '--base-url',
      pix.settings.baseUrl,
      '--client-id',
      pix.settings.clientId,
      '--pix-key',
      pix.settings.pixKey,
      '--cert-file',
      pix.settings.certFile,
      '--key-file',
      pix.settings.keyFile,
      '--webhook-client-ca-file',
      caFile,
      '--client-secret-file',
      secretFile(pix.secrets.clientSecret),
      '--as',
      ANA,
    ];
    const empty = accountCli(options(''));
    expect(empty.status).toBe(2);
    expect(empty.err).toMatch(/^--webhook-client-ca-file: .*\n/m);
    expect(await getBrandAccount(pool, 'ceu-bet', 'api-pix')).toBeUndefined();
    const foreign = accountCli([
      'set',
      'sol-bet',
      'identity-payments',
      '--webhook-client-ca-file',
      'ca.pem',
      '--as',
      ANA,
    ]);
    expect(foreign.status).toBe(2);
    expect(foreign.err).toContain(
      '--webhook-client-ca-file: is not a setting of an identity-payments account; nothing changed',
    );
    const r = accountCli(options('/run/secrets/ceu-psp-ca.pem'));
    expect(r.status, r.err).toBe(0);
    expect(r.out).toContain('  webhook client CA file: /run/secrets/ceu-psp-ca.pem');
    expect((await getBrandAccount(pool, 'ceu-bet', 'api-pix'))?.settings).toMatchObject({
      webhookClientCaFile: '/run/secrets/ceu-psp-ca.pem',
    });
    const [audit] = await listActions(pool, { action: 'brand.account.set', order: 'newest', limit: 1 });
    expect(audit?.after).toMatchObject({ settings: { webhookClientCaFile: '/run/secrets/ceu-psp-ca.pem' } });
  });

  it('removes an account as an admin, and exits 1 when there is none', async () => {
    const r = accountCli(['remove', 'sol-bet', 'identity-payments', '--as', ANA]);
    expect(r.status, r.err).toBe(0);
    expect(r.out).toContain("removed brand sol-bet's identity-payments account");
    expect(await getBrandAccount(pool, 'sol-bet', 'identity-payments')).toBeUndefined();
    const again = accountCli(['remove', 'sol-bet', 'identity-payments', '--as', ANA]);
    expect(again.status).toBe(1);
    expect(again.err).toContain('CONNECTOR: brand sol-bet has no identity-payments account; nothing changed');
  });
});
