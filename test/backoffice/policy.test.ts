import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { catalogs, labelsFor } from '../../backoffice/i18n';
import { raiseAlert } from '../../db/alerts';
import { listActions } from '../../db/operator-actions';
import { latestPolicyVersion, pendingPolicyChanges } from '../../db/policy';
import { policyOfRow, proposePolicyChange } from '../../policy/changes';
import { type ApiEnv, expectProblem, freshCpf, startApiEnv } from '../api/support';
import { drawnAtBothWidths } from '../helpers/backoffice-pages';
import { saveOperators, signedInAt } from '../helpers/backoffice-sign-in';
import { launchChromium } from '../helpers/browser';
import { waitUntil } from '../helpers/wait';

// The back office's rules policy page in a real browser against the real API: an admin tightens a
// limit (it applies at once, in every reader of the policy), proposes a loosening that waits for a
// second admin, who approves it on their own session; bad input names the field and changes
// nothing; other roles are refused the page and do not see it in the menu. An alert's page, and a
// refused withdrawal's and deposit's, say the policy version it was raised or refused under.

const PASSWORD = 'policy page password';
const t = catalogs['pt-BR'];
const ana = 'ana.admin@example.com';
const bia = 'bia.admin@example.com';
const rui = 'rui.reviewer@example.com';

let e: ApiEnv;
let browser: Browser;
beforeAll(async () => {
  e = await startApiEnv();
  await saveOperators(e.pool, PASSWORD, [
    { email: ana, name: 'Ana', role: 'admin' },
    { email: bia, name: 'Bia', role: 'admin' },
    { email: rui, name: 'Rui', role: 'reviewer' },
  ]);
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await e?.close();
});

/** A signed-in page of its own (its own cookies), on the policy page. */
async function signedIn(email: string): Promise<Page> {
  return signedInAt(browser, e.url, '/backoffice/policy', email, PASSWORD);
}

async function propose(page: Page, changes: string, reason: string) {
  await page.getByLabel(t.policy.changesLabel).fill(changes);
  await page.getByLabel(t.policy.reasonLabel).fill(reason);
  await page.getByRole('button', { name: t.policy.send }).click();
}

const versionInForce = async () => (await latestPolicyVersion(e.pool))?.version;

