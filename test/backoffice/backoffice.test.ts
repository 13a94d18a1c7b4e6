import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueTitles as queueTitleOf } from '../../backoffice/queues';
import { hashPassword } from '../../common/passwords';
import { depositWorkflowId } from '../../contracts/deposit';
import { livenessProgressSignal } from '../../contracts/onboarding';
import { saveOperator } from '../../db/operators';
import { type ApiEnv, eventually, freshCpf, json, onboardApproved, startApiEnv } from '../api/support';
import { launchChromium } from '../helpers/browser';
import { newCpf, STEP_UP_ABOVE_CENTAVOS } from '../helpers/people';

// The back office in Debian's Chromium against the real stack (Temporal, Postgres, the sandbox
// over HTTP, a worker): operators sign in, work the queues, decide cases through the flows' own
// signal and update, and every action lands in the audit trail. Screenshots go to
// BACKOFFICE_SCREENSHOTS (docs/backoffice with `npm run screenshots`).

const SHOTS = process.env.BACKOFFICE_SCREENSHOTS ?? path.join(os.tmpdir(), 'pixflow-backoffice-shots');
const PASSWORD = 'correct horse battery staple';
const people = {
  reviewer: 'rita.reviewer@example.com',
  second: 'sam.reviewer@example.com',
  viewer: 'vera.viewer@example.com',
  admin: 'ada.admin@example.com',
} as const;

let e: ApiEnv;
let browser: Browser;
const contexts: BrowserContext[] = [];
const pageProblems: string[] = [];

async function signedInPage(email: string, width = 1280): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width, height: 900 },
    timezoneId: 'America/Sao_Paulo',
  });
  contexts.push(context);
  const page = await context.newPage();
  page.on('pageerror', (err) => pageProblems.push(String(err)));
  page.on('console', (m) => {
    if (m.type() === 'error') pageProblems.push(m.text());
  });
  await page.goto(`${e.url}/backoffice`);
  await expect.poll(() => page.url()).toContain('/backoffice/sign-in');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page
    .getByRole('heading', { name: 'Queues', level: 1 })
    .waitFor({ timeout: 10_000 })
    .catch(async (err) => {
      throw new Error(`${email} did not reach the queues: ${await page.locator('main').textContent()}`, {
        cause: err,
      });
    });
  return page;
}

const shot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

/** An onboarding the liveness check sent to a person. */
async function awaitingReview(): Promise<{ cpf: string; workflowId: string }> {
  const cpf = freshCpf();
  const res = await e.call('POST', '/v1/onboardings', {
    body: { cpf, plan: 'plan_basic', event: 'onboarding' },
  });
  const { workflowId } = await json<{ workflowId: string }>(res);
  const stateOf = async () =>
    (await json<{ state: { status: string } }>(await e.call('GET', `/v1/onboardings/${cpf}`))).state;
  await eventually(stateOf, (s) => s.status === 'awaiting_liveness');
  await e.temporal.workflow
    .getHandle(workflowId)
    .signal(livenessProgressSignal, { statusVerification: 'manual_approve_pending' });
  await eventually(stateOf, (s) => s.status === 'awaiting_review');
  return { cpf, workflowId };
}

/** A deposit of a verified person, paid by someone else: held for an operator. */
async function heldDeposit(): Promise<{ txid: string; cpf: string }> {
  const cpf = freshCpf();
  await onboardApproved(e, cpf);
  const res = await e.call('POST', '/v1/deposits', {
    body: {
      client: { externalId: `bo-${cpf}`, cpf, email: 'ana@example.com', name: 'Ana Souza' },
      amountCentavos: 123_456,
    },
  });
  const { txid } = await json<{ txid: string }>(res);
  await e.sandboxControl(`/sandbox/deposits/${txid}/pay`, { payerCpf: newCpf() });
  await eventually(
    async () =>
      (await json<{ state: { status: string } }>(await e.call('GET', `/v1/deposits/${txid}`))).state.status,
    (s) => s === 'held',
  );
  return { txid, cpf };
}

/** A payout of `amountCentavos` to the person's own CPF key; its state once `until` holds. */
async function withdrawal(cpf: string, amountCentavos: number, until: (status: string) => boolean) {
  const transactionId = `bo-${randomBytes(6).toString('hex')}`;
  const res = await e.call('POST', '/v1/withdrawals', {
    body: {
      transactionId,
      client: { externalId: `bo-${cpf}`, cpf, email: 'ana@example.com', name: 'Ana Souza' },
      pixKey: cpf,
      pixType: 'CPF',
      amountCentavos,
    },
  });
  expect(res.status).toBe(202);
  await eventually(
    async () =>
      (await json<{ state: { status: string } }>(await e.call('GET', `/v1/withdrawals/${transactionId}`)))
        .state.status,
    until,
  );
  return transactionId;
}

