import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogs } from '../../backoffice/i18n';
import { hashPassword } from '../../common/passwords';
import { createBrand } from '../../db/brands';
import { listActions } from '../../db/operator-actions';
import { saveOperator } from '../../db/operators';
import { type ApiEnv, eventually, expectProblem, startApiEnv } from '../api/support';
import { drawnAtBothWidths } from '../helpers/backoffice-pages';
import { sessionCookie, tokenIn } from '../helpers/backoffice-sign-in';
import { launchChromium } from '../helpers/browser';

// The back office's API keys page over real HTTP (its session cookie, its form tokens) against
// the real API: an admin makes and revokes keys that /v1 then accepts and refuses, every step in
// the audit trail; other roles see the keys and change nothing. Each key is made for a brand, or
// for the platform.

const PASSWORD = 'api keys page password';
const t = catalogs['pt-BR'];
const admin = 'kim.admin@example.com';
const viewer = 'val.viewer@example.com';
const reviewer = 'rui.reviewer@example.com';
const CACHE_MS = 5_000;

let e: ApiEnv;
beforeAll(async () => {
  e = await startApiEnv();
  const passwordHash = await hashPassword(PASSWORD);
  await saveOperator(e.pool, { email: admin, name: 'Kim', role: 'admin', passwordHash });
  await saveOperator(e.pool, { email: viewer, name: 'Val', role: 'viewer', passwordHash });
  await saveOperator(e.pool, { email: reviewer, name: 'Rui', role: 'reviewer', passwordHash });
  await createBrand(
    e.pool,
    { operatorId: null, operatorEmail: admin, operatorRole: 'admin' },
    { id: 'bet-rio', name: 'Bet Rio' },
  );
}, 120_000);
afterAll(() => e?.close());

interface Session {
  cookie: string;
  get(path: string): Promise<{ status: number; html: string; res: Response }>;
  post(path: string, form: Record<string, string>, withToken?: boolean): Promise<Response>;
}