describe('the rules policy page', () => {
  it('an admin tightens a limit: a new version at once, in the history with its diff, read by the API', async () => {
    // The API's reader has the seeded version before anything changes.
    expect((await e.policy.current()).version).toBe(1);
    const page = await signedIn(ana);
    await page.getByRole('heading', { name: t.policy.current(1) }).waitFor();
    expect(await page.locator('tr[data-field="withdrawals.dailyLimitCentavos"] td').textContent()).toBe(
      '5000000',
    );

    await propose(page, 'withdrawals.dailyLimitCentavos=100000', 'fraud wave this week');
    await page
      .getByRole('status')
      .filter({ hasText: t.policy.applied(2) })
      .waitFor();
    await page.getByRole('heading', { name: t.policy.current(2) }).waitFor();
    expect(await page.locator('tr[data-version="2"]').textContent()).toContain(
      'withdrawals.dailyLimitCentavos: 5000000 → 100000',
    );
    expect(await page.locator('tr[data-version="1"]').textContent()).toContain(t.policy.firstVersion);
    // Notified, the API's own reader has it within moments.
    await waitUntil(
      () => e.policy.current(),
      (p) => p.version === 2,
      5_000,
    );
    expect((await e.policy.current()).policy.withdrawals.dailyLimitCentavos).toBe(100_000);
    const [audit] = await listActions(e.pool, { action: 'policy.change', order: 'newest', limit: 1 });
    expect(audit).toMatchObject({ operatorEmail: ana, outcome: 'done', reason: 'fraud wave this week' });
    await page.context().close();
  }, 60_000);

  it('bad input names the field, in Portuguese, and changes nothing', async () => {
    const page = await signedIn(ana);
    await page.getByRole('heading', { name: t.policy.current(2) }).waitFor();
    await propose(page, 'payouts.approvers=3', 'three approvers');
    const body = await page.locator('main').textContent();
    expect(body).toContain(t.policy.refused);
    expect(body).toContain('payouts.approvers');
    expect(body).toContain('deve ser 1 ou 2');
    await page.goto(`${e.url}/backoffice/policy`);
    await propose(page, 'withdrawals.weeklyLimitCentavos=1', 'no such field');
    expect(await page.locator('main').textContent()).toContain('não é um campo da política');
    expect(await versionInForce()).toBe(2);
    expect(await pendingPolicyChanges(e.pool)).toEqual([]);
    await page.context().close();
  }, 60_000);

  it('a loosening waits for a second admin: its proposer cannot approve it, another admin does', async () => {
    const anaPage = await signedIn(ana);
    await anaPage.getByRole('heading', { name: t.policy.current(2) }).waitFor();
    await propose(anaPage, 'payouts.approvers=1\nalerts.structuring.count=4', 'one approver in December');
    const [change] = await pendingPolicyChanges(e.pool);
    expect(change).toBeDefined();
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
    expect(await versionInForce()).toBe(2);

    const biaPage = await signedIn(bia);
    await biaPage.getByRole('button', { name: t.policy.approveLabel(id) }).click();
    await biaPage
      .getByRole('status')
      .filter({ hasText: t.policy.applied(3) })
      .waitFor();
    expect(await latestPolicyVersion(e.pool)).toMatchObject({ version: 3, changedBy: ana, approvedBy: bia });
    expect(await biaPage.locator('tr[data-version="3"]').textContent()).toContain(t.policy.approvedBy(bia));
    await waitUntil(
      () => e.policy.current(),
      (p) => p.version === 3,
      5_000,
    );
    expect((await e.policy.current()).policy.payouts.approvers).toBe(1);
    const [approved] = await listActions(e.pool, { action: 'policy.approve', order: 'newest', limit: 1 });
    expect(approved).toMatchObject({ operatorEmail: bia, outcome: 'done' });
    await anaPage.context().close();
    await biaPage.context().close();
  }, 60_000);

  it('another role is refused the page, and its change is refused and audited', async () => {
    const page = await signedIn(rui);
    const main = await page.locator('main').textContent();
    expect(main).toContain(t.errors.notAllowed);
    expect(await page.getByLabel(t.policy.changesLabel).count()).toBe(0);
    const cookies = await page.context().cookies();
    const cookie = cookies.map((c) => `${c.name}=${c.value}`).join('; ');
    const home = await (await fetch(`${e.url}/backoffice`, { headers: { cookie } })).text();
    const token = /name="_csrf" value="([^"]+)"/.exec(home)?.[1] ?? '';
    const res = await fetch(`${e.url}/backoffice/policy`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        _csrf: token,
        changes: 'payouts.approvers=2',
        reason: 'x',
        baseVersion: '3',
      }),
    });
    expect(res.status).toBe(403);
    expect(await versionInForce()).toBe(3);
    const [refused] = await listActions(e.pool, { action: 'policy.change', order: 'newest', limit: 1 });
    expect(refused).toMatchObject({ operatorEmail: rui, outcome: 'refused' });
    await page.context().close();
  }, 60_000);

  it("an alert's page says the policy version it was raised under", async () => {
    const id = `alr_${'0'.repeat(31)}1`;
    await raiseAlert(e.pool, {
      id,
      rule: 'quick_in_out',
      cpfHash: 'h'.repeat(64),
      cpfMasked: '***.456.789-**',
      flowId: 'withdrawal-policy-test',
      flowIds: ['withdrawal-policy-test'],
      facts: { payoutCentavos: 50_000 },
      policyVersion: 3,
    });
    const page = await signedIn(ana);
    await page.goto(`${e.url}/backoffice/alerts/${id}`);
    const facts = await page.locator('dl.facts').textContent();
    expect(facts).toContain(t.alerts.policyVersion);
    expect(facts).toContain(t.alerts.policyVersionValue(3));
    await page.context().close();
  }, 60_000);

  it('the menu shows Policy to an admin and not to a reviewer', async () => {
    const admin = await signedIn(ana);
    const entry = admin.locator('header nav a[data-menu="policy"]');
    expect(await entry.textContent()).toBe(t.nav.policy);
    expect(await entry.getAttribute('aria-current')).toBe('page');
    await entry.click();
    await admin.getByRole('heading', { level: 1, name: t.policy.title }).waitFor();
    const reviewer = await signedIn(rui);
    await reviewer.goto(`${e.url}/backoffice`);
    await reviewer.locator('header nav a[data-menu="queues"]').waitFor();
    expect(await reviewer.locator('header nav a[data-menu="policy"]').count()).toBe(0);
    expect(await reviewer.locator('header nav').textContent()).not.toContain(t.nav.policy);
    await admin.context().close();
    await reviewer.context().close();
  }, 60_000);

  it("a refused withdrawal's case page says why and the policy version it was refused under, linked to that version in the history", async () => {
    const cpf = freshCpf();
    const transactionId = `policy-${Date.now()}`;
    const refused = await expectProblem(
      await e.call('POST', '/v1/withdrawals', {
        body: {
          transactionId,
          client: { externalId: 'policy-page', cpf, email: 'ana@example.com', name: 'Ana Souza' },
          pixKey: cpf,
          pixType: 'CPF',
          amountCentavos: 10_000,
        },
      }),
      409,
      'withdrawal-refused',
    );
    expect(refused).toMatchObject({ reason: 'not_verified', workflowId: `withdrawal-${transactionId}` });
    const { policyVersion: version } = z.object({ policyVersion: z.number().int().min(1) }).parse(refused);
    const caseUrl = `${e.url}/backoffice/flows/withdrawal-${transactionId}`;

    const page = await signedIn(ana);
    await page.goto(caseUrl);
    const facts = page.locator('dl.facts');
    expect(await facts.textContent()).toContain(labelsFor('pt-BR').reason('not_verified'));
    expect(await facts.locator('dt', { hasText: t.flow.policyUnder.refused }).count()).toBe(1);
    const link = facts.locator('dd[data-policy-version] a');
    expect(await link.textContent()).toBe(t.flow.policyVersion(version));
    await link.click();
    await page.getByRole('heading', { level: 1, name: t.policy.title }).waitFor();
    const row = page.locator(`tr#version-${version}`);
    expect(await row.getAttribute('aria-current')).toBe('true');
    expect(await row.textContent()).toContain(t.policy.asked);
    expect(await page.locator('tr[aria-current]').count()).toBe(1);
    // It reads on a phone as on a desk: nothing sideways, no cell cut.
    await drawnAtBothWidths(page);

    // A version past the history's end is not there: said, not a failure; a bad one is named.
    await page.goto(`${e.url}/backoffice/policy?version=999`);
    expect(await page.locator('main').textContent()).toContain(t.errors.what.policyVersion);
    const bad = await page.goto(`${e.url}/backoffice/policy?version=two`);
    expect(bad?.status()).toBe(400);
    expect(await page.locator('main').textContent()).toContain('version');

    // A reviewer reads the version, with no link to a page they may not open.
    const reviewer = await signedIn(rui);
    await reviewer.goto(caseUrl);
    const dd = reviewer.locator('dl.facts dd[data-policy-version]');
    expect(await dd.textContent()).toBe(t.flow.policyVersion(version));
    expect(await dd.locator('a').count()).toBe(0);
    await page.context().close();
    await reviewer.context().close();
  }, 60_000);

  it('a deposit the rules refused in its flow: its case page says why and the policy version, in Portuguese and in English', async () => {
    const cpf = freshCpf();
    const refused = await expectProblem(
      await e.call('POST', '/v1/deposits', {
        body: {
          amountCentavos: 10_000,
          client: { externalId: 'policy-page', cpf, email: 'ana@example.com', name: 'Ana Souza' },
        },
      }),
      409,
      'not-verified',
    );
    const { policyVersion: version, workflowId } = z
      .object({ policyVersion: z.number().int().min(1), workflowId: z.string().startsWith('deposit-') })
      .parse(refused);
    const page = await signedIn(ana);
    await page.goto(`${e.url}/backoffice/flows/${workflowId}`);
    expect(await page.locator('.status').getAttribute('data-status')).toBe('refused');
    const facts = page.locator('dl.facts');
    expect(await facts.textContent()).toContain(labelsFor('pt-BR').reason('not_verified'));
    const under = facts.locator('dt', { hasText: t.flow.policyUnder.refused });
    expect(await under.locator('xpath=following-sibling::dd[1]').textContent()).toBe(
      t.flow.policyVersion(version),
    );
    expect(await facts.locator('dd[data-policy-version] a').getAttribute('href')).toBe(
      `/backoffice/policy?version=${version}#version-${version}`,
    );
    // In English, the same facts in its words.
    const en = catalogs.en;
    await page.getByRole('button', { name: 'English' }).click();
    await page.getByRole('heading', { level: 1 }).waitFor();
    await expect.poll(() => page.locator('html').getAttribute('lang')).toBe('en');
    expect(await page.locator('dl.facts').textContent()).toContain(en.flow.policyUnder.refused);
    expect(await page.locator('dl.facts dd[data-policy-version]').textContent()).toBe(
      en.flow.policyVersion(version),
    );
    await page.getByRole('button', { name: 'Português' }).click();
    await page.context().close();
  }, 60_000);

  it("a version older than the history's newest 20, asked for by a case's link, is shown marked after them", async () => {
    const admin = { operatorId: null, operatorEmail: ana, operatorRole: 'admin' };
    // Twenty-one tightenings, each a version at once.
    for (let i = 0; i < 21; i++) {
      const current = await latestPolicyVersion(e.pool);
      if (!current) throw new Error('no policy version');
      const policy = policyOfRow(current);
      policy.withdrawals.dailyLimitCentavos -= 1_000;
      const outcome = await proposePolicyChange(e.pool, admin, {
        policy,
        reason: `tighter, step ${i}`,
        baseVersion: current.version,
      });
      expect(outcome.kind).toBe('applied');
    }
    const latest = Number(await versionInForce());
    expect(latest).toBeGreaterThan(21);
    const page = await signedIn(ana);
    await page.goto(`${e.url}/backoffice/policy`);
    expect(await page.locator('tr[data-version="1"]').count()).toBe(0);
    await page.goto(`${e.url}/backoffice/policy?version=1#version-1`);
    const rows = page.locator('table.policy-history tbody tr');
    expect(await rows.count()).toBe(21);
    expect(await rows.last().getAttribute('id')).toBe('version-1');
    expect(await rows.last().getAttribute('aria-current')).toBe('true');
    expect(await rows.last().textContent()).toContain(t.policy.firstVersion);
    expect(await rows.first().getAttribute('data-version')).toBe(String(latest));
    await page.context().close();
  }, 60_000);
});
