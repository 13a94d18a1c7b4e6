import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogs } from '../../backoffice/i18n';
import { envSchema, loadConfig } from '../../common/config';
import { hashPassword } from '../../common/passwords';
import { openSecret } from '../../common/secret-box';
import { accountKeysOf, secretHash } from '../../connectors/accounts';
import { createBrand } from '../../db/brands';
import { listActions } from '../../db/operator-actions';
import { saveOperator } from '../../db/operators';
import { type ApiEnv, PII_KEY, startApiEnv } from '../api/support';
import { drawnAtBothWidths } from '../helpers/backoffice-pages';
import { sessionCookie, tokenIn } from '../helpers/backoffice-sign-in';
import { launchChromium } from '../helpers/browser';

// The brands page and a brand's page over real HTTP (session cookie, form tokens) against the real
// API and Postgres: an admin creates and changes brands and sets and removes their connector
// accounts, each audited as the operator CLI's; the secrets sealed as the CLI seals them and
// never shown, logged or audited; other roles refused; bad input named, with nothing written.

const ROOT = path.resolve(__dirname, '../..');
const PASSWORD = 'brands page password';
const t = catalogs['pt-BR'];
const en = catalogs.en;
const admin = 'bea.admin@example.com';
const approver = 'ali.approver@example.com';
const viewer = 'vic.viewer@example.com';

/** Every line the API logged, at every level. */
const logLines: string[] = [];
const log = pino(
  { level: 'trace' },
  new Writable({
    write(chunk, _enc, done) {
      logLines.push(String(chunk));
      done();
    },
  }),
);

/** Every secret a test typed, to look for where none may be. */
const typedSecrets: string[] = [];
const secret = (what: string) => {
  const s = `${what}-${randomBytes(12).toString('hex')}`;
  typedSecrets.push(s);
  return s;
};