const onboardingStatus = async (cpf: string) =>
  (
    await json<{ state: { status: string; review?: { by: string; reason: string } } }>(
      await e.call('GET', `/v1/onboardings/${cpf}`),
    )
  ).state;

async function decide(page: Page, workflowId: string, choice: RegExp, reason: string) {
  await page.goto(`${e.url}/backoffice/flows/${encodeURIComponent(workflowId)}`);
  await page.getByRole('radio', { name: choice }).check();
  await page.getByLabel('Reason').fill(reason);
  await page.getByRole('button', { name: 'Record decision' }).click();
}

/** The form token of a signed-in page: what a same-origin form would send. */
const formTokenOf = (page: Page) => page.locator('input[name="_csrf"]').first().inputValue();

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  // A short payout deadline: a payout never settled is `stuck` within seconds.
  e = await startApiEnv({ withdrawalDeadlineMs: 6_000 }, { env: { BACKOFFICE_SIGNIN_ATTEMPTS: '6' } });
  await e.sandboxControl('/sandbox/notifications', { url: e.ingress, partnerId: e.partnerId });
  const hash = await hashPassword(PASSWORD);
  await saveOperator(e.pool, { email: people.reviewer, name: 'Rita', role: 'reviewer', passwordHash: hash });
  await saveOperator(e.pool, { email: people.second, name: 'Sam', role: 'reviewer', passwordHash: hash });
  await saveOperator(e.pool, { email: people.viewer, name: 'Vera', role: 'viewer', passwordHash: hash });
  await saveOperator(e.pool, {
    email: people.admin,
    name: 'Ada',
    role: 'admin',
    passwordHash: hash,
    timeZone: 'Europe/Lisbon',
  });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  await e?.close();
});

