import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogs, labelsFor } from '../../backoffice/i18n';
import { loadConfig } from '../../common/config';
import { createLogger } from '../../common/logger';
import { hashPassword } from '../../common/passwords';
import { cpfHash } from '../../common/pii';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import { saveOperator } from '../../db/operators';
import { alertMonitorSettings, startAlertMonitor, TRIGGERS } from '../../monitoring/monitor';
import { type ApiEnv, counterValue, eventually, PII_KEY, peopleAt, startApiEnv } from '../api/support';
import { decidePayout, drawnAtBothWidths, SHOTS } from '../helpers/backoffice-pages';
import { launchChromium } from '../helpers/browser';
import { newPerson, onboard, type Person } from '../helpers/people';

// Monitoring alerts on a large payout before its approvers decide, on the real stack (API over
// HTTP, worker, Temporal, Postgres, the sandbox and its notifications through the ingress, the
// alert monitor beside the API): a person deposits and at once asks for a payout over the
// approval bound; the monitor flags it while it awaits approval, its page in the back office
// (Chromium) lists the alerts beside the approve/refuse form, and once two approvers sent it and
// it completed, each rule's alert for it is still the one raised before.

const PASSWORD = 'correct horse battery staple';
const APPROVER = 'ana.approver@example.com';
const SECOND = 'beto.approver@example.com';
const ENGLISH = 'eve.english@example.com';
const t = catalogs['pt-BR'];
const pt = labelsFor('pt-BR');
const en = catalogs.en;
/** Four eyes above R$ 200,00, below the biometric step-up. */
const APPROVAL_ABOVE = 20_000;

/** Small bounds and ten-minute windows: the payout trips quick in-out, window total and new account. */
const ALERT_ENV = {
  ALERT_MONITOR_INTERVAL_MS: '200',
  ALERT_STRUCTURING_BELOW_CENTAVOS: '0',
  ALERT_QUICK_IN_OUT_WINDOW_MS: '600000',
  ALERT_QUICK_IN_OUT_SHARE_PERCENT: '80',
  ALERT_QUICK_IN_OUT_MIN_CENTAVOS: '10000',
  ALERT_WINDOW_TOTAL_ABOVE_CENTAVOS: '20000',
  ALERT_WINDOW_TOTAL_WINDOW_MS: '600000',
  ALERT_WINDOW_TOTAL_OF: 'withdrawals',
  ALERT_NEW_ACCOUNT_WINDOW_MS: '600000',
  ALERT_NEW_ACCOUNT_MIN_CENTAVOS: '10000',
  PAYOUT_APPROVAL_ABOVE_CENTAVOS: String(APPROVAL_ABOVE),
  PAYOUT_APPROVERS: '2',
};
const PAYOUT_RULES = ['new_account', 'quick_in_out', 'window_total'];

let e: ApiEnv;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  e = await startApiEnv({ pollScheduleMs: [1_000] }, { alertMonitor: true, env: ALERT_ENV });
  // Deposit and payout notifications come in through the API's own ingress; a payout sent settles at once.
  await e.sandboxControl('/sandbox/notifications', { url: e.ingress, partnerId: e.partnerId });
  await e.sandboxControl('/sandbox/auto', { settleWithdrawalsAfterMs: 100 });
  const hash = await hashPassword(PASSWORD);
  await saveOperator(e.pool, { email: APPROVER, name: 'Ana', role: 'approver', passwordHash: hash });
  await saveOperator(e.pool, { email: SECOND, name: 'Beto', role: 'approver', passwordHash: hash });
  await saveOperator(e.pool, { email: ENGLISH, role: 'approver', passwordHash: hash, language: 'en' });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  await e?.close();
});

const statusOf = async (path: string) =>
  ((await (await e.call('GET', path)).json()) as { state: { status: string } }).state.status;

