import { randomBytes, randomInt } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderClient } from '../../connectors/identity-payments/client';
import { type RunningSandbox, startSandbox } from '../../sandbox';
import { launchChromium } from '../helpers/browser';
import { clientFor } from '../helpers/sandbox-client';

// The sandbox console in a real headless Chromium: rows appear (also by auto-refresh), the QR image
// loads, and the buttons change what the provider's own inquiry reports.

let sandbox: RunningSandbox;
let client: ProviderClient;
let browser: Browser;
let page: Page;
const pageProblems: string[] = [];
const foreignRequests: string[] = [];

const txid = () => `${Date.now()}${randomInt(1e6)}`;
const person = (name: string) => ({
  externalId: `ext-${randomBytes(4).toString('hex')}`,
  cpf: '63401825771',
  email: 'ana@example.com',
  name,
});
// The test has no DOM lib; what it reads of an <img> in the page.
type Img = { complete: boolean; naturalWidth: number };
// A quoted attribute selector only needs quotes and backslashes escaped.
const testId = (id: string) => `[data-testid="${id.replace(/["\\]/g, '\\$&')}"]`;

async function createDeposit(amountCentavos: number, name = 'Ana Souza') {
  const id = txid();
  await client.createDeposit({ txid: id, amountCentavos, client: person(name) });
  return id;
}

async function createWithdrawal(
  amountCentavos: number,
  transactionId = `wd-${randomBytes(6).toString('hex')}`,
) {
  await client.createWithdrawal({
    transactionId,
    amountCentavos,
    pixKey: 'ana@example.com',
    pixType: 'EMAIL',
    client: person('Ana Souza'),
  });
  return transactionId;
}

async function startLiveness(document: string): Promise<string> {
  await client.startLiveness(document, {
    correlationId: `corr-${randomBytes(4).toString('hex')}`,
    plan: 'plan_basic',
    event: 'onboarding',
  });
  const session = [...sandbox.state.liveness.values()].find((s) => s.document === document);
  if (!session) throw new Error(`no liveness session for ${document}`);
  return session.id;
}

// The browser is launched by the first test that needs it, not in beforeAll: a missing Chromium
// must fail every test with its message (vitest would report them skipped after a beforeAll error).
let launched: Promise<Page> | undefined;
function browserPage(): Promise<Page> {
  launched ??= (async () => {
    browser = await launchChromium();
    const p = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    p.on('pageerror', (err) => pageProblems.push(`pageerror: ${err.message}`));
    // CSP violations and failed loads surface as console errors.
    p.on('console', (msg) => {
      if (msg.type() === 'error') pageProblems.push(`console: ${msg.text()}`);
    });
    p.on('request', (req) => {
      const url = req.url();
      if (!url.startsWith(`${sandbox.url}/`) && !url.startsWith('data:')) foreignRequests.push(url);
    });
    return p;
  })();
  return launched;
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
  client = clientFor(sandbox.url, {
    timeoutMs: 5_000,
  });
});

afterAll(async () => {
  await browser?.close();
  await sandbox?.close();
});

