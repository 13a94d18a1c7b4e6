import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogs } from '../../backoffice/i18n';
import { createBrand } from '../../db/brands';
import { listActions } from '../../db/operator-actions';
import { latestBrandPolicyVersion, latestPolicyVersion, pendingBrandPolicyChanges } from '../../db/policy';
import { type ApiEnv, startApiEnv } from '../api/support';
import { drawnAtBothWidths } from '../helpers/backoffice-pages';
import { saveOperators, signedInAt } from '../helpers/backoffice-sign-in';
import { launchChromium } from '../helpers/browser';
import { waitUntil } from '../helpers/wait';

// A brand's rules on the back office's policy page, in a real browser against the real API and
// Postgres: an admin picks the brand, sees each field as the brand's, inherited or the person's or
// the operator's (read-only, with why); tightens a field at once, proposes a loosening a second
// admin approves (the brand's version in force changes, the operator's does not), gives a field
// back to the operator's policy, and has another proposal rejected. A person's field, a bad value
// and a missing reason are named with nothing written; every action is in the audit trail.

const PASSWORD = 'brand policy page password';
const t = catalogs['pt-BR'];
const w = t.brandPolicy;
const ana = 'ana.admin@example.com';
const bia = 'bia.admin@example.com';
const rui = 'rui.reviewer@example.com';
const BRAND = 'bet-rio';
const PAGE = `/backoffice/policy?brand=${BRAND}`;

let e: ApiEnv;
let browser: Browser;
beforeAll(async () => {
  e = await startApiEnv();
  await saveOperators(e.pool, PASSWORD, [
    { email: ana, name: 'Ana', role: 'admin' },
    { email: bia, name: 'Bia', role: 'admin' },
    { email: rui, name: 'Rui', role: 'reviewer' },
  ]);
  await createBrand(
    e.pool,
    { operatorId: null, operatorEmail: ana, operatorRole: 'admin' },
    { id: BRAND, name: 'Bet Rio' },
  );
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await e?.close();
});

/** A signed-in page of its own (its own cookies), on the operator's policy page. */
async function signedIn(email: string): Promise<Page> {
  const page = await signedInAt(browser, e.url, '/backoffice/policy', email, PASSWORD);
  await page.getByRole('heading', { level: 1 }).waitFor();
  return page;
}

/** Until the API's policy store has the brand's version `v` in force. */
const brandVersionInForce = (v: number) =>
  waitUntil(
    () => e.policy.current(BRAND),
    (p) => p.brandPolicyVersion === v,
    5_000,
  );

const row = (page: Page, path: string) => page.locator(`table.brand-policy-fields tr[data-field="${path}"]`);

/** Sets the brand's fields on its page: each typed over the value in force, with a reason. */
async function setFields(page: Page, fields: Record<string, string>, reason: string) {
  for (const [path, value] of Object.entries(fields))
    await page.getByLabel(path, { exact: true }).fill(value);
  await page.getByLabel(w.setReasonLabel).fill(reason);
  await page.getByRole('button', { name: w.send }).click();
}

const brandVersion = async () => (await latestBrandPolicyVersion(e.pool, BRAND))?.version ?? 0;
const operatorVersion = async () => (await latestPolicyVersion(e.pool))?.version;
const brandActions = async () =>
  (await listActions(e.pool, { order: 'oldest', limit: 200 })).filter((a) => a.caseType === 'brand-policy');