/** A deposit paid by the person in the sandbox, until pixflow credits it. */
async function deposit(p: Person, amountCentavos: number): Promise<void> {
  const res = await e.call('POST', '/v1/deposits', {
    body: { client: { externalId: p.externalId, cpf: p.cpf, email: p.email, name: p.name }, amountCentavos },
  });
  expect(res.status).toBe(201);
  const { txid } = (await res.json()) as { txid: string };
  await e.sandboxControl(`/sandbox/deposits/${txid}/pay`, { payerName: p.name });
  await eventually(
    () => statusOf(`/v1/deposits/${txid}`),
    (s) => s === 'completed',
    { timeoutMs: 30_000 },
  );
}

/** A payout over the approval bound to the person's own CPF key, until it awaits approval. */
async function largePayout(p: Person, amountCentavos: number) {
  const transactionId = `big-${randomBytes(5).toString('hex')}`;
  const res = await e.call('POST', '/v1/withdrawals', {
    body: {
      transactionId,
      client: { externalId: p.externalId, cpf: p.cpf, email: p.email, name: p.name },
      pixKey: p.cpf,
      pixType: 'CPF',
      amountCentavos,
    },
  });
  expect(res.status).toBe(202);
  await eventually(
    () => statusOf(`/v1/withdrawals/${transactionId}`),
    (s) => s === 'awaiting_approval',
  );
  return { transactionId, workflowId: withdrawalWorkflowId(transactionId) };
}

const alertsOf = async (p: Person) =>
  (
    await e.pool.query<{ id: string; rule: string; flow_id: string; status: string; facts: object }>(
      'SELECT id, rule, flow_id, status, facts FROM alerts WHERE cpf_hash = $1 ORDER BY rule',
      [cpfHash(p.cpf, PII_KEY)],
    )
  ).rows;

/** Until the monitor has read every triggering event of the flow. */
async function monitorCaughtUp(workflowId: string): Promise<void> {
  await eventually(
    async () => {
      const { rows } = await e.pool.query(
        `SELECT count(*) FILTER (WHERE ev.position IS NULL OR ev.position > c.position) AS behind
           FROM events ev, alert_monitor_cursor c WHERE ev.stream_id = $1 AND ev.type = ANY($2)`,
        [workflowId, TRIGGERS],
      );
      return Number(rows[0].behind);
    },
    (behind) => behind === 0,
  );
}