describe('the back office', () => {
  it('signs in: a wrong password is refused with the same words as an unknown address; the cookie is HttpOnly and SameSite', async () => {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${e.url}/backoffice/sign-in`);
    await shot(page, 'sign-in');
    await page.getByLabel('Email').fill(people.reviewer);
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Wrong email or password.');
    await page.getByLabel('Email').fill('nobody@example.com');
    await page.getByLabel('Password').fill('not the password at all');
    const answer = page.waitForResponse(
      (r) => r.url().endsWith('/backoffice/sign-in') && r.request().method() === 'POST',
    );
    await page.getByRole('button', { name: 'Sign in' }).click();
    expect((await answer).status()).toBe(401);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Wrong email or password.');

    // A page asked for while signed out is where the sign-in leads; another site never is.
    await page.goto(`${e.url}/backoffice/audit`);
    await expect.poll(() => page.url()).toContain('/backoffice/sign-in?next=%2Fbackoffice%2Faudit');
    await page.getByLabel('Email').fill(people.viewer);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Audit trail', level: 1 }).waitFor();
    const signedOut = await browser.newContext();
    contexts.push(signedOut);
    const elsewhere = await signedOut.newPage();
    await elsewhere.goto(`${e.url}/backoffice/sign-in?next=${encodeURIComponent('//evil.example/x')}`);
    expect(await elsewhere.locator('input[name="next"]').inputValue()).toBe('/backoffice');

    const ok = await signedInPage(people.reviewer);
    const cookie = (await ok.context().cookies()).find((c) => c.name === 'pixflow_bo');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/backoffice' });
    // Plain http on loopback here; anywhere else the cookie is Secure (config test below).
    expect(cookie?.secure).toBe(false);

    // Signing out ends the session: its pages ask to sign in again.
    await ok.getByRole('button', { name: /Sign out/ }).click();
    await ok.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await ok.goto(`${e.url}/backoffice/audit`);
    await expect.poll(() => ok.url()).toContain('/backoffice/sign-in');
  }, 60_000);

  it('a reviewer approves an onboarding awaiting review, found through its queue, and the API reports it approved', async () => {
    const { cpf, workflowId } = await awaitingReview();
    const page = await signedInPage(people.reviewer);
    const row = page.getByRole('row', { name: /Onboardings awaiting review/ });
    expect(Number(await row.getByRole('cell').first().textContent())).toBeGreaterThanOrEqual(1);
    await shot(page, 'queues');
    await page.getByRole('link', { name: 'Onboardings awaiting review' }).click();
    // The CPF filter narrows the table in place (htmx) and keeps the URL.
    await page.getByLabel('CPF').fill(cpf);
    await page.getByLabel('CPF').press('Enter');
    await expect.poll(() => page.url()).toContain(`cpf=${cpf}`);
    await expect.poll(() => page.locator('#queue-items tbody tr').count()).toBe(1);
    await shot(page, 'queue-onboardings');
    await page.locator('#queue-items tbody tr a').first().click();
    await page.getByRole('heading', { name: 'Decision' }).waitFor();
    expect(await page.locator('dl.facts').textContent()).toContain('PEP');
    expect(await page.getByRole('link', { name: /in the Temporal UI/ }).getAttribute('href')).toMatch(
      new RegExp(`/namespaces/default/workflows/${workflowId}$`),
    );
    await shot(page, 'case-onboarding');
    await decide(page, workflowId, /^Approve/, 'documents checked against the registry photo');
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Recorded: approved');
    expect(await onboardingStatus(cpf)).toMatchObject({
      status: 'approved',
      review: { by: people.reviewer, reason: 'documents checked against the registry photo' },
    });
    // Its timeline shows what happened, its audit trail who decided.
    expect(await page.locator('ol.timeline').textContent()).toContain('onboarding.approved');
    expect(await page.locator('table.audit').textContent()).toContain('onboarding.approve');
  }, 120_000);

  it('refuses another with a reason', async () => {
    const { cpf, workflowId } = await awaitingReview();
    const page = await signedInPage(people.reviewer);
    await decide(page, workflowId, /^Refuse/, 'selfie does not match the document');
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Recorded: refused');
    expect(await onboardingStatus(cpf)).toMatchObject({
      status: 'rejected',
      review: { decision: 'refuse', reason: 'selfie does not match the document' },
    });
  }, 120_000);

  it('accepts a held deposit: credited, in R$; the customer page shows the person, their flows and limits', async () => {
    const { txid, cpf } = await heldDeposit();
    const page = await signedInPage(people.reviewer);
    await page.getByRole('link', { name: 'Deposits held for a third-party payer' }).click();
    expect(await page.locator('#queue-items').textContent()).toContain('R$');
    await shot(page, 'queue-held-deposits');
    await page.goto(`${e.url}/backoffice/flows/${depositWorkflowId(txid)}`);
    expect(await page.locator('dl.facts').textContent()).toMatch(/R\$\s1\.234,56/);
    await shot(page, 'case-deposit');
    await decide(
      page,
      depositWorkflowId(txid),
      /^Accept/,
      'payer is the customer’s spouse, confirmed by phone',
    );
    await expect.poll(() => page.getByRole('status').textContent()).toContain('The deposit is completed');
    const state = (
      await json<{ state: { status: string; resolution?: { by: string } } }>(
        await e.call('GET', `/v1/deposits/${txid}`),
      )
    ).state;
    expect(state).toMatchObject({ status: 'completed', resolution: { by: people.reviewer } });

    // The deposit limits the person set show beside the payout limit.
    expect(
      (await e.call('PUT', `/v1/customers/${cpf}/deposit-limits`, { body: { daily: 500_000 } })).status,
    ).toBe(200);
    await page
      .getByRole('link', { name: /\*\*\*\./ })
      .first()
      .click();
    await page.getByRole('heading', { name: 'Registered accounts' }).waitFor();
    const text = (await page.locator('main').textContent()) ?? '';
    expect(text).toContain('approved');
    expect(text).toContain('Daily limit');
    expect(text).toMatch(
      /Deposit limits the person set\s*daily\s*R\$\s5\.000,00, R\$\s[\d.,]+ left\s*weekly\s*none/,
    );
    expect(text).toContain(txid.slice(-6));
    // A reviewer sees the CPF masked; an admin sees it whole.
    expect(text).not.toContain(cpf);
    await shot(page, 'customer');
    const admin = await signedInPage(people.admin);
    await admin.goto(page.url());
    expect(await admin.locator('h1').textContent()).toContain(cpf);
    // The admin's times are in the admin's own zone.
    expect(await admin.locator('main').textContent()).toMatch(/WET|WEST|GMT/);
  }, 180_000);

  it('the withdrawal queues: awaiting biometrics, failed (filtered by type), and reconciliation gave up', async () => {
    const cpf = freshCpf();
    await onboardApproved(e, cpf);
    const big = await withdrawal(cpf, STEP_UP_ABOVE_CENTAVOS + 1, (s) => s === 'awaiting_biometrics');
    // Only once it is processing has the payout reached the provider, where it can be failed.
    const failing = await withdrawal(cpf, 10_000, (s) => s === 'processing');
    await e.sandboxControl(`/sandbox/withdrawals/${failing}/fail`, { reason: 'conta encerrada' });
    const stuck = await withdrawal(cpf, 20_000, (s) => s === 'stuck');
    await eventually(
      async () =>
        (await json<{ state: { status: string } }>(await e.call('GET', `/v1/withdrawals/${failing}`))).state
          .status,
      (s) => s === 'failed',
    );
    const page = await signedInPage(people.viewer);
    for (const [queue, id, text] of [
      ['withdrawals-awaiting-biometrics', big, 'R$ 5.000,01'],
      ['failed', failing, 'R$ 100,00'],
      ['reconciliation-gave-up', stuck, 'R$ 200,00'],
    ] as const) {
      const row = page.getByRole('row', { name: new RegExp(queueTitleOf[queue]) });
      expect(Number(await row.getByRole('cell').first().textContent()), queue).toBeGreaterThanOrEqual(1);
      await page.goto(`${e.url}/backoffice/queues/${queue}?cpf=${cpf}`);
      const items = (await page.locator('#queue-items').textContent()) ?? '';
      expect(items.replace(/\s/g, ' '), queue).toContain(text);
      expect(await page.locator(`#queue-items a[href*="${id}"]`).count(), queue).toBe(1);
      await page.goto(`${e.url}/backoffice`);
    }
    // The failed queue mixes deposits and withdrawals: choosing a type narrows it in place.
    await page.goto(`${e.url}/backoffice/queues/failed?cpf=${cpf}`);
    await page.getByLabel('Type').selectOption('deposit');
    await expect.poll(() => page.url()).toContain('type=deposit');
    await expect.poll(() => page.locator('#queue-items').textContent()).toContain('Nothing waits here.');
    await page.getByLabel('Type').selectOption('withdrawal');
    await expect.poll(() => page.locator(`#queue-items a[href*="${failing}"]`).count()).toBe(1);
  }, 120_000);

  it("a viewer's approve is refused (403) and changes nothing", async () => {
    const { cpf, workflowId } = await awaitingReview();
    const page = await signedInPage(people.viewer);
    await page.goto(`${e.url}/backoffice/flows/${workflowId}`);
    expect(await page.getByRole('button', { name: 'Record decision' }).count()).toBe(0);
    expect(await page.locator('main').textContent()).toContain('may look at this case but not decide it');
    const res = await page.request.post(`${e.url}/backoffice/flows/${workflowId}/review`, {
      form: { _csrf: await formTokenOf(page), decision: 'approve', reason: 'I should not be able to' },
    });
    expect(res.status()).toBe(403);
    expect(await res.text()).toContain('may look at cases but not decide them');
    expect((await onboardingStatus(cpf)).status).toBe('awaiting_review');
  }, 120_000);

  it('posts without the form token, or with another session’s, are refused and change nothing', async () => {
    const { cpf, workflowId } = await awaitingReview();
    const page = await signedInPage(people.reviewer);
    const other = await signedInPage(people.second);
    const url = `${e.url}/backoffice/flows/${workflowId}/review`;
    const none = await page.request.post(url, { form: { decision: 'approve', reason: 'no token' } });
    expect(none.status()).toBe(403);
    expect(await none.text()).toContain('Reload the page and try again');
    const foreign = await page.request.post(url, {
      form: { _csrf: await formTokenOf(other), decision: 'approve', reason: 'token of someone else' },
    });
    expect(foreign.status()).toBe(403);
    expect((await onboardingStatus(cpf)).status).toBe('awaiting_review');
  }, 120_000);

  it('a decision on a case someone else just decided answers clearly; bad input is named; nothing changes', async () => {
    const { cpf, workflowId } = await awaitingReview();
    const first = await signedInPage(people.reviewer);
    const second = await signedInPage(people.second);
    // Both have the case open; the second one decides last.
    await second.goto(`${e.url}/backoffice/flows/${workflowId}`);
    await decide(first, workflowId, /^Approve/, 'all good');
    await second.getByRole('radio', { name: /^Refuse/ }).check();
    await second.getByLabel('Reason').fill('too late');
    await second.getByRole('button', { name: 'Record decision' }).click();
    await second.getByRole('heading', { name: 'Already decided' }).waitFor();
    expect(await second.locator('main').textContent()).toContain(`approve by ${people.reviewer}`);
    expect(await onboardingStatus(cpf)).toMatchObject({
      status: 'approved',
      review: { by: people.reviewer },
    });
    await shot(second, 'already-decided');

    const token = await formTokenOf(first);
    const bad = await first.request.post(`${e.url}/backoffice/flows/${workflowId}/review`, {
      form: { _csrf: token, decision: 'maybe', reason: '' },
    });
    expect(bad.status()).toBe(400);
    const badText = await bad.text();
    expect(badText).toContain('decision');
    expect(badText).toContain('reason');
    const unknown = await first.request.post(`${e.url}/backoffice/flows/onboarding-nope/review`, {
      form: { _csrf: token, decision: 'approve', reason: 'x' },
    });
    expect(unknown.status()).toBe(404);
    expect((await first.goto(`${e.url}/backoffice/flows/no-such-flow`))?.status()).toBe(404);
    expect((await first.goto(`${e.url}/backoffice/queues/no-such-queue`))?.status()).toBe(404);
    expect((await first.goto(`${e.url}/backoffice/queues/failed?since=2026-02-31`))?.status()).toBe(400);
    expect(await first.locator('main').textContent()).toContain('is not a calendar day');
  }, 120_000);

  it('the audit trail lists each action, who, before and after, and exports as CSV', async () => {
    const page = await signedInPage(people.admin);
    await page.getByRole('link', { name: 'Audit trail' }).click();
    const table = (await page.locator('table.audit').textContent()) ?? '';
    for (const action of [
      'onboarding.approve',
      'onboarding.refuse',
      'deposit.accept',
      'onboarding.review',
      'sign_in',
      'sign_out',
    ])
      expect(table, action).toContain(action);
    expect(table).toContain('awaiting_review → approved');
    expect(table).toContain('held → completed');
    expect(table).toContain('refused'); // the viewer's try
    expect(table).toContain('conflict'); // the late decision
    await shot(page, 'audit');
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Export all as CSV' }).click();
    const file = await (await download).path();
    const csv = (await import('node:fs')).readFileSync(file, 'utf8');
    expect(csv.split('\n')[0]).toBe(
      'id,at,operator,role,action,outcome,case_type,case_id,before,after,reason',
    );
    expect(csv).toContain('selfie does not match the document');
    expect(csv).toContain(people.viewer);
    // Append-only: the table refuses changes.
    await expect(e.pool.query('DELETE FROM operator_actions')).rejects.toThrow(/append-only/);
    await expect(e.pool.query("UPDATE operator_actions SET reason = 'edited'")).rejects.toThrow(
      /append-only/,
    );
  }, 60_000);

  it('reads at 390 px without sideways scrolling, and is reachable by keyboard', async () => {
    const { workflowId } = await awaitingReview();
    // Earlier cases load refusals (400, 403, 409) on purpose; these pages must load clean.
    pageProblems.length = 0;
    const page = await signedInPage(people.reviewer, 390);
    for (const where of [
      '/backoffice',
      '/backoffice/queues/onboardings-awaiting-review',
      `/backoffice/flows/${workflowId}`,
    ]) {
      await page.goto(`${e.url}${where}`);
      const overflow = await page.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
      expect(overflow, where).toBeLessThanOrEqual(0);
    }
    await shot(page, 'case-onboarding-390');
    // From the top: the skip link first, then on through the decision form by Tab alone.
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
    const reached = new Set<string>();
    for (let i = 0; i < 25; i++) {
      await page.keyboard.press('Tab');
      reached.add(
        String(await page.evaluate('document.activeElement.name || document.activeElement.textContent')),
      );
    }
    for (const name of ['decision', 'reason', 'Record decision']) expect([...reached]).toContain(name);
    // Every control has a label.
    const unlabelled = await page.evaluate(
      `[...document.querySelectorAll('input:not([type=hidden]), textarea, select')].filter((el) => !el.labels || el.labels.length === 0).length`,
    );
    expect(unlabelled).toBe(0);
    expect(pageProblems, pageProblems.join('\n')).toEqual([]);
  }, 120_000);

  it('sign-in attempts are rate-limited per address: past the limit even the right password waits', async () => {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${e.url}/backoffice/sign-in`);
    let status = 0;
    for (let i = 0; i < 8 && status !== 429; i++) {
      const token = await formTokenOf(page);
      const res = await page.request.post(`${e.url}/backoffice/sign-in`, {
        form: { _csrf: token, email: people.reviewer, password: 'wrong password again' },
      });
      status = res.status();
      await page.goto(`${e.url}/backoffice/sign-in`);
    }
    expect(status).toBe(429);
    const res = await page.request.post(`${e.url}/backoffice/sign-in`, {
      form: { _csrf: await formTokenOf(page), email: people.reviewer, password: PASSWORD },
    });
    expect(res.status()).toBe(429);
    expect(await res.text()).toContain('Too many sign-in attempts');
  }, 60_000);
});