describe("a brand's rules on the policy page", () => {
  it("the selector shows the brand's policy in force, each field whose it is, only the brand's editable", async () => {
    const page = await signedIn(ana);
    await page.getByRole('heading', { level: 1, name: t.policy.title }).waitFor();
    await page.getByLabel(w.brand, { exact: true }).selectOption(BRAND);
    await page.getByRole('button', { name: w.show }).click();
    await page.getByRole('heading', { level: 1, name: w.title('Bet Rio') }).waitFor();
    expect(new URL(page.url()).searchParams.get('brand')).toBe(BRAND);
    await page.getByRole('heading', { name: w.noOwn(1) }).waitFor();

    // The brand sets nothing yet: what it may set is inherited from the operator's, editable.
    const approvers = row(page, 'payouts.approvers');
    expect(await approvers.getAttribute('data-owner')).toBe('inherited');
    expect(await approvers.textContent()).toContain(w.owners.inherited);
    expect(await page.getByLabel('payouts.approvers', { exact: true }).inputValue()).toBe('2');
    // The person's and the operator's: read-only, saying why.
    const daily = row(page, 'withdrawals.dailyLimitCentavos');
    expect(await daily.getAttribute('data-owner')).toBe('person');
    expect(await daily.textContent()).toContain(w.why.person);
    expect(await page.locator('#brand-policy-set [name="withdrawals.dailyLimitCentavos"]').count()).toBe(0);
    const alerts = row(page, 'alerts.structuring.count');
    expect(await alerts.getAttribute('data-owner')).toBe('operator');
    expect(await alerts.textContent()).toContain(w.why.operator);
    expect(await page.locator('#brand-policy-set [name="alerts.structuring.count"]').count()).toBe(0);
    // Every field a brand may set, and only those, has its input.
    expect(await page.locator('#brand-policy-set input[data-owner]').count()).toBe(11);
    expect(await page.getByText(w.noOverrides).count()).toBe(1);
    // It reads on a phone as on a desk.
    await drawnAtBothWidths(page);
    // In English, the same page in its words.
    const en = catalogs.en.brandPolicy;
    await page.getByRole('button', { name: 'English' }).click();
    await page.getByRole('heading', { level: 1, name: en.title('Bet Rio') }).waitFor();
    expect(await row(page, 'withdrawals.dailyLimitCentavos').textContent()).toContain(en.why.person);
    expect(await page.getByRole('button', { name: en.send }).count()).toBe(1);
    await page.getByRole('button', { name: 'Português' }).click();
    await page.getByRole('heading', { level: 1, name: w.title('Bet Rio') }).waitFor();

    // The default brand's rules are the operator's policy: its page.
    await page.getByLabel(w.brand, { exact: true }).selectOption('default');
    await page.getByRole('button', { name: w.show }).click();
    await page.getByRole('heading', { level: 1, name: t.policy.title }).waitFor();
    expect(await page.getByLabel(t.policy.changesLabel).count()).toBe(1);
    const missing = await page.goto(`${e.url}/backoffice/policy?brand=no-such-brand`);
    expect(missing?.status()).toBe(404);
    await page.context().close();
  }, 60_000);

  it("an admin tightens a brand's field: the brand's version 1 at once, the operator's untouched", async () => {
    const page = await signedIn(ana);
    await page.goto(`${e.url}${PAGE}`);
    await setFields(page, { 'payouts.approvalAboveCentavos': '500000' }, 'bet-rio pays out big prizes');
    await page
      .getByRole('status')
      .filter({ hasText: w.applied(BRAND, 1) })
      .waitFor();
    await page.getByRole('heading', { name: w.inForce(1, 1) }).waitFor();
    const threshold = row(page, 'payouts.approvalAboveCentavos');
    expect(await threshold.getAttribute('data-owner')).toBe('brand');
    expect(await threshold.textContent()).toContain(w.operatorHas('1000000'));
    expect(await page.locator('tr[data-version="1"]').textContent()).toContain(
      'payouts.approvalAboveCentavos: 1000000 (do operador) → 500000 (da marca)',
    );
    expect(await latestBrandPolicyVersion(e.pool, BRAND)).toMatchObject({
      version: 1,
      overrides: { 'payouts.approvalAboveCentavos': 500_000 },
      changedBy: ana,
      approvedBy: null,
    });
    expect(await operatorVersion()).toBe(1);
    // The API's store lays it on the operator's for the brand alone.
    await brandVersionInForce(1);
    expect((await e.policy.current(BRAND)).policy.payouts.approvalAboveCentavos).toBe(500_000);
    expect((await e.policy.current()).policy.payouts.approvalAboveCentavos).toBe(1_000_000);
    expect((await brandActions()).at(-1)).toMatchObject({
      action: 'policy.change',
      outcome: 'done',
      operatorEmail: ana,
      caseId: `brand-policy-${BRAND}-v1`,
      reason: 'bet-rio pays out big prizes',
    });
    await page.context().close();
  }, 60_000);

  it("a brand's loosening waits for a second admin; its proposer cannot approve it, another admin does", async () => {
    const anaPage = await signedIn(ana);
    await anaPage.goto(`${e.url}${PAGE}`);
    await setFields(anaPage, { 'payouts.approvers': '1' }, 'one approver at bet-rio');
    const [change] = await pendingBrandPolicyChanges(e.pool, BRAND);
    const id = Number(change?.id);
    await anaPage
      .getByRole('status')
      .filter({ hasText: t.policy.waiting(id) })
      .waitFor();
    const pending = anaPage.locator(`article[data-change-id="${id}"]`);
    expect(await pending.locator('tr[data-field="payouts.approvers"]').textContent()).toContain(
      t.policy.loosensYes,
    );
    expect(await pending.textContent()).toContain(t.policy.ownChange);
    expect(await pending.getByRole('button', { name: t.policy.approveLabel(id) }).count()).toBe(0);
    expect(await brandVersion()).toBe(1);
    expect((await brandActions()).at(-1)).toMatchObject({
      action: 'policy.propose',
      operatorEmail: ana,
      caseId: `brand-policy-change-${id}`,
    });

    const biaPage = await signedIn(bia);
    await biaPage.goto(`${e.url}${PAGE}`);
    await biaPage.getByRole('button', { name: t.policy.approveLabel(id) }).click();
    await biaPage
      .getByRole('status')
      .filter({ hasText: w.applied(BRAND, 2) })
      .waitFor();
    expect(await latestBrandPolicyVersion(e.pool, BRAND)).toMatchObject({
      version: 2,
      overrides: { 'payouts.approvalAboveCentavos': 500_000, 'payouts.approvers': 1 },
      changedBy: ana,
      approvedBy: bia,
    });
    expect(await row(biaPage, 'payouts.approvers').getAttribute('data-owner')).toBe('brand');
    expect(await biaPage.locator('tr[data-version="2"]').textContent()).toContain(t.policy.approvedBy(bia));
    // The brand's version in force changed; the operator's did not.
    expect(await operatorVersion()).toBe(1);
    await brandVersionInForce(2);
    expect((await e.policy.current(BRAND)).policy.payouts.approvers).toBe(1);
    expect((await e.policy.current()).policy.payouts.approvers).toBe(2);
    expect((await brandActions()).at(-1)).toMatchObject({
      action: 'policy.approve',
      outcome: 'done',
      operatorEmail: bia,
      caseId: `brand-policy-change-${id}`,
    });
    await anaPage.context().close();
    await biaPage.context().close();
  }, 60_000);

  it("giving a field back: it follows the operator's policy again, a new version of the brand's", async () => {
    const page = await signedIn(ana);
    await page.goto(`${e.url}${PAGE}`);
    // Back to the operator's two approvers: a tightening, so at once.
    await page.getByLabel(w.inheritLabel('payouts.approvers', '2')).check();
    await page.getByLabel(w.inheritReasonLabel).fill('bet-rio follows the four eyes again');
    await page.getByRole('button', { name: w.inheritSend }).click();
    await page
      .getByRole('status')
      .filter({ hasText: w.applied(BRAND, 3) })
      .waitFor();
    expect(await row(page, 'payouts.approvers').getAttribute('data-owner')).toBe('inherited');
    expect(await page.locator('tr[data-version="3"]').textContent()).toContain(
      'payouts.approvers: 1 (da marca) → 2 (do operador)',
    );
    expect(await latestBrandPolicyVersion(e.pool, BRAND)).toMatchObject({
      version: 3,
      overrides: { 'payouts.approvalAboveCentavos': 500_000 },
    });
    expect((await brandActions()).at(-1)).toMatchObject({
      action: 'policy.change',
      outcome: 'done',
      operatorEmail: ana,
      caseId: `brand-policy-${BRAND}-v3`,
      reason: 'bet-rio follows the four eyes again',
    });
    await page.context().close();
  }, 60_000);

  it("a person's field, a bad value, a missing reason: named on the brand's page, nothing written", async () => {
    const page = await signedIn(ana);
    await page.goto(`${e.url}${PAGE}`);
    const audited = (await brandActions()).length;

    // A bad value: the page again, the field named and marked, what was typed kept.
    await setFields(page, { 'payouts.approvers': '3' }, 'three approvers');
    const refused = page.locator('[data-refused="set"]');
    await refused.waitFor();
    expect(await refused.locator('li[data-field="payouts.approvers"]').textContent()).toContain(
      'deve ser 1 ou 2',
    );
    const input = page.getByLabel('payouts.approvers', { exact: true });
    expect(await input.inputValue()).toBe('3');
    expect(await input.getAttribute('aria-invalid')).toBe('true');

    // No reason: named.
    await page.goto(`${e.url}${PAGE}`);
    await page.getByLabel('payouts.deadlineMs', { exact: true }).fill('90m');
    await page.getByLabel(w.setReasonLabel).evaluate((el) => el.removeAttribute('required'));
    await page.getByRole('button', { name: w.send }).click();
    await page.locator('[data-refused="set"] li[data-field="reason"]').waitFor();

    // A person's field, as a form no page offers would send it: refused by its name.
    await page.goto(`${e.url}${PAGE}`);
    const csrf = await page.locator('#brand-policy-set input[name="_csrf"]').inputValue();
    const request = page.context().request;
    const person = await request.post(`${e.url}/backoffice/policy/brands/${BRAND}`, {
      form: {
        _csrf: csrf,
        brandVersion: '3',
        operatorVersion: '1',
        'withdrawals.dailyLimitCentavos': '99999999',
        reason: 'a higher daily limit at bet-rio',
      },
      maxRedirects: 0,
    });
    expect(person.status()).toBe(400);
    const html = await person.text();
    expect(html).toContain('data-field="withdrawals.dailyLimitCentavos"');
    expect(html).toContain(w.why.person);
    // Nor given back: it was never the brand's.
    const back = await request.post(`${e.url}/backoffice/policy/brands/${BRAND}/inherit`, {
      form: {
        _csrf: csrf,
        brandVersion: '3',
        operatorVersion: '1',
        inherit: 'eligibility.failClosed',
        reason: 'x',
      },
      maxRedirects: 0,
    });
    expect(back.status()).toBe(400);
    expect(await back.text()).toContain('data-field="eligibility.failClosed"');
    // The default brand has no rules of its own to set.
    const dflt = await request.post(`${e.url}/backoffice/policy/brands/default`, {
      form: { _csrf: csrf, brandVersion: '0', operatorVersion: '1', 'payouts.approvers': '1', reason: 'x' },
      maxRedirects: 0,
    });
    expect(dflt.status()).toBe(400);
    expect(await dflt.text()).toContain(w.defaultIsOperator);

    expect(await brandVersion()).toBe(3);
    expect(await pendingBrandPolicyChanges(e.pool, BRAND)).toEqual([]);
    expect(await operatorVersion()).toBe(1);
    expect((await brandActions()).length).toBe(audited);
    await page.context().close();
  }, 60_000);

  it('a change made over an older version is refused as stale, nothing written', async () => {
    const page = await signedIn(ana);
    await page.goto(`${e.url}${PAGE}`);
    // Another admin's change lands while this page is open.
    const other = await signedIn(bia);
    await other.goto(`${e.url}${PAGE}`);
    await setFields(other, { 'deposits.routing.breaker.failures': '3' }, 'trip sooner');
    await other
      .getByRole('status')
      .filter({ hasText: w.applied(BRAND, 4) })
      .waitFor();
    const audited = (await brandActions()).length;
    const answered = page.waitForResponse((r) => r.request().method() === 'POST');
    await setFields(page, { 'payouts.deadlineMs': '2h' }, 'slower payouts');
    expect((await answered).status()).toBe(409);
    await page.locator('[data-refused="set"]').waitFor();
    expect(await page.locator('[data-refused="set"]').textContent()).toContain(w.problems.stale);
    expect(await brandVersion()).toBe(4);
    expect((await brandActions()).length).toBe(audited);
    await page.context().close();
    await other.context().close();
  }, 60_000);

  it("another admin rejects a brand's loosening; nothing changes, the rejection audited", async () => {
    const anaPage = await signedIn(ana);
    await anaPage.goto(`${e.url}${PAGE}`);
    await setFields(anaPage, { 'payouts.approvalAboveCentavos': '0' }, 'no four eyes at bet-rio');
    const [change] = await pendingBrandPolicyChanges(e.pool, BRAND);
    const id = Number(change?.id);
    await anaPage
      .getByRole('status')
      .filter({ hasText: t.policy.waiting(id) })
      .waitFor();
    const biaPage = await signedIn(bia);
    await biaPage.goto(`${e.url}${PAGE}`);
    const article = biaPage.locator(`article[data-change-id="${id}"]`);
    await article.getByLabel(t.policy.rejectNote).fill('four eyes stay');
    await article.getByRole('button', { name: t.policy.rejectLabel(id) }).click();
    await biaPage
      .getByRole('status')
      .filter({ hasText: t.policy.rejected(id) })
      .waitFor();
    expect(await pendingBrandPolicyChanges(e.pool, BRAND)).toEqual([]);
    expect(await brandVersion()).toBe(4);
    expect((await brandActions()).at(-1)).toMatchObject({
      action: 'policy.reject',
      outcome: 'done',
      operatorEmail: bia,
      caseId: `brand-policy-change-${id}`,
      reason: 'four eyes stay',
    });
    await anaPage.context().close();
    await biaPage.context().close();
  }, 60_000);

  it("another role is refused a brand's rules, and its change is refused and audited", async () => {
    const page = await signedIn(rui);
    const seen = await page.goto(`${e.url}${PAGE}`);
    expect(seen?.status()).toBe(403);
    expect(await page.getByLabel(w.setReasonLabel).count()).toBe(0);
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    const res = await page.context().request.post(`${e.url}/backoffice/policy/brands/${BRAND}`, {
      form: { _csrf: csrf, brandVersion: '4', operatorVersion: '1', 'payouts.approvers': '1', reason: 'x' },
      maxRedirects: 0,
    });
    expect(res.status()).toBe(403);
    expect(await brandVersion()).toBe(4);
    expect((await brandActions()).at(-1)).toMatchObject({
      action: 'policy.change',
      outcome: 'refused',
      operatorEmail: rui,
      caseId: BRAND,
    });
    await page.context().close();
  }, 60_000);
});