async function signedIn(email: string, words = t): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    timezoneId: 'America/Sao_Paulo',
    locale: 'pt-BR',
  });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${e.url}/backoffice/sign-in`);
  await page.getByLabel(t.signIn.email).fill(email);
  await page.getByLabel(t.signIn.password).fill(PASSWORD);
  await page.getByRole('button', { name: t.signIn.submit }).click();
  await page.getByRole('heading', { level: 1, name: words.home.title }).waitFor({ timeout: 10_000 });
  return page;
}

/** Chooses and sends the decision on the payout's page. */
const decide = (page: Page, workflowId: string, decision: 'approve' | 'refuse', reason = '') =>
  decidePayout(page, e.url, workflowId, decision, reason);

describe('alerts on a large payout before its approvers decide', () => {
  it('flags it while it awaits approval, lists the alerts on its page beside the form, and raises none again when it completes', async () => {
    const p = newPerson();
    await onboard(await peopleAt(e), p);
    // R$ 300,00 in, and at once R$ 250,00 (83%) out: over the approval bound.
    await deposit(p, 30_000);
    const { transactionId, workflowId } = await largePayout(p, 25_000);

    // Flagged before anyone decided: each payout rule once, on this payout.
    const before = await eventually(
      () => alertsOf(p),
      (a) => a.length === PAYOUT_RULES.length,
    );
    expect(before.map((a) => [a.rule, a.flow_id])).toEqual(PAYOUT_RULES.map((r) => [r, workflowId]));
    expect(await statusOf(`/v1/withdrawals/${transactionId}`)).toBe('awaiting_approval');
    const quick = before.find((a) => a.rule === 'quick_in_out');
    if (!quick) throw new Error('no quick in-out alert');

    // The payout's page: the person's alerts, under their own heading, beside the approve/refuse
    // form, each a link.
    const page = await signedIn(APPROVER);
    await page.goto(`${e.url}/backoffice/flows/${workflowId}`);
    const decide_ = page.getByRole('region', { name: t.flow.decision });
    const listed = page.getByRole('region', { name: t.personAlerts.heading });
    expect(await decide_.getByRole('region', { name: t.personAlerts.heading }).count()).toBe(0);
    const item = listed.locator(`li[data-alert="${quick.id}"]`);
    expect(await item.textContent()).toContain(t.personAlerts.thisPayout);
    expect(await item.getAttribute('data-status')).toBe('open');
    expect(await item.textContent()).toContain(pt.alertStatus('open'));
    expect(await listed.locator('li[data-alert]').count()).toBe(PAYOUT_RULES.length);
    await expect.poll(() => decide_.getByRole('radio', { name: t.payouts.approveChoice }).count()).toBe(1);
    await drawnAtBothWidths(page, 'case-payout-alerts');
    await item.getByRole('link', { name: pt.alertRule('quick_in_out') }).click();
    await page
      .getByRole('heading', { level: 1, name: t.alerts.heading(pt.alertRule('quick_in_out')) })
      .waitFor();
    expect(page.url()).toBe(`${e.url}/backoffice/alerts/${quick.id}`);

    // The person's page lists them too.
    await page.goto(`${e.url}/backoffice/customers/${cpfHash(p.cpf, PII_KEY)}`);
    const onCustomer = page.getByRole('region', { name: t.personAlerts.heading });
    expect(await onCustomer.locator('li[data-alert]').count()).toBe(PAYOUT_RULES.length);
    expect(await onCustomer.getByRole('link', { name: pt.alertRule('new_account') }).count()).toBe(1);
    await drawnAtBothWidths(page, 'customer-alerts');

    // In English for an operator who reads it.
    const english = await signedIn(ENGLISH, en);
    await english.goto(`${e.url}/backoffice/flows/${workflowId}`);
    const inEnglish = english.getByRole('region', { name: en.personAlerts.heading });
    expect(await inEnglish.locator('li[data-alert]').count()).toBe(PAYOUT_RULES.length);
    const englishText = await inEnglish.textContent();
    expect(englishText).toContain(labelsFor('en').alertRule('quick_in_out'));
    expect(englishText).toContain(en.personAlerts.thisPayout);

    // Two approvals send it; it completes; the monitor reads its completion.
    await decide(page, workflowId, 'approve', 'prize confirmed');
    await decide(await signedIn(SECOND), workflowId, 'approve');
    await eventually(
      () => statusOf(`/v1/withdrawals/${transactionId}`),
      (s) => s === 'completed',
      { timeoutMs: 30_000 },
    );
    await monitorCaughtUp(workflowId);
    // Another pass of its own, as a second API process would make.
    await e.alertMonitor?.runOnce();

    expect(await alertsOf(p)).toEqual(before);
    const raised = await e.pool.query(
      `SELECT count(*)::int AS n FROM events WHERE type = 'alert.raised' AND stream_id = ANY($1)`,
      [before.map((a) => a.id)],
    );
    expect(raised.rows[0].n).toBe(PAYOUT_RULES.length);
    for (const rule of PAYOUT_RULES)
      expect(await counterValue(e, 'pixflow_alerts_raised_total', { rule }), rule).toBe(1);
  }, 180_000);

  it('a payout refused by its approvers before the monitor read it raises nothing', async () => {
    await e.alertMonitor?.stop();
    const p = newPerson();
    await onboard(await peopleAt(e), p);
    await deposit(p, 30_000);
    const { transactionId, workflowId } = await largePayout(p, 25_000);
    await decide(await signedIn(APPROVER), workflowId, 'refuse', 'not the prize won');
    await eventually(
      () => statusOf(`/v1/withdrawals/${transactionId}`),
      (s) => s === 'refused',
    );
    const restarted = startAlertMonitor({
      pool: e.pool,
      log: createLogger('alerts-on-payout-test', 'silent'),
      settings: alertMonitorSettings(loadConfig(ALERT_ENV)),
      policy: e.policy,
    });
    try {
      await monitorCaughtUp(workflowId);
      expect(await alertsOf(p)).toEqual([]);
    } finally {
      await restarted.stop();
    }
  }, 120_000);
});