describe('sandbox console in Chromium', () => {
  it('shows a pending deposit with its QR image and BRL value, and Pay completes it', async () => {
    page = await browserPage();
    const id = await createDeposit(15_000);
    const other = await createDeposit(123_456_789); // thousands separators, no float drift
    await page.goto(`${sandbox.url}/sandbox/console`);

    const row = page.locator(testId(`deposit-${id}`));
    await row.waitFor();
    await expect(row.locator(testId(`value-${id}`)).textContent()).resolves.toBe('R$ 150,00');
    await expect(page.locator(testId(`value-${other}`)).textContent()).resolves.toBe('R$ 1.234.567,89');
    const qr = row.locator(testId(`qr-${id}`));
    await page.waitForFunction(
      (el) => (el as unknown as Img).complete && (el as unknown as Img).naturalWidth > 0,
      await qr.elementHandle(),
    );
    expect(await qr.evaluate((el) => (el as unknown as Img).naturalWidth)).toBeGreaterThan(0);
    // The expiry on São Paulo's clock, as the refresh time above the rows.
    await expect(row.textContent()).resolves.toMatch(/\b\d\d:\d\d:\d\d GMT-3\b/);
    expect(await row.textContent()).not.toMatch(/UTC/);
    await page
      .locator(testId('status'))
      .filter({ hasText: /^updated \d\d:\d\d:\d\d GMT-3$/ })
      .waitFor();

    await page.locator(testId(`pay-${id}`)).click();
    await page
      .locator(testId('flash'))
      .filter({ hasText: `Paid deposit ${id}: completed` })
      .waitFor();
    await row.waitFor({ state: 'detached' });
    await page
      .locator(testId(`recent-deposit-${id}`))
      .filter({ hasText: 'completed' })
      .waitFor();
    expect((await client.getDeposit(id)).status).toBe('completed');
    expect((await client.getDeposit(other)).status).toBe('processing');
  });

  it('picks up new withdrawals by itself; Settle and Fail reach the inquiry', async () => {
    page = await browserPage();
    // Created after the page loaded: only the 2 s refresh can show them.
    const settled = await createWithdrawal(4_990);
    const failed = await createWithdrawal(10);
    await page.locator(testId(`withdrawal-${settled}`)).waitFor({ timeout: 10_000 });
    await expect(page.locator(testId(`value-${settled}`)).textContent()).resolves.toBe('R$ 49,90');
    await expect(page.locator(testId(`value-${failed}`)).textContent()).resolves.toBe('R$ 0,10');

    await page.locator(testId(`settle-${settled}`)).click();
    await page.locator(testId(`withdrawal-${settled}`)).waitFor({ state: 'detached' });
    await page.locator(testId(`fail-${failed}`)).click();
    await page.locator(testId(`withdrawal-${failed}`)).waitFor({ state: 'detached' });

    expect((await client.getWithdrawal(settled)).status).toBe('completed');
    const f = await client.getWithdrawal(failed);
    expect(f.status).toBe('failed');
    expect(f.reason).toBe('sandbox console: payout failed');
  });

  it('completes a liveness session, and approves one that went to manual review', async () => {
    page = await browserPage();
    const passing = await startLiveness('73628883504'); // approved_biometrics_pass
    const review = await startLiveness('52998224725'); // any other valid CPF: manual review
    const row = page.locator(testId(`liveness-${passing}`));
    await row.waitFor({ timeout: 10_000 });
    await expect(row.getAttribute('data-document')).resolves.toBe('73628883504');

    await page.locator(testId(`complete-${passing}`)).click();
    await row.waitFor({ state: 'detached' });
    expect(sandbox.state.liveness.get(passing)?.statusVerification).toBe('completed');

    await page.locator(testId(`complete-${review}`)).click();
    await page.locator(testId(`approve-${review}`)).click();
    await page.locator(testId(`liveness-${review}`)).waitFor({ state: 'detached' });
    expect(sandbox.state.liveness.get(review)?.statusVerification).toBe('manual_approved');
  });

  it('escapes what it shows: names and ids are text, never markup', async () => {
    page = await browserPage();
    const evil = `<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>"'&`;
    const id = await createDeposit(100, evil);
    const wd = await createWithdrawal(250, `"><img src=x onerror=window.__xss=3>`);
    await page.reload();
    const row = page.locator(testId(`deposit-${id}`));
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain(evil);
    const wdRow = page.locator(testId(`withdrawal-${wd}`));
    await expect(wdRow.textContent()).resolves.toContain(wd);
    expect(await page.evaluate(() => (globalThis as { __xss?: number }).__xss)).toBeUndefined();
    expect(await page.locator('#rows img:not(.qr)').count()).toBe(0);

    // The odd id still round-trips through the button to the control endpoint.
    await page.locator(testId(`settle-${wd}`)).click();
    await wdRow.waitFor({ state: 'detached' });
    expect((await client.getWithdrawal(wd)).status).toBe('completed');
    await page.locator(testId(`pay-${id}`)).click();
    await row.waitFor({ state: 'detached' });
  });

  it('looks right (screenshot for people) and loaded nothing from elsewhere', async () => {
    page = await browserPage();
    await createDeposit(15_000, 'Maria da Silva');
    await createWithdrawal(32_150);
    await startLiveness('39053344705');
    await page.reload();
    await page.locator('[data-testid^="liveness-"]').first().waitFor();
    await page.screenshot({ path: '/tmp/console.png', fullPage: true });

    expect(foreignRequests).toEqual([]);
    // CSP violations would show here, and so would a failed load of an injected <img src=x>.
    expect(pageProblems).toEqual([]);
  });
});
