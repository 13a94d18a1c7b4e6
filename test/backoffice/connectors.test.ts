import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHIPPED_CONNECTORS } from '../../backoffice/connectors';
import { catalogs } from '../../backoffice/i18n';
import { createApiPixConnector } from '../../connectors/api-pix';
import { recordChargeOutcome } from '../../db/connector-breakers';
import { type ApiEnv, startApiEnv } from '../api/support';
import { startApiPixForTest } from '../helpers/api-pix';
import { drawnAtBothWidths } from '../helpers/backoffice-pages';
import { saveOperators, signedInAt } from '../helpers/backoffice-sign-in';
import { launchChromium } from '../helpers/browser';
import { connectorFor } from '../helpers/sandbox-client';

// The back office's connectors page in a real browser against the real API and its Postgres: the
// routing's connectors in order, what each can do, and each breaker as the workers left it.

const PASSWORD = 'connectors page password';
const pt = catalogs['pt-BR'];
const en = catalogs.en;
const vera = 'vera.viewer@example.com';
const ana = 'ana.admin@example.com';
const ed = 'ed.viewer@example.com';

let e: ApiEnv;
let browser: Browser;
beforeAll(async () => {
  // The routing the environment seeds: the first provider, API Pix, and a name no connector has.
  e = await startApiEnv(
    {},
    {
      env: {
        DEPOSIT_ROUTING: 'identity-payments,api-pix,mystery-psp',
        DEPOSIT_BREAKER_FAILURES: '2',
        DEPOSIT_BREAKER_WINDOW_MS: '3600000',
        DEPOSIT_BREAKER_COOL_DOWN_MS: '30000',
      },
    },
  );
  await saveOperators(e.pool, PASSWORD, [
    { email: vera, name: 'Vera', role: 'viewer' },
    { email: ana, name: 'Ana', role: 'admin' },
    { email: ed, name: 'Ed', role: 'viewer', language: 'en' },
  ]);
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await e?.close();
});

async function signedIn(email: string): Promise<Page> {
  return signedInAt(browser, e.url, '/backoffice/connectors', email, PASSWORD);
}

async function propose(page: Page, changes: string, reason: string) {
  await page.getByLabel(pt.policy.changesLabel).fill(changes);
  await page.getByLabel(pt.policy.reasonLabel).fill(reason);
  await page.getByRole('button', { name: pt.policy.send }).click();
}

const settings = { failures: 2, windowMs: 3_600_000, coolDownMs: 30_000 };
const ago = (ms: number) => new Date(Date.now() - ms);

describe('the connectors page', () => {
  it("lists the routing's connectors in order, what each does, and its breaker, to any operator", async () => {
    // The first provider opened 40 s ago, its cool-down over: half-open. API Pix opened now.
    for (const at of [ago(41_000), ago(40_000)])
      await recordChargeOutcome(e.pool, 'identity-payments', false, settings, at);
    const opened = await recordChargeOutcome(e.pool, 'api-pix', false, settings, ago(1_000));
    await recordChargeOutcome(e.pool, 'api-pix', false, settings, ago(500));
    expect(opened.state).toBe('closed');

    const page = await signedIn(vera);
    await page.getByRole('heading', { name: pt.connectors.title, level: 1 }).waitFor();
    const rows = page.locator('tbody tr');
    expect(await rows.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-connector')))).toEqual([
      'identity-payments',
      'api-pix',
      'mystery-psp',
    ]);
    const first = page.locator('tr[data-connector="identity-payments"]');
    expect(await first.getAttribute('data-state')).toBe('half_open');
    expect(await first.textContent()).toContain(pt.connectors.states.half_open);
    expect(await first.textContent()).toContain(
      'KYC, prova de vida, cobranças Pix, pagamentos, comprovantes',
    );

    const apiPix = page.locator('tr[data-connector="api-pix"]');
    expect(await apiPix.getAttribute('data-state')).toBe('open');
    expect(await apiPix.textContent()).toContain('cobranças Pix, devoluções');
    expect(await apiPix.locator('td').nth(3).textContent()).toBe('2');
    expect(await apiPix.locator('time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/);

    const unknown = page.locator('tr[data-connector="mystery-psp"]');
    expect(await unknown.getAttribute('data-state')).toBe('closed');
    expect(await unknown.textContent()).toContain(pt.connectors.unknown);
    expect(await page.locator('main').textContent()).toContain(pt.connectors.breakerRule(2, 3600, 30));
    // A viewer is not sent to the policy, which only an admin changes.
    expect(await page.getByRole('link', { name: pt.connectors.change }).count()).toBe(0);
    await drawnAtBothWidths(page, 'connectors');
    await page.context().close();
  }, 60_000);

  it('links an admin to the policy, where the routing is changed as a list of names', async () => {
    const page = await signedIn(ana);
    await page.getByRole('link', { name: pt.connectors.change }).click();
    await page.getByRole('heading', { name: pt.policy.title, level: 1 }).waitFor();
    expect(await page.locator('tr[data-field="deposits.routing.connectors"] td').textContent()).toBe(
      'identity-payments,api-pix,mystery-psp',
    );
    // A name twice is refused, naming the field, in Portuguese.
    await propose(page, 'deposits.routing.connectors=api-pix,api-pix', 'twice');
    expect(await page.locator('main').textContent()).toContain('deve nomear cada conector uma só vez');
    // The routing is a list typed with commas; a new order applies at once (not a loosening).
    await page.goto(`${e.url}/backoffice/policy`);
    await propose(page, 'deposits.routing.connectors= api-pix, identity-payments', 'API Pix first this week');
    await page
      .getByRole('status')
      .filter({ hasText: pt.policy.applied(2) })
      .waitFor();
    await page.goto(`${e.url}/backoffice/connectors`);
    expect(
      await page.locator('tbody tr').evaluateAll((rs) => rs.map((r) => r.getAttribute('data-connector'))),
    ).toEqual(['api-pix', 'identity-payments']);
    await page.context().close();
  }, 60_000);

  it('speaks English to an operator who chose it', async () => {
    const page = await signedIn(ed);
    await page.getByRole('heading', { name: en.connectors.title, level: 1 }).waitFor();
    expect(await page.locator('tr[data-connector="api-pix"]').textContent()).toContain(
      'Pix charges, returns',
    );
    await page.context().close();
  }, 60_000);

  it("names each shipped connector's capabilities as the connector itself declares them", async () => {
    expect(SHIPPED_CONNECTORS['identity-payments']).toEqual(connectorFor(e.sandbox.url).capabilities);
    const psp = await startApiPixForTest();
    try {
      const apiPix = createApiPixConnector({
        baseUrl: psp.url,
        tokenUrl: psp.tokenUrl,
        clientId: psp.clientId,
        clientSecret: psp.clientSecret,
        ...psp.tls,
        pixKey: psp.pixKey,
      });
      expect(apiPix.name).toBe('api-pix');
      expect(SHIPPED_CONNECTORS['api-pix']).toEqual(apiPix.capabilities);
      apiPix.close();
    } finally {
      await psp.close();
    }
  });
});