let e: ApiEnv;
let dir: string;
beforeAll(async () => {
  e = await startApiEnv({}, { log });
  dir = mkdtempSync(path.join(os.tmpdir(), 'brands-page-'));
  const passwordHash = await hashPassword(PASSWORD);
  await saveOperator(e.pool, { email: admin, name: 'Bea', role: 'admin', passwordHash });
  await saveOperator(e.pool, { email: approver, name: 'Ali', role: 'approver', passwordHash });
  await saveOperator(e.pool, { email: viewer, name: 'Vic', role: 'viewer', passwordHash, language: 'en' });
}, 120_000);
afterAll(async () => {
  await e?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Session {
  get(path: string): Promise<{ status: number; html: string }>;
  post(
    path: string,
    form: Record<string, string>,
  ): Promise<{ status: number; html: string; location: string }>;
}

async function signIn(email: string): Promise<Session> {
  const cookie = await sessionCookie(e.url, email, PASSWORD);
  const s: Session = {
    async get(path) {
      const r = await fetch(`${e.url}${path}`, { headers: { cookie }, redirect: 'manual' });
      return { status: r.status, html: await r.text() };
    },
    async post(path, fields) {
      // Any page gives the session's form token, the error page too.
      const token = tokenIn((await s.get('/backoffice/search')).html);
      const r = await fetch(`${e.url}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...fields, _csrf: token }),
      });
      return { status: r.status, html: await r.text(), location: r.headers.get('location') ?? '' };
    },
  };
  return s;
}

const count = async (sql: string) => (await e.pool.query(sql)).rows[0].n as number;
const brandCount = () => count('SELECT count(*)::int AS n FROM brands');
const accountCount = () => count('SELECT count(*)::int AS n FROM brand_connector_accounts');
const auditCount = () => count('SELECT count(*)::int AS n FROM operator_actions');
const brandActions = async (brandId: string) =>
  (await listActions(e.pool, { caseIds: [brandId], order: 'oldest', limit: 50 })).filter((a) =>
    a.action.startsWith('brand.'),
  );

/** An identity-payments account's form, with fresh secrets. */
const identityPaymentsForm = (partnerId: string) => ({
  baseUrl: 'https://api.provider.example',
  authUrl: 'https://auth.provider.example',
  clientId: `${partnerId}-client`,
  merchant: `${partnerId}-merchant`,
  partnerId,
  clientSecret: secret('client-secret'),
  apiKey: secret('api-key'),
  webhookSecret: secret('webhook-secret'),
});

const refusal = (html: string, field: string, label: string, reason: string) =>
  expect(html).toContain(`data-field="${field}"><strong>${label}</strong>: ${reason}`);

/** The keys the API seals and hashes with, and the CLI as a process given the same. */
const keys = accountKeysOf(loadConfig({ PII_HASH_KEY: PII_KEY }));
function cli(args: string[]) {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'scripts/operator.ts'), ...args],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: e.databaseUrl,
        CODEC_KEYS: envSchema.shape.CODEC_KEYS.parse(undefined),
        CODEC_ACTIVE_KEY_ID: envSchema.shape.CODEC_ACTIVE_KEY_ID.parse(undefined),
        PII_HASH_KEY: PII_KEY,
      },
      encoding: 'utf8',
    },
  );
  return { status: r.status, out: r.stdout, err: r.stderr };
}
const secretFile = (value: string) => {
  const file = path.join(dir, `secret-${randomBytes(4).toString('hex')}`);
  writeFileSync(file, value, { mode: 0o600 });
  return file;
};

describe('brands in the back office', () => {
  it('an admin creates a brand and changes it, each audited as the CLI audits it; a change that changes nothing writes nothing', async () => {
    const s = await signIn(admin);
    const list = await s.get('/backoffice/brands');
    expect(list.status).toBe(200);
    expect(list.html).toContain('data-menu="brands"');
    expect(list.html).toMatch(/data-brand-id="default"/);

    const created = await s.post('/backoffice/brands', {
      id: 'bet-rio',
      name: 'Bet Rio',
      legalName: '',
      cnpj: '11.222.333/0001-81',
      authorization: '',
    });
    expect(created.status).toBe(303);
    expect(created.location).toBe('/backoffice/brands/bet-rio');
    const shown = await s.get('/backoffice/brands/bet-rio');
    expect(shown.html).toContain(t.brands.created('bet-rio'));
    expect(shown.html).toContain('value="11.222.333/0001-81"');
    expect(shown.html).toContain(t.brands.accountNone);
    const stored = await e.pool.query(
      'SELECT name, legal_name, cnpj, "authorization" FROM brands WHERE id = $1',
      ['bet-rio'],
    );
    expect(stored.rows).toEqual([
      { name: 'Bet Rio', legal_name: null, cnpj: '11222333000181', authorization: null },
    ]);

    const updated = await s.post('/backoffice/brands/bet-rio', {
      name: 'Bet Rio',
      legalName: 'Rio Apostas Ltda.',
      cnpj: '11.222.333/0001-81',
      authorization: 'Portaria SPA/MF nº 1.234/2024',
    });
    expect(updated.status).toBe(303);
    expect((await s.get('/backoffice/brands/bet-rio')).html).toContain(t.brands.updated('bet-rio'));
    const before = await auditCount();
    const again = await s.post('/backoffice/brands/bet-rio', {
      name: 'Bet Rio',
      legalName: 'Rio Apostas Ltda.',
      cnpj: '11222333000181',
      authorization: 'Portaria SPA/MF nº 1.234/2024',
    });
    expect(again.status).toBe(303);
    expect((await s.get('/backoffice/brands/bet-rio')).html).toContain(t.brands.unchanged('bet-rio'));
    expect(await auditCount()).toBe(before);

    const audit = await brandActions('bet-rio');
    expect(audit.map((a) => [a.action, a.outcome, a.operatorEmail, a.operatorRole, a.caseType])).toEqual([
      ['brand.create', 'done', admin, 'admin', 'brand'],
      ['brand.update', 'done', admin, 'admin', 'brand'],
    ]);
    expect(audit[0]?.after).toEqual({
      id: 'bet-rio',
      name: 'Bet Rio',
      legalName: null,
      cnpj: '11222333000181',
      authorization: null,
    });
    expect(audit[1]?.before).toMatchObject({ legalName: null, authorization: null });
    expect(audit[1]?.after).toMatchObject({
      legalName: 'Rio Apostas Ltda.',
      authorization: 'Portaria SPA/MF nº 1.234/2024',
    });
    // The list shows it with the operator's fields, the CNPJ as the Receita prints it.
    const listed = (await s.get('/backoffice/brands')).html;
    expect(listed).toContain('Rio Apostas Ltda.');
    expect(listed).toContain('11.222.333/0001-81');
    // An id already taken is named, and nothing is made.
    const taken = await s.post('/backoffice/brands', { id: 'bet-rio', name: 'Other' });
    expect(taken.status).toBe(409);
    refusal(taken.html, 'id', t.brands.fields.id ?? '', t.brands.idTaken);
    expect((await brandActions('bet-rio')).length).toBe(2);
  });

  it('bad input re-renders the form naming each field, keeps what was typed, and writes nothing', async () => {
    const s = await signIn(admin);
    const [brands, audits] = [await brandCount(), await auditCount()];
    const bad = await s.post('/backoffice/brands', {
      id: 'Bet Sul',
      name: '',
      cnpj: '11.222.333/0001-82',
      authorization: 'x'.repeat(201),
    });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain(`<h2 id="new-brand-h">${t.brands.new}</h2>`);
    refusal(bad.html, 'id', t.brands.fields.id ?? '', t.brands.problems.id);
    refusal(bad.html, 'name', t.brands.fields.name ?? '', t.brands.problems.required);
    refusal(bad.html, 'cnpj', t.brands.fields.cnpj ?? '', t.brands.problems.cnpj);
    expect(bad.html).toContain(
      `data-field="authorization"><strong>${t.brands.fields.authorization}</strong>:`,
    );
    expect(bad.html).toContain('value="Bet Sul"');
    const update = await s.post('/backoffice/brands/default', { name: '', cnpj: '00000000000000' });
    expect(update.status).toBe(400);
    refusal(update.html, 'name', t.brands.fields.name ?? '', t.brands.problems.required);
    refusal(update.html, 'cnpj', t.brands.fields.cnpj ?? '', t.brands.problems.cnpj);
    expect(await brandCount()).toBe(brands);
    expect(await auditCount()).toBe(audits);
    expect((await e.pool.query("SELECT cnpj FROM brands WHERE id = 'default'")).rows).toEqual([
      { cnpj: null },
    ]);
    // A brand that does not exist, or an id no brand can have, is the page of none.
    expect((await s.get('/backoffice/brands/bet-nowhere')).status).toBe(404);
    expect((await s.post('/backoffice/brands/Not%20an%20id', { name: 'X' })).status).toBe(404);
  });

  it("an admin sets a brand's account, sealed as the CLI seals it, shown without its secrets, replaced and removed, each audited without a secret", async () => {
    const s = await signIn(admin);
    await createBrand(
      e.pool,
      { operatorId: null, operatorEmail: admin, operatorRole: 'admin' },
      { id: 'sol-bet', name: 'Sol Bet' },
    );
    const form = identityPaymentsForm('sol-bet');
    const set = await s.post('/backoffice/brands/sol-bet/accounts/identity-payments', form);
    expect(set.status).toBe(303);
    expect(set.location).toBe('/backoffice/brands/sol-bet');
    const name = t.brands.connector['identity-payments'] ?? '';
    const page = (await s.get('/backoffice/brands/sol-bet')).html;
    expect(page).toContain(t.brands.accountSet(name));
    expect(page).toContain('<tr data-setting="partnerId">');
    expect(page).toContain('sol-bet-merchant');
    for (const secretName of ['clientSecret', 'apiKey', 'webhookSecret'])
      expect(page).toContain(`data-secret="${secretName}" data-set="true"`);
    for (const v of [form.clientSecret, form.apiKey, form.webhookSecret]) expect(page).not.toContain(v);

    // At rest: sealed with the codec's key, a keyed hash beside each, no column in the clear.
    const raw = await e.pool.query(
      "SELECT settings, secrets_sealed, secret_hashes, row_to_json(a)::text AS whole FROM brand_connector_accounts a WHERE brand_id = 'sol-bet'",
    );
    const row = raw.rows[0];
    for (const v of [form.clientSecret, form.apiKey, form.webhookSecret]) expect(row.whole).not.toContain(v);
    expect(JSON.parse(openSecret(keys.codecKeys, row.secrets_sealed))).toEqual({
      clientSecret: form.clientSecret,
      apiKey: form.apiKey,
      webhookSecret: form.webhookSecret,
    });
    expect(row.secret_hashes.webhookSecret).toBe(
      secretHash(keys.hashKey, 'identity-payments', 'webhookSecret', form.webhookSecret),
    );
    // The CLI, given the same account, finds it already so: the same settings and the same hashes.
    const same = cli([
      'brand',
      'account',
      'set',
      'sol-bet',
      'identity-payments',
      ...['--base-url', form.baseUrl, '--auth-url', form.authUrl, '--client-id', form.clientId],
      ...['--merchant', form.merchant, '--partner-id', form.partnerId],
      ...['--client-secret-file', secretFile(form.clientSecret), '--api-key-file', secretFile(form.apiKey)],
      ...['--webhook-secret-file', secretFile(form.webhookSecret), '--as', admin],
    ]);
    expect(same.err).toBe('');
    expect(same.out).toContain('already reads so: nothing changed');

    // Replaced whole: a new client secret, the others typed again.
    const next = { ...form, merchant: 'sol-bet-merchant-2', clientSecret: secret('client-secret') };
    expect((await s.post('/backoffice/brands/sol-bet/accounts/identity-payments', next)).status).toBe(303);
    expect((await s.get('/backoffice/brands/sol-bet')).html).toContain(t.brands.accountReplaced(name));
    const removed = await s.post('/backoffice/brands/sol-bet/accounts/identity-payments/remove', {});
    expect(removed.status).toBe(303);
    expect((await s.get('/backoffice/brands/sol-bet')).html).toContain(t.brands.accountRemoved(name));
    expect(
      await e.pool.query("SELECT 1 FROM brand_connector_accounts WHERE brand_id = 'sol-bet'"),
    ).toMatchObject({
      rowCount: 0,
    });
    const again = await s.post('/backoffice/brands/sol-bet/accounts/identity-payments/remove', {});
    expect(again.status).toBe(409);
    expect(again.html).toContain(t.brands.noAccountText(name));

    const audit = await brandActions('sol-bet');
    expect(audit.map((a) => [a.action, a.outcome, a.operatorEmail])).toEqual([
      ['brand.create', 'done', admin],
      ['brand.account.set', 'done', admin],
      ['brand.account.set', 'done', admin],
      ['brand.account.remove', 'done', admin],
    ]);
    expect(audit[1]?.after).toEqual({
      connector: 'identity-payments',
      settings: {
        baseUrl: form.baseUrl,
        authUrl: form.authUrl,
        clientId: form.clientId,
        merchant: form.merchant,
        partnerId: form.partnerId,
      },
      secrets: { clientSecret: 'set', apiKey: 'set', webhookSecret: 'set' },
    });
    expect(audit[2]?.after).toMatchObject({
      settings: { merchant: 'sol-bet-merchant-2' },
      secrets: { clientSecret: 'changed', apiKey: 'unchanged', webhookSecret: 'unchanged' },
    });
    expect(audit[3]?.before).toMatchObject({
      connector: 'identity-payments',
      secrets: { clientSecret: 'set' },
    });
    const everyAudit = JSON.stringify(await listActions(e.pool, { order: 'oldest', limit: 500 }));
    for (const v of typedSecrets) expect(everyAudit).not.toContain(v);
  });

  it("another brand's partner id, webhook secret or Pix key is refused naming the field, with nothing written", async () => {
    const s = await signIn(admin);
    const actor = { operatorId: null, operatorEmail: admin, operatorRole: 'admin' };
    await createBrand(e.pool, actor, { id: 'lua-bet', name: 'Lua Bet' });
    await createBrand(e.pool, actor, { id: 'mar-bet', name: 'Mar Bet' });
    const lua = identityPaymentsForm('lua-bet');
    expect((await s.post('/backoffice/brands/lua-bet/accounts/identity-payments', lua)).status).toBe(303);
    const pix = {
      baseUrl: 'https://psp.lua.example',
      clientId: 'lua',
      pixKey: 'pix@lua.example',
      certFile: '/run/secrets/lua.crt',
      keyFile: '/run/secrets/lua.key',
      clientSecret: secret('pix-client'),
    };
    expect((await s.post('/backoffice/brands/lua-bet/accounts/api-pix', pix)).status).toBe(303);
    const [accounts, audits] = [await accountCount(), await auditCount()];

    const samePartner = await s.post('/backoffice/brands/mar-bet/accounts/identity-payments', {
      ...identityPaymentsForm('mar-bet'),
      partnerId: 'lua-bet',
    });
    expect(samePartner.status).toBe(409);
    refusal(samePartner.html, 'partnerId', t.brands.fields.partnerId ?? '', t.brands.problems.clash);
    const sameSecret = await s.post('/backoffice/brands/mar-bet/accounts/identity-payments', {
      ...identityPaymentsForm('mar-bet'),
      webhookSecret: lua.webhookSecret,
    });
    expect(sameSecret.status).toBe(409);
    refusal(sameSecret.html, 'webhookSecret', t.brands.fields.webhookSecret ?? '', t.brands.problems.clash);
    expect(sameSecret.html).not.toContain(lua.webhookSecret);
    const sameKey = await s.post('/backoffice/brands/mar-bet/accounts/api-pix', {
      ...pix,
      clientId: 'mar',
      clientSecret: secret('pix-client'),
    });
    expect(sameKey.status).toBe(409);
    refusal(sameKey.html, 'pixKey', t.brands.fields.pixKey ?? '', t.brands.problems.clash);
    // The form is shown again with what was typed, but no secret.
    expect(sameKey.html).toContain('value="pix@lua.example"');

    // The environment's webhook values are the default brand's: no other brand takes them.
    const envSecret = decodeURIComponent(e.ingress.split('/').at(-1) ?? '');
    const envPartner = await s.post('/backoffice/brands/mar-bet/accounts/identity-payments', {
      ...identityPaymentsForm('mar-bet'),
      partnerId: e.partnerId,
    });
    expect(envPartner.status).toBe(409);
    refusal(envPartner.html, 'partnerId', t.brands.fields.partnerId ?? '', t.brands.problems.environments);
    const envWebhook = await s.post('/backoffice/brands/mar-bet/accounts/identity-payments', {
      ...identityPaymentsForm('mar-bet'),
      webhookSecret: envSecret,
    });
    expect(envWebhook.status).toBe(409);
    refusal(
      envWebhook.html,
      'webhookSecret',
      t.brands.fields.webhookSecret ?? '',
      t.brands.problems.environments,
    );
    expect(envWebhook.html).not.toContain(envSecret);
    expect(await accountCount()).toBe(accounts);
    expect(await auditCount()).toBe(audits);
    // The default brand may: they are its own.
    const own = await s.post('/backoffice/brands/default/accounts/identity-payments', {
      ...identityPaymentsForm('default-own'),
      partnerId: e.partnerId,
      webhookSecret: envSecret,
    });
    expect(own.status).toBe(303);
    expect((await s.post('/backoffice/brands/default/accounts/identity-payments/remove', {})).status).toBe(
      303,
    );
    expect((await s.get('/backoffice/brands/default')).html).toContain(t.brands.accountFromEnvironment);
  });

  it("an account's bad input is named by the CLI's rules, no secret echoed, nothing written", async () => {
    const s = await signIn(admin);
    const [accounts, audits] = [await accountCount(), await auditCount()];
    const short = secret('w').slice(0, 9);
    typedSecrets.push(short);
    const bad = await s.post('/backoffice/brands/bet-rio/accounts/identity-payments', {
      ...identityPaymentsForm('bet-rio'),
      baseUrl: 'ftp://provider.example',
      clientSecret: '',
      webhookSecret: short,
    });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('data-refused="account:identity-payments"');
    expect(bad.html).toContain(`data-field="baseUrl"><strong>${t.brands.fields.baseUrl}</strong>:`);
    refusal(bad.html, 'clientSecret', t.brands.fields.clientSecret ?? '', t.brands.problems.required);
    expect(bad.html).toContain(
      `data-field="webhookSecret"><strong>${t.brands.fields.webhookSecret}</strong>:`,
    );
    expect(bad.html).toContain('value="ftp://provider.example"');
    expect(bad.html).not.toContain(short);
    const pix = await s.post('/backoffice/brands/bet-rio/accounts/api-pix', {
      baseUrl: 'http://psp.example',
      clientId: 'rio',
      pixKey: 'pix@rio.example',
      certFile: '/c.pem',
      keyFile: '/k.pem',
      webhookOrigin: 'https://hooks.rio.example:8443/webhooks',
      clientSecret: secret('pix-client'),
      partnerId: 'not-of-api-pix',
    });
    expect(pix.status).toBe(400);
    refusal(
      pix.html,
      'partnerId',
      t.brands.fields.partnerId ?? '',
      t.brands.problems.notOfConnector(t.brands.connector['api-pix'] ?? ''),
    );
    const pixAgain = await s.post('/backoffice/brands/bet-rio/accounts/api-pix', {
      baseUrl: 'http://psp.example',
      clientId: 'rio',
      pixKey: 'pix@rio.example',
      certFile: '/c.pem',
      keyFile: '/k.pem',
      webhookOrigin: 'https://hooks.rio.example:8443/webhooks',
      clientSecret: secret('pix-client'),
    });
    expect(pixAgain.status).toBe(400);
    expect(pixAgain.html).toContain(`data-field="baseUrl"><strong>${t.brands.fields.baseUrl}</strong>:`);
    refusal(
      pixAgain.html,
      'webhookOrigin',
      t.brands.fields.webhookOrigin ?? '',
      t.brands.problems.webhookOrigin,
    );
    refusal(
      pixAgain.html,
      'webhookSecret',
      t.brands.fields.webhookSecret ?? '',
      t.brands.problems.webhookSecretNeeded,
    );
    expect(await accountCount()).toBe(accounts);
    expect(await auditCount()).toBe(audits);
  });

  it('an approver and a viewer are refused the pages and every change, each change attempt audited, nothing changed', async () => {
    for (const email of [approver, viewer]) {
      const o = await signIn(email);
      const words = email === viewer ? en : t;
      const home = await o.get('/backoffice/search');
      expect(home.html).not.toContain('data-menu="brands"');
      const list = await o.get('/backoffice/brands');
      expect(list.status).toBe(403);
      expect(list.html).toContain(words.errors.notAllowed);
      expect((await o.get('/backoffice/brands/bet-rio')).status).toBe(403);
      const [brands, accounts] = [await brandCount(), await accountCount()];
      const attempts = [
        await o.post('/backoffice/brands', { id: 'bet-x', name: 'X' }),
        await o.post('/backoffice/brands/bet-rio', { name: 'Taken over' }),
        await o.post('/backoffice/brands/bet-rio/accounts/identity-payments', identityPaymentsForm('bet-x')),
        await o.post('/backoffice/brands/lua-bet/accounts/api-pix/remove', {}),
      ];
      expect(attempts.map((a) => a.status)).toEqual([403, 403, 403, 403]);
      expect(await brandCount()).toBe(brands);
      expect(await accountCount()).toBe(accounts);
      const refused = (await listActions(e.pool, { order: 'newest', limit: 100 })).filter(
        (a) => a.operatorEmail === email && a.outcome === 'refused',
      );
      expect(refused.map((a) => [a.action, a.caseType, a.caseId ?? null]).sort()).toEqual(
        [
          ['brand.account.remove', 'brand', 'lua-bet'],
          ['brand.account.set', 'brand', 'bet-rio'],
          ['brand.create', 'brand', null],
          ['brand.update', 'brand', 'bet-rio'],
        ].sort(),
      );
    }
    expect((await e.pool.query("SELECT name FROM brands WHERE id = 'bet-rio'")).rows).toEqual([
      { name: 'Bet Rio' },
    ]);
  });

  it('in a browser, in Portuguese: an admin creates a brand and sets its account with the forms, every control labelled, the pages narrow enough for a phone', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, locale: 'pt-BR' });
      const problems: string[] = [];
      page.on('pageerror', (err) => problems.push(String(err)));
      await page.goto(`${e.url}/backoffice/brands`);
      await page.getByLabel(t.signIn.email).fill(admin);
      await page.getByLabel(t.signIn.password).fill(PASSWORD);
      await page.getByRole('button', { name: t.signIn.submit }).click();
      await page.getByRole('heading', { name: t.brands.title, level: 1 }).waitFor();
      expect(await page.evaluate('document.documentElement.lang')).toBe('pt-BR');
      await page.getByLabel(t.brands.id, { exact: true }).fill('bet-sp');
      await page.getByLabel(t.brands.name, { exact: true }).fill('Bet SP');
      await page.getByLabel(`${t.brands.cnpj} ${t.brands.optional}`).fill('12.ABC.345/01DE-35');
      await page.getByRole('button', { name: t.brands.create }).click();
      await page.getByRole('heading', { name: /Bet SP/, level: 1 }).waitFor();
      expect(await page.getByRole('status').textContent()).toBe(t.brands.created('bet-sp'));

      const name = t.brands.connector['identity-payments'] ?? '';
      const account = page.locator('section[data-connector="identity-payments"]');
      await account.getByText(t.brands.setAccount(name)).click();
      const form = identityPaymentsForm('bet-sp');
      for (const field of ['baseUrl', 'authUrl', 'clientId', 'merchant', 'partnerId'] as const)
        await account.getByLabel(t.brands.fields[field] ?? '', { exact: true }).fill(form[field]);
      for (const field of ['clientSecret', 'apiKey', 'webhookSecret'] as const) {
        const box = account.getByLabel(t.brands.fields[field] ?? '', { exact: true });
        expect(await box.getAttribute('type')).toBe('password');
        await box.fill(form[field]);
      }
      await account.getByRole('button', { name: t.brands.set }).click();
      await page.getByRole('status').waitFor();
      expect(await page.getByRole('status').textContent()).toBe(t.brands.accountSet(name));
      const content = await page.content();
      for (const v of [form.clientSecret, form.apiKey, form.webhookSecret]) expect(content).not.toContain(v);
      expect(await page.locator('[data-secret="apiKey"] td').textContent()).toBe(t.brands.secretSet);
      const unlabelled = await page.evaluate(
        `[...document.querySelectorAll('input:not([type=hidden]), textarea, select')].filter((el) => !el.labels || el.labels.length === 0).length`,
      );
      expect(unlabelled).toBe(0);
      // Every form open, so each control is drawn and measured.
      await page.evaluate(`document.querySelectorAll('details').forEach((d) => { d.open = true; })`);
      await drawnAtBothWidths(page, 'brand');
      await page.goto(`${e.url}/backoffice/brands`);
      await drawnAtBothWidths(page, 'brands');
      // The operators page, from the menu, its brand grants.
      await page.locator('header nav a[data-menu="operators"]').click();
      await page.getByRole('heading', { name: t.grants.title, level: 1 }).waitFor();
      await drawnAtBothWidths(page, 'operators');
      // The new brand's rules on the policy page, one field its own, set with the page's form.
      await page.goto(`${e.url}/backoffice/policy?brand=bet-sp`);
      await page.getByLabel('payouts.approvalAboveCentavos', { exact: true }).fill('300000');
      await page.getByLabel(t.brandPolicy.setReasonLabel).fill('Bet SP reviews large prizes sooner');
      await page.getByRole('button', { name: t.brandPolicy.send }).click();
      await page
        .getByRole('status')
        .filter({ hasText: t.brandPolicy.applied('bet-sp', 1) })
        .waitFor();
      await drawnAtBothWidths(page, 'policy-brand');
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);

  it('no log line holds a secret typed on these pages', () => {
    expect(typedSecrets.length).toBeGreaterThan(10);
    expect(logLines.length).toBeGreaterThan(0);
    const logged = logLines.join('\n');
    for (const v of typedSecrets) expect(logged).not.toContain(v);
  });
});