async function signIn(email: string): Promise<Session> {
  const cookie = await sessionCookie(e.url, email, PASSWORD);
  const s: Session = {
    cookie,
    async get(path) {
      const r = await fetch(`${e.url}${path}`, { headers: { cookie }, redirect: 'manual' });
      return { status: r.status, html: await r.text(), res: r };
    },
    async post(path, fields, withToken = true) {
      const token = withToken ? tokenIn((await s.get('/backoffice/api-keys')).html) : '';
      return fetch(`${e.url}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...fields, ...(withToken ? { _csrf: token } : {}) }),
      });
    },
  };
  return s;
}

const secretIn = (html: string) => /id="new-secret" readonly value="(pxk_[^"]+)"/.exec(html)?.[1];
const idIn = (html: string) => /(ak_[0-9a-f]{16})/.exec(html)?.[1] ?? '';
const countKeys = async () =>
  (await e.pool.query('SELECT count(*)::int AS n FROM api_keys')).rows[0].n as number;

const noScopes = {
  scope_onboardings: '',
  scope_deposits: '',
  scope_withdrawals: '',
  scope_customers: '',
  scope_webhooks: '',
};

/** GET /v1/events with this key, naming a brand in Pixflow-Brand or none. */
const eventsAs = (key: string, brand?: string) =>
  fetch(`${e.url}/v1/events`, {
    headers: { authorization: `Bearer ${key}`, ...(brand ? { 'pixflow-brand': brand } : {}) },
  });

describe('API keys in the back office', () => {
  it('an admin creates a key, sees its secret once, and revokes it; the API follows without a restart; both are audited', async () => {
    const s = await signIn(admin);
    const listPage = await s.get('/backoffice/api-keys');
    expect(listPage.status).toBe(200);
    expect(listPage.html).toContain(t.keys.new);

    const created = await s.post('/backoffice/api-keys', {
      name: 'Reporting',
      ...noScopes,
      scope_events: 'read',
      expires: '90d',
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const html = await created.text();
    const secret = secretIn(html);
    const id = idIn(html);
    expect(secret).toBeDefined();
    expect((await e.call('GET', '/v1/events', { key: secret })).status).toBe(200);
    await expectProblem(await e.call('GET', '/v1/flows', { key: secret }), 403, 'insufficient-scope');

    // The list shows it, by its prefix, never its secret.
    const listed = (await s.get('/backoffice/api-keys')).html;
    expect(listed).toContain('Reporting');
    expect(listed).toContain(`${String(secret).slice(0, 12)}…`);
    expect(listed).not.toContain(String(secret));
    expect(listed).toContain('events:read');

    const revoked = await s.post(`/backoffice/api-keys/${id}/revoke`, {});
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get('location')).toBe('/backoffice/api-keys');
    await eventually(
      () => e.call('GET', '/v1/events', { key: secret }),
      (r) => r.status === 401,
      { timeoutMs: CACHE_MS + 3_000, intervalMs: 200 },
    );
    expect((await s.get('/backoffice/api-keys')).html).toMatch(/data-status="revoked"/);

    const audit = await listActions(e.pool, { caseIds: [id], order: 'oldest', limit: 10 });
    expect(audit.map((a) => [a.action, a.outcome, a.operatorEmail, a.caseType])).toEqual([
      ['api_key.create', 'done', admin, 'api_key'],
      ['api_key.revoke', 'done', admin, 'api_key'],
    ]);
    expect(audit[0]?.after).toMatchObject({ name: 'Reporting', scopes: ['events:read'], status: 'active' });
    expect(audit[1]?.after).toMatchObject({ status: 'revoked' });
    expect(JSON.stringify(audit)).not.toContain(String(secret));
    expect((await s.get('/backoffice/audit')).html).toContain('api_key.revoke');
  });

  it('an admin rotates a key: the same key with a new secret, the old one refused', async () => {
    const s = await signIn(admin);
    const created = await (
      await s.post('/backoffice/api-keys', {
        name: 'Rotating',
        ...noScopes,
        scope_events: 'write',
        expires: '',
      })
    ).text();
    const [id, first] = [idIn(created), secretIn(created)];
    expect((await e.call('GET', '/v1/events', { key: first })).status).toBe(200);
    const rotated = await s.post(`/backoffice/api-keys/${id}/rotate`, { overlap: '' });
    expect(rotated.status).toBe(200);
    const html = await rotated.text();
    expect(idIn(html)).toBe(id);
    const second = secretIn(html);
    expect(second).not.toBe(first);
    expect((await e.call('GET', '/v1/events', { key: second })).status).toBe(200);
    await eventually(
      () => e.call('GET', '/v1/events', { key: first }),
      (r) => r.status === 401,
      { timeoutMs: CACHE_MS + 3_000, intervalMs: 200 },
    );
  });

  it('a viewer and a reviewer see the keys but cannot create, rotate or revoke one; each attempt is refused and audited', async () => {
    const s = await signIn(admin);
    const target = idIn(
      await (
        await s.post('/backoffice/api-keys', { name: 'Kept', ...noScopes, scope_events: 'read' })
      ).text(),
    );
    for (const email of [viewer, reviewer]) {
      const o = await signIn(email);
      const listPage = await o.get('/backoffice/api-keys');
      expect(listPage.status).toBe(200);
      expect(listPage.html).toContain('Kept');
      expect(listPage.html).not.toContain(t.keys.new);
      expect(listPage.html).not.toContain('/revoke"');
      const before = await countKeys();
      const create = await o.post('/backoffice/api-keys', {
        name: 'Sneaky',
        ...noScopes,
        scope_events: 'write',
      });
      expect(create.status).toBe(403);
      expect(await create.text()).not.toContain('pxk_');
      expect((await o.post(`/backoffice/api-keys/${target}/revoke`, {})).status).toBe(403);
      expect((await o.post(`/backoffice/api-keys/${target}/rotate`, { overlap: '' })).status).toBe(403);
      expect(await countKeys()).toBe(before);
      const refused = (await listActions(e.pool, { order: 'newest', limit: 50 })).filter(
        (a) => a.operatorEmail === email && a.outcome === 'refused',
      );
      expect(refused.map((a) => a.action).sort()).toEqual([
        'api_key.create',
        'api_key.revoke',
        'api_key.rotate',
      ]);
    }
    const still = await e.pool.query('SELECT revoked_at, rotated_at FROM api_keys WHERE id = $1', [target]);
    expect(still.rows[0]).toEqual({ revoked_at: null, rotated_at: null });
  });

  it('a post without the form token, or with a form that does not parse, changes nothing and names the field', async () => {
    const s = await signIn(admin);
    const before = await countKeys();
    const forged = await s.post(
      '/backoffice/api-keys',
      { name: 'No token', ...noScopes, scope_events: 'read' },
      false,
    );
    expect(forged.status).toBe(403);
    const empty = await s.post('/backoffice/api-keys', { name: 'No scopes', ...noScopes, scope_events: '' });
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain(
      `data-field="scopes"><strong>${t.fields.scopes}</strong>: ${t.formErrors.oneScope}`,
    );
    const unnamed = await s.post('/backoffice/api-keys', { name: '  ', ...noScopes, scope_events: 'admin' });
    expect(unnamed.status).toBe(400);
    const text = await unnamed.text();
    expect(text).toContain(`data-field="name"><strong>${t.fields.name}</strong>: ${t.formErrors.required}`);
    expect(text).toContain(
      `data-field="scope_events"><strong>${t.keys.scopes}: events</strong>: ${t.formErrors.scopeLevel}`,
    );
    expect(await countKeys()).toBe(before);
  });

  it("an admin makes a key for a brand or for the platform; the list shows each key's brand, the API holds each to it, the audit keeps it", async () => {
    const s = await signIn(admin);
    const form = (await s.get('/backoffice/api-keys')).html;
    // The default brand is chosen unless the admin picks another.
    expect(form).toMatch(/<option value="default" selected>pixflow \(default\)<\/option>/);
    expect(form).toContain('<option value="bet-rio">Bet Rio (bet-rio)</option>');
    expect(form).toContain(t.keys.platformChoice);

    const made = async (name: string, brand: string) => {
      const res = await s.post('/backoffice/api-keys', { name, ...noScopes, scope_events: 'read', brand });
      expect(res.status).toBe(201);
      const html = await res.text();
      return { id: idIn(html), secret: String(secretIn(html)), html };
    };
    const rio = await made('Bet Rio backend', 'bet-rio');
    const platform = await made('White-label platform', '*platform');
    // The secret's page tells a platform key's holder to name the brand; a brand key's needs not.
    expect(rio.html).not.toContain(t.keys.platformNote);
    expect(platform.html).toContain(t.keys.platformNote);
    const stored = await e.pool.query('SELECT id, brand_id FROM api_keys WHERE id = ANY($1) ORDER BY name', [
      [rio.id, platform.id],
    ]);
    expect(stored.rows).toEqual([
      { id: rio.id, brand_id: 'bet-rio' },
      { id: platform.id, brand_id: null },
    ]);
    expect((await eventsAs(rio.secret)).status).toBe(200);
    await expectProblem(await eventsAs(rio.secret, 'default'), 403, 'brand-not-allowed');
    await expectProblem(await eventsAs(platform.secret), 400, 'brand-required');
    expect((await eventsAs(platform.secret, 'bet-rio')).status).toBe(200);

    const listed = (await s.get('/backoffice/api-keys')).html;
    const rowOf = (id: string) => listed.slice(listed.indexOf(`data-key-id="${id}"`)).split('</tr>')[0] ?? '';
    expect(rowOf(rio.id)).toMatch(/data-brand="bet-rio">Bet Rio<br><small class="long">bet-rio<\/small>/);
    expect(rowOf(platform.id)).toContain(`data-brand=""><strong>${t.keys.platform}</strong>`);

    const audit = await listActions(e.pool, { caseIds: [rio.id, platform.id], order: 'oldest', limit: 10 });
    expect(
      audit.map((a) => [a.caseId, a.action, a.operatorEmail, (a.after as { brand?: unknown }).brand]),
    ).toEqual([
      [rio.id, 'api_key.create', admin, 'bet-rio'],
      [platform.id, 'api_key.create', admin, null],
    ]);
  });

  it('a brand that does not exist is refused naming the field, and nothing is made', async () => {
    const s = await signIn(admin);
    const before = await countKeys();
    for (const brand of ['bet-sp', 'platform', '']) {
      const res = await s.post('/backoffice/api-keys', {
        name: 'Nowhere',
        ...noScopes,
        scope_events: 'read',
        brand,
      });
      expect(res.status).toBe(400);
      expect(await res.text()).toContain(
        `data-field="brand"><strong>${t.keys.brand}</strong>: ${t.formErrors.brand}`,
      );
    }
    expect(await countKeys()).toBe(before);
  });

  it('in a browser: an admin creates a key with the form, every control labelled, the page narrow enough for a phone', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 390, height: 900 }, locale: 'pt-BR' });
      const problems: string[] = [];
      page.on('pageerror', (err) => problems.push(String(err)));
      await page.goto(`${e.url}/backoffice/api-keys`);
      await page.getByLabel(t.signIn.email).fill(admin);
      await page.getByLabel(t.signIn.password).fill(PASSWORD);
      await page.getByRole('button', { name: t.signIn.submit }).click();
      await page.getByRole('heading', { name: t.keys.title, level: 1 }).waitFor();
      await page.getByLabel(t.keys.name, { exact: true }).fill('Browser-made');
      await page.getByLabel('deposits').selectOption('write');
      await page.getByLabel(t.keys.expiresLabel, { exact: true }).selectOption('30d');
      await page.getByLabel(t.keys.brand, { exact: true }).selectOption('bet-rio');
      await page.getByRole('button', { name: t.keys.create }).click();
      const secret = await page.getByLabel(/^Chave de API ak_/).inputValue();
      expect(secret).toMatch(/^pxk_/);
      expect((await e.call('GET', '/v1/deposits/1', { key: secret })).status).toBe(404);
      // Made for the brand chosen: another brand is refused.
      const other = await fetch(`${e.url}/v1/deposits/1`, {
        headers: { authorization: `Bearer ${secret}`, 'pixflow-brand': 'default' },
      });
      expect(other.status).toBe(403);
      await page.getByRole('link', { name: t.keys.backToKeys }).click();
      await page
        .getByRole('cell', { name: /deposits:write/ })
        .first()
        .waitFor();
      expect(await page.content()).not.toContain(secret);
      const overflow = await page.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
      expect(overflow).toBeLessThanOrEqual(0);
      const unlabelled = await page.evaluate(
        `[...document.querySelectorAll('input:not([type=hidden]), textarea, select')].filter((el) => !el.labels || el.labels.length === 0).length`,
      );
      expect(unlabelled).toBe(0);
      // With its brand column and choice, the page reads at 1280 and 390 px: nothing sideways or cut, no raw code.
      await drawnAtBothWidths(page);
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
