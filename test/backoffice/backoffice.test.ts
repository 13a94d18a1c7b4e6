import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { NativeConnection } from '@temporalio/worker';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { catalogs, labelsFor } from '../../backoffice/i18n';
import { maskCpf, maskName } from '../../common/mask';
import { hashPassword } from '../../common/passwords';
import { cpfHash } from '../../common/pii';
import { connectorRegistry } from '../../connectors/registry';
import { depositReturnWorkflowId, depositWorkflowId } from '../../contracts/deposit';
import { livenessProgressSignal } from '../../contracts/onboarding';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import { type QueueId, queueIds } from '../../db/backoffice-queues';
import { upsertFlowAndEvent } from '../../db/flows';
import { saveOperator } from '../../db/operators';
import {
  type ApiEnv,
  eventually,
  expectProblem,
  freshCpf,
  json,
  onboardApproved,
  PII_KEY,
  startApiEnv,
} from '../api/support';
import { startApiPixForTest } from '../helpers/api-pix';
import { drawnAtBothWidths, problemsOf, SHOTS } from '../helpers/backoffice-pages';
import { launchChromium } from '../helpers/browser';
import { apiPixConnectorOf, heldOnApiPix } from '../helpers/held-deposits';
import { newCpf, STEP_UP_ABOVE_CENTAVOS } from '../helpers/people';
import { createTestWorker } from '../helpers/worker';

// The back office in Debian's Chromium against the real stack (Temporal, Postgres, the sandbox
// over HTTP, a worker): operators sign in, work the queues, decide cases through the flows' own
// signal and update, find cases by their ids, read the audit trail through its filters and
// pages, and every action lands in it. Pages are in Brazilian Portuguese unless an operator
// chooses English; every page is drawn at 1280 and 390 px wide with nothing pushed sideways or
// cut, and no raw code, ISO date or month-first date input in sight. Screenshots of both widths
// go to BACKOFFICE_SCREENSHOTS (docs/backoffice with `npm run screenshots`).

const PASSWORD = 'correct horse battery staple';
const people = {
  reviewer: 'rita.reviewer@example.com',
  second: 'sam.reviewer@example.com',
  viewer: 'vera.viewer@example.com',
  admin: 'ada.admin@example.com',
  speaker: 'lia.language@example.com',
} as const;

const ELIGIBILITY_FRESH_MS = 500;
const t = catalogs['pt-BR'];
const pt = labelsFor('pt-BR');

let e: ApiEnv;
let browser: Browser;
const contexts: BrowserContext[] = [];
const pageProblems: string[] = [];
/** Cases the tests made, for the pages drawn at the end. */
const made: { heldTxid?: string; customer?: string; failedWithdrawal?: string; stuckWithdrawal?: string } =
  {};

async function newPage(width = 1280, locale = 'pt-BR'): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width, height: 900 },
    timezoneId: 'America/Sao_Paulo',
    locale,
  });
  contexts.push(context);
  const page = await context.newPage();
  page.on('pageerror', (err) => pageProblems.push(String(err)));
  page.on('console', (m) => {
    if (m.type() === 'error') pageProblems.push(m.text());
  });
  return page;
}

async function signedInPage(email: string, width = 1280, locale = 'pt-BR'): Promise<Page> {
  const page = await newPage(width, locale);
  await page.goto(`${e.url}/backoffice`);
  await expect.poll(() => page.url()).toContain('/backoffice/sign-in');
  const words = page.url() && (await page.locator('html').getAttribute('lang')) === 'en' ? catalogs.en : t;
  await page.getByLabel(words.signIn.email).fill(email);
  await page.getByLabel(words.signIn.password).fill(PASSWORD);
  await page.getByRole('button', { name: words.signIn.submit }).click();
  await page
    .getByRole('heading', { level: 1 })
    .filter({ hasText: new RegExp(`^(${t.home.title}|${catalogs.en.home.title})$`) })
    .waitFor({ timeout: 10_000 })
    .catch(async (err) => {
      throw new Error(`${email} did not reach the queues: ${await page.locator('main').textContent()}`, {
        cause: err,
      });
    });
  return page;
}

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
async function heldDeposit(): Promise<{ txid: string; cpf: string; payerCpf: string }> {
  const cpf = freshCpf();
  await onboardApproved(e, cpf);
  const res = await e.call('POST', '/v1/deposits', {
    body: {
      client: { externalId: `bo-${cpf}`, cpf, email: 'ana@example.com', name: 'Ana Souza' },
      amountCentavos: 123_456,
    },
  });
  const { txid } = await json<{ txid: string }>(res);
  // Someone else pays, the provider told only their CPF.
  const payerCpf = newCpf();
  await e.sandboxControl(`/sandbox/deposits/${txid}/pay`, { payerCpf });
  await eventually(
    async () =>
      (await json<{ state: { status: string } }>(await e.call('GET', `/v1/deposits/${txid}`))).state.status,
    (s) => s === 'held',
  );
  return { txid, cpf, payerCpf };
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
  await page.getByLabel(t.flow.reasonLabel).fill(reason);
  await page.getByRole('button', { name: t.flow.record }).click();
}

/** The form token of a signed-in page: what a same-origin form would send. */
const formTokenOf = (page: Page) => page.locator('input[name="_csrf"]').first().inputValue();

/** The audit rows on the page: id, action and outcome (their machine fields). */
const auditRows = (page: Page) =>
  page.evaluate(
    `[...document.querySelectorAll('table.audit tbody tr')].map((r) => ({ id: Number(r.dataset.id), action: r.dataset.action, outcome: r.dataset.outcome }))`,
  ) as Promise<Array<{ id: number; action: string; outcome: string }>>;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  // A short payout deadline: a payout never settled is `stuck` within seconds.
  // The sandbox's registry of impeded people screens deposits; its answers are reused briefly.
  e = await startApiEnv(
    { withdrawalDeadlineMs: 6_000 },
    {
      eligibility: true,
      env: { BACKOFFICE_SIGNIN_ATTEMPTS: '6', ELIGIBILITY_FRESH_MS: String(ELIGIBILITY_FRESH_MS) },
    },
  );
  await e.sandboxControl('/sandbox/notifications', { url: e.ingress, partnerId: e.partnerId });
  const hash = await hashPassword(PASSWORD);
  await saveOperator(e.pool, { email: people.reviewer, name: 'Rita', role: 'reviewer', passwordHash: hash });
  await saveOperator(e.pool, { email: people.second, name: 'Sam', role: 'reviewer', passwordHash: hash });
  await saveOperator(e.pool, { email: people.viewer, name: 'Vera', role: 'viewer', passwordHash: hash });
  await saveOperator(e.pool, { email: people.speaker, name: 'Lia', role: 'viewer', passwordHash: hash });
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
    const page = await newPage();
    await page.goto(`${e.url}/backoffice/sign-in`);
    expect(await page.locator('html').getAttribute('lang')).toBe('pt-BR');
    await drawnAtBothWidths(page, 'sign-in');
    await page.getByLabel(t.signIn.email).fill(people.reviewer);
    await page.getByLabel(t.signIn.password).fill('not the password at all');
    await page.getByRole('button', { name: t.signIn.submit }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain(t.signIn.wrong);
    await page.getByLabel(t.signIn.email).fill('nobody@example.com');
    await page.getByLabel(t.signIn.password).fill('not the password at all');
    const answer = page.waitForResponse(
      (r) => r.url().endsWith('/backoffice/sign-in') && r.request().method() === 'POST',
    );
    await page.getByRole('button', { name: t.signIn.submit }).click();
    expect((await answer).status()).toBe(401);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain(t.signIn.wrong);

    // A page asked for while signed out is where the sign-in leads; another site never is.
    await page.goto(`${e.url}/backoffice/audit`);
    await expect.poll(() => page.url()).toContain('/backoffice/sign-in?next=%2Fbackoffice%2Faudit');
    await page.getByLabel(t.signIn.email).fill(people.viewer);
    await page.getByLabel(t.signIn.password).fill(PASSWORD);
    await page.getByRole('button', { name: t.signIn.submit }).click();
    await page.getByRole('heading', { name: t.audit.title, level: 1 }).waitFor();
    const elsewhere = await newPage();
    await elsewhere.goto(`${e.url}/backoffice/sign-in?next=${encodeURIComponent('//evil.example/x')}`);
    expect(await elsewhere.locator('main input[name="next"]').inputValue()).toBe('/backoffice');

    const ok = await signedInPage(people.reviewer);
    const cookie = (await ok.context().cookies()).find((c) => c.name === 'pixflow_bo');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/backoffice' });
    // Plain http on loopback here; anywhere else the cookie is Secure (config test below).
    expect(cookie?.secure).toBe(false);

    // Signing out ends the session: its pages ask to sign in again.
    await ok.getByRole('button', { name: new RegExp(t.signOut) }).click();
    await ok.getByRole('heading', { name: t.signIn.title, level: 1 }).waitFor();
    await ok.goto(`${e.url}/backoffice/audit`);
    await expect.poll(() => ok.url()).toContain('/backoffice/sign-in');
  }, 60_000);

  it('speaks Portuguese by default and English to an operator who chooses it, wherever they sign in', async () => {
    // Before signing in the browser's language chooses; English asked for, English answered.
    const english = await newPage(1280, 'en-US');
    await english.goto(`${e.url}/backoffice/sign-in`);
    expect(await english.locator('html').getAttribute('lang')).toBe('en');
    await english.getByRole('heading', { name: catalogs.en.signIn.title, level: 1 }).waitFor();
    // Once signed in, the operator's own language: Brazilian Portuguese until they choose.
    const page = await signedInPage(people.speaker, 1280, 'en-US');
    expect(await page.locator('html').getAttribute('lang')).toBe('pt-BR');
    await page.getByRole('heading', { name: t.home.title, level: 1 }).waitFor();
    await page.goto(`${e.url}/backoffice/audit`);
    await page.getByRole('button', { name: 'English' }).click();
    // The switch comes back to the same page, in English, still signed in.
    await page.getByRole('heading', { name: catalogs.en.audit.title, level: 1 }).waitFor();
    expect(page.url()).toMatch(/\/backoffice\/audit$/);
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    const { rows } = await e.pool.query('SELECT language FROM operators WHERE email = $1', [people.speaker]);
    expect(rows[0]?.language).toBe('en');
    // Kept with the operator: another browser, asking for Portuguese, gets English once they sign in.
    const elsewhere = await signedInPage(people.speaker, 1280, 'pt-BR');
    expect(await elsewhere.locator('html').getAttribute('lang')).toBe('en');
    expect(await elsewhere.locator('main').textContent()).toContain(catalogs.en.labels.queue.failed.title);
    await elsewhere.getByRole('button', { name: 'Português' }).click();
    await elsewhere.getByRole('heading', { name: t.home.title, level: 1 }).waitFor();
    // A language that is not one is refused, named, and changes nothing.
    const bad = await elsewhere.request.post(`${e.url}/backoffice/language`, {
      form: { _csrf: await formTokenOf(elsewhere), language: 'fr', next: '/backoffice' },
    });
    expect(bad.status()).toBe(400);
    expect(await bad.text()).toContain('data-field="language"');
    const after = await e.pool.query('SELECT language FROM operators WHERE email = $1', [people.speaker]);
    expect(after.rows[0]?.language).toBe('pt-BR');
  }, 60_000);

  it('a reviewer approves an onboarding awaiting review, found through its queue, and the API reports it approved', async () => {
    const { cpf, workflowId } = await awaitingReview();
    const page = await signedInPage(people.reviewer);
    const row = page.locator('tr[data-queue="onboardings-awaiting-review"]');
    expect(Number(await row.getByRole('cell').first().textContent())).toBeGreaterThanOrEqual(1);
    await drawnAtBothWidths(page, 'queues');
    await page.getByRole('link', { name: pt.queueTitle('onboardings-awaiting-review') }).click();
    // The CPF filter narrows the table in place (htmx) and keeps the URL.
    await page.getByLabel(t.queue.cpf).fill(cpf);
    await page.getByLabel(t.queue.cpf).press('Enter');
    await expect.poll(() => page.url()).toContain(`cpf=${cpf}`);
    await expect.poll(() => page.locator('#queue-items tbody tr').count()).toBe(1);
    // Days are typed day first, whatever the browser's locale.
    expect(await page.getByLabel(t.queue.since).getAttribute('placeholder')).toBe('dd/mm/aaaa');
    await drawnAtBothWidths(page, 'queue-onboardings');
    await page.locator('#queue-items tbody tr a').first().click();
    await page.getByRole('heading', { name: t.flow.decision }).waitFor();
    const facts = (await page.locator('dl.facts').textContent()) ?? '';
    expect(facts).toContain(t.flow.pep);
    expect(facts).toContain(pt.liveness('manual_approve_pending'));
    expect(await page.locator('.status').textContent()).toBe(pt.status('onboarding', 'awaiting_review'));
    expect(await page.getByRole('link', { name: /na Temporal UI/ }).getAttribute('href')).toMatch(
      new RegExp(`/namespaces/default/workflows/${workflowId}$`),
    );
    await drawnAtBothWidths(page, 'case-onboarding');
    await decide(page, workflowId, /^Aprovar/, 'documents checked against the registry photo');
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Registrado: aprovado');
    expect(await onboardingStatus(cpf)).toMatchObject({
      status: 'approved',
      review: { by: people.reviewer, reason: 'documents checked against the registry photo' },
    });
    // Its timeline shows what happened, its audit trail who decided: in words, codes kept as data.
    const approved = page.locator('ol.timeline li[data-event="onboarding.approved"]');
    expect(await approved.textContent()).toContain(pt.event('onboarding.approved'));
    const audited = page.locator('table.audit tr[data-action="onboarding.approve"]');
    expect(await audited.textContent()).toContain(pt.action('onboarding.approve'));
    expect(await audited.textContent()).toContain(
      `${pt.status('onboarding', 'awaiting_review')} → ${pt.status('onboarding', 'approved')}`,
    );
    expect(await problemsOf(page)).toEqual([]);
  }, 120_000);

  it('refuses another with a reason', async () => {
    const { cpf, workflowId } = await awaitingReview();
    const page = await signedInPage(people.reviewer);
    await decide(page, workflowId, /^Recusar/, 'selfie does not match the document');
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Registrado: recusado');
    expect(await onboardingStatus(cpf)).toMatchObject({
      status: 'rejected',
      review: { decision: 'refuse', reason: 'selfie does not match the document' },
    });
    // Its reasons in words: the review's.
    expect(await page.locator('dl.facts').textContent()).toContain(pt.reason('review_refused'));
  }, 120_000);

  it('returns a held deposit through the API Pix PSP that received it: the case shows the return, its ids, amount and who decided', async () => {
    const psp = await startApiPixForTest({ returnSettleMs: 200 });
    const apiPix = apiPixConnectorOf(psp);
    const taskQueue = `${e.taskQueue}-api-pix`;
    const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
    const worker = await createTestWorker({
      connection,
      client: e.temporal,
      taskQueue,
      provider: e.provider,
      collectors: connectorRegistry([e.provider, apiPix]),
      pool: e.pool,
      piiKey: PII_KEY,
    });
    const running = worker.run();
    try {
      const cpf = freshCpf();
      const txid = `${Date.now()}${randomBytes(2).readUInt16BE()}`;
      const { handle } = await heldOnApiPix({
        client: e.temporal,
        psp,
        apiPix,
        taskQueue,
        input: {
          txid,
          merchant: 'sandbox-merchant',
          client: { externalId: `bo-${cpf}`, cpf, email: 'ana@example.com', name: 'Ana Souza' },
          amountCentavos: 123_456,
        },
        payerCpf: newCpf(),
      });
      const page = await signedInPage(people.reviewer);
      await page.goto(`${e.url}/backoffice/flows/${handle.workflowId}`);
      // `return` says where the money goes: back through the connector that received it.
      await decide(
        page,
        handle.workflowId,
        /^Devolver: mandar o dinheiro de volta ao pagador pelo conector api-pix/,
        'payer unknown to the person',
      );
      await expect.poll(() => page.getByRole('status').textContent()).toContain('Registrado: a devolver');
      await handle.result();
      await page.reload();
      expect(await page.locator('.status').textContent()).toBe(pt.status('deposit', 'returned'));
      const fact = async (term: string) =>
        (
          await page
            .locator('dl.facts dt', { hasText: term })
            .first()
            .locator('xpath=following-sibling::dd[1]')
            .textContent()
        )?.trim();
      const { state } = await json<{ state: { return: { returnId: string; rtrId: string } } }>(
        await e.call('GET', `/v1/deposits/${txid}`),
      );
      expect(await fact(t.flow.connector)).toBe('api-pix');
      expect(await fact(t.flow.return)).toMatch(/^devolvida em \d{2}\/\d{2}\/\d{4}/);
      expect(await fact(t.flow.returnId)).toBe(state.return.returnId);
      expect(await fact(t.flow.rtrId)).toBe(state.return.rtrId);
      expect(await fact(t.flow.returnAmount)).toMatch(/R\$\s1\.234,56/);
      expect(await fact(t.flow.returnBy)).toBe(people.reviewer);
      await drawnAtBothWidths(page);
      expect((await auditRows(page)).map((r) => `${r.action}:${r.outcome}`)).toContain('deposit.return:done');
    } finally {
      worker.shutdown();
      await running;
      await connection.close();
      apiPix.close();
      await psp.close();
    }
  }, 120_000);

  it('accepts a held deposit: credited, in R$; the customer page shows the person, their flows and limits', async () => {
    const { txid, cpf, payerCpf } = await heldDeposit();
    made.heldTxid = txid;
    const page = await signedInPage(people.reviewer);
    await page.getByRole('link', { name: pt.queueTitle('deposits-held') }).click();
    const items = (await page.locator('#queue-items').textContent()) ?? '';
    expect(items).toContain('R$');
    expect(items).toContain(pt.reason('third_party_payer'));
    await drawnAtBothWidths(page, 'queue-held-deposits');
    await page.goto(`${e.url}/backoffice/flows/${depositWorkflowId(txid)}`);
    const facts = (await page.locator('dl.facts').textContent()) ?? '';
    expect(facts).toMatch(/R\$\s1\.234,56/);
    expect(facts).toContain(pt.reason('third_party_payer'));
    // The payer as known: their masked CPF, never the customer's own initials.
    const paidBy = page
      .locator('dl.facts dt', { hasText: t.flow.paidBy })
      .locator('xpath=following-sibling::dd[1]');
    expect((await paidBy.textContent())?.trim()).toBe(maskCpf(payerCpf));
    expect(facts).not.toContain(maskName('Ana Souza'));
    expect(await page.locator('.status').textContent()).toBe('Retido');
    // The rules' version that held it, as text to a reviewer (the policy page is an admin's).
    const held = page.locator('dl.facts dt', { hasText: t.flow.policyUnder.held });
    expect(await held.locator('xpath=following-sibling::dd[1]').textContent()).toBe(t.flow.policyVersion(1));
    await drawnAtBothWidths(page, 'case-deposit');
    // The first provider returns no received Pix: `return` says the money is left to be returned by hand.
    await expect
      .poll(() => page.getByRole('radio', { name: t.flow.returnChoiceByHand('identity-payments') }).count())
      .toBe(1);
    await decide(
      page,
      depositWorkflowId(txid),
      /^Aceitar/,
      'payer is the customer’s spouse, confirmed by phone',
    );
    await expect.poll(() => page.getByRole('status').textContent()).toContain('O depósito está concluído');
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
    await page.getByRole('heading', { name: t.customer.accounts }).waitFor();
    made.customer = page.url();
    const text = (await page.locator('main').textContent()) ?? '';
    expect(text).toContain(pt.verification('approved'));
    expect(text).toContain(t.customer.dailyLimit);
    expect(text).toMatch(
      /Limites de depósito definidos pela pessoa\s*Diário\s*R\$\s5\.000,00, R\$\s[\d.,]+ disponível\s*Semanal\s*sem limite/,
    );
    expect(text).toContain(txid.slice(-6));
    // Today as pt-BR writes it, as every other date on the page.
    expect(text).toMatch(/Saques de hoje, \d{2}\/\d{2}\/\d{4}/);
    // A reviewer sees the CPF masked; an admin sees it whole.
    expect(text).not.toContain(cpf);
    await drawnAtBothWidths(page, 'customer');
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
    made.failedWithdrawal = failing;
    made.stuckWithdrawal = stuck;
    const page = await signedInPage(people.viewer);
    for (const [queue, id, text] of [
      ['withdrawals-awaiting-biometrics', big, 'R$ 5.000,01'],
      ['failed', failing, 'R$ 100,00'],
      ['reconciliation-gave-up', stuck, 'R$ 200,00'],
    ] as const) {
      const row = page.locator(`tr[data-queue="${queue}"]`);
      expect(Number(await row.getByRole('cell').first().textContent()), queue).toBeGreaterThanOrEqual(1);
      await page.goto(`${e.url}/backoffice/queues/${queue}?cpf=${cpf}`);
      const items = (await page.locator('#queue-items').textContent()) ?? '';
      expect(items.replace(/\s/g, ' '), queue).toContain(text);
      expect(await page.locator(`#queue-items a[href*="${id}"]`).count(), queue).toBe(1);
      await drawnAtBothWidths(page, `queue-${queue}`);
      await page.goto(`${e.url}/backoffice`);
    }
    // The failed queue mixes deposits and withdrawals: choosing a type narrows it in place.
    await page.goto(`${e.url}/backoffice/queues/failed?cpf=${cpf}`);
    await page.getByLabel(t.queue.type).selectOption('deposit');
    await expect.poll(() => page.url()).toContain('type=deposit');
    await expect.poll(() => page.locator('#queue-items').textContent()).toContain(t.queue.empty);
    await page.getByLabel(t.queue.type).selectOption('withdrawal');
    await expect.poll(() => page.locator(`#queue-items a[href*="${failing}"]`).count()).toBe(1);
    // The stuck payout's page says why in words.
    await page.goto(`${e.url}/backoffice/flows/${withdrawalWorkflowId(stuck)}`);
    expect(await page.locator('dl.facts').textContent()).toContain(
      pt.reason('no_final_outcome_before_deadline'),
    );
  }, 120_000);

  it("a payout's page: the person's alerts under their own heading, not the decision's; its stored receipt linked", async () => {
    const cpf = freshCpf();
    await onboardApproved(e, cpf);
    const paid = await withdrawal(cpf, 10_000, (s) => s === 'processing');
    await e.sandboxControl(`/sandbox/withdrawals/${paid}/settle`);
    await eventually(
      async () =>
        (await json<{ state: { status: string } }>(await e.call('GET', `/v1/withdrawals/${paid}`))).state
          .status,
      (s) => s === 'completed',
    );
    const page = await signedInPage(people.viewer);
    await page.goto(`${e.url}/backoffice/flows/${withdrawalWorkflowId(paid)}`);
    const alerts = page.getByRole('region', { name: t.personAlerts.heading });
    expect(await alerts.getByRole('heading', { level: 2, name: t.personAlerts.heading }).count()).toBe(1);
    const decision = page.getByRole('region', { name: t.flow.decision });
    expect(await decision.getByRole('region', { name: t.personAlerts.heading }).count()).toBe(0);
    expect(await decision.textContent()).not.toContain(t.personAlerts.none);
    // The receipt the provider's payout left, as the API gives it to the backend.
    const link = page.locator('dl.facts a.receipt');
    expect(await link.textContent()).toContain(t.flow.receipt);
    const href = (await link.getAttribute('href')) ?? '';
    expect(href).toBe(`/backoffice/flows/${withdrawalWorkflowId(paid)}/receipt.png`);
    const image = await page.request.get(`${e.url}${href}`);
    expect(image.status()).toBe(200);
    expect(image.headers()['content-type']).toBe('image/png');
    const fromApi = await e.call('GET', `/v1/withdrawals/${paid}/receipt.png`);
    expect(Buffer.from(await image.body()).equals(Buffer.from(await fromApi.arrayBuffer()))).toBe(true);
    await drawnAtBothWidths(page, 'case-withdrawal-completed');
    // A payout that failed has no receipt, and no link to one; signed out, none is served.
    await page.goto(`${e.url}/backoffice/flows/${withdrawalWorkflowId(made.failedWithdrawal as string)}`);
    await page.getByRole('heading', { name: t.flow.facts }).waitFor();
    expect(await page.locator('a.receipt').count()).toBe(0);
    expect(
      (
        await page.request.get(
          `${e.url}/backoffice/flows/${withdrawalWorkflowId(made.failedWithdrawal as string)}/receipt.png`,
        )
      ).status(),
    ).toBe(404);
    const stranger = await newPage();
    const signedOut = await stranger.request.get(`${e.url}${href}`, { maxRedirects: 0 });
    expect(signedOut.status()).toBe(303);
  }, 120_000);

  it("at 390 and 1280 px: search boxes wide enough for an id, the audit's selects whole in the window, every CPF on one line", async () => {
    const page = await signedInPage(people.reviewer);
    const widthOf = (selector: string) =>
      page.locator(selector).evaluate((el) => el.getBoundingClientRect().width);
    const cpfLines = () =>
      page.evaluate(
        `[...document.querySelectorAll('main .cpf')].map((el) => ({ text: el.textContent, lines: el.getClientRects().length, wraps: getComputedStyle(el).whiteSpace }))`,
      ) as Promise<Array<{ text: string; lines: number; wraps: string }>>;
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${e.url}/backoffice`);
      for (const box of ['#find-case', '#find-cpf'])
        expect(await widthOf(box), `${box} at ${width}`).toBeGreaterThanOrEqual(200);
      await page.goto(`${e.url}/backoffice/search`);
      expect(await widthOf('#search-q'), `search at ${width}`).toBeGreaterThanOrEqual(200);
      await page.goto(`${e.url}/backoffice/queues/failed`);
      expect(await widthOf('#f-cpf'), `queue filter at ${width}`).toBeGreaterThanOrEqual(200);
      await page.goto(`${e.url}/backoffice/alerts`);
      expect(await widthOf('#al-cpf'), `alerts filter at ${width}`).toBeGreaterThanOrEqual(200);

      // The audit's selects inside the window, with the longest action chosen read whole.
      await page.goto(`${e.url}/backoffice/audit`);
      const longest = (await page.evaluate(
        `[...document.querySelectorAll('#a-action option')].reduce((a, b) => (b.text.length > a.text.length ? b : a)).value`,
      )) as string;
      await page.locator('#a-action').selectOption(longest);
      for (const select of ['#a-action', '#a-outcome', '#a-size']) {
        const box = await page.locator(select).evaluate((el) => {
          const r = el.getBoundingClientRect();
          return { left: r.left, right: r.right };
        });
        expect(box.left, `${select} at ${width}`).toBeGreaterThanOrEqual(0);
        expect(box.right, `${select} at ${width}`).toBeLessThanOrEqual(width);
      }
      expect(await problemsOf(page), `audit at ${width}`).toEqual([]);

      // Masked CPFs: in the queues, on a case, on the customer's page; each one line.
      for (const where of [
        '/backoffice/queues/failed',
        `/backoffice/flows/${depositWorkflowId(made.heldTxid as string)}`,
        made.customer as string,
      ]) {
        await page.goto(where.startsWith('http') ? where : `${e.url}${where}`);
        const cpfs = await cpfLines();
        expect(cpfs.length, `${where} at ${width}`).toBeGreaterThan(0);
        for (const c of cpfs) {
          expect(c.text, where).toMatch(/^\*{3}\.\d{3}\.\d{3}-\*{2}$/);
          expect(c, `${where} at ${width}`).toMatchObject({ lines: 1, wraps: 'nowrap' });
        }
        expect(await problemsOf(page), `${where} at ${width}`).toEqual([]);
      }
    }
  }, 120_000);

  it("a viewer's approve is refused (403) and changes nothing", async () => {
    const { cpf, workflowId } = await awaitingReview();
    const page = await signedInPage(people.viewer);
    await page.goto(`${e.url}/backoffice/flows/${workflowId}`);
    expect(await page.getByRole('button', { name: t.flow.record }).count()).toBe(0);
    expect(await page.locator('main').textContent()).toContain(t.flow.mayNotDecide(pt.role('viewer')));
    const res = await page.request.post(`${e.url}/backoffice/flows/${workflowId}/review`, {
      form: { _csrf: await formTokenOf(page), decision: 'approve', reason: 'I should not be able to' },
    });
    expect(res.status()).toBe(403);
    expect(await res.text()).toContain(t.errors.mayNotDecide(pt.role('viewer')));
    expect((await onboardingStatus(cpf)).status).toBe('awaiting_review');
  }, 120_000);

  it('posts without the form token, or with another session’s, are refused and change nothing', async () => {
    const { cpf, workflowId } = await awaitingReview();
    const page = await signedInPage(people.reviewer);
    const other = await signedInPage(people.second);
    const url = `${e.url}/backoffice/flows/${workflowId}/review`;
    const none = await page.request.post(url, { form: { decision: 'approve', reason: 'no token' } });
    expect(none.status()).toBe(403);
    expect(await none.text()).toContain('Recarregue a página e tente de novo');
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
    await decide(first, workflowId, /^Aprovar/, 'all good');
    await second.getByRole('radio', { name: /^Recusar/ }).check();
    await second.getByLabel(t.flow.reasonLabel).fill('too late');
    await second.getByRole('button', { name: t.flow.record }).click();
    await second.getByRole('heading', { name: t.errors.alreadyDecided }).waitFor();
    expect(await second.locator('main').textContent()).toContain(
      `aprovado (aprovação por ${people.reviewer}`,
    );
    expect(await onboardingStatus(cpf)).toMatchObject({
      status: 'approved',
      review: { by: people.reviewer },
    });
    await drawnAtBothWidths(second, 'already-decided');

    const token = await formTokenOf(first);
    const bad = await first.request.post(`${e.url}/backoffice/flows/${workflowId}/review`, {
      form: { _csrf: token, decision: 'maybe', reason: '' },
    });
    expect(bad.status()).toBe(400);
    const badText = await bad.text();
    expect(badText).toContain(
      `data-field="decision"><strong>${t.fields.decision}</strong>: ${t.formErrors.decisionReview}`,
    );
    expect(badText).toContain(
      `data-field="reason"><strong>${t.fields.reason}</strong>: ${t.formErrors.mustSayWhy}`,
    );
    const unknown = await first.request.post(`${e.url}/backoffice/flows/onboarding-nope/review`, {
      form: { _csrf: token, decision: 'approve', reason: 'x' },
    });
    expect(unknown.status()).toBe(404);
    expect((await first.goto(`${e.url}/backoffice/flows/no-such-flow`))?.status()).toBe(404);
    expect((await first.goto(`${e.url}/backoffice/queues/no-such-queue`))?.status()).toBe(404);
    expect((await first.goto(`${e.url}/backoffice/queues/failed?since=2026-02-31`))?.status()).toBe(400);
    expect(await first.locator('main').textContent()).toContain(t.formErrors.calendarDay);
    // Month 13 is no day either: a refusal, never a failure.
    expect((await first.goto(`${e.url}/backoffice/queues/failed?since=2026-13-01`))?.status()).toBe(400);
    expect((await first.goto(`${e.url}/backoffice/queues/failed?since=31/02/2026`))?.status()).toBe(400);
    await drawnAtBothWidths(first, 'refused-filter');
    // A day as the page asks for it is taken, and shown back the same way.
    expect((await first.goto(`${e.url}/backoffice/queues/failed?since=1/2/2026`))?.status()).toBe(200);
    expect(await first.getByLabel(t.queue.since).inputValue()).toBe('01/02/2026');
  }, 120_000);

  it('finds a case by txid, transactionId or E2E id and opens it; an unknown id says so; a bad one is named', async () => {
    const page = await signedInPage(people.viewer);
    const txid = made.heldTxid as string;
    const failed = made.failedWithdrawal as string;
    const e2eOf = async (workflowId: string) =>
      (await e.pool.query("SELECT details->>'e2eId' AS e2e FROM flows WHERE workflow_id = $1", [workflowId]))
        .rows[0]?.e2e as string;
    const depositE2e = await e2eOf(depositWorkflowId(txid));
    const payoutE2e = await e2eOf(withdrawalWorkflowId(failed));
    expect(depositE2e).toMatch(/^E/);
    expect(payoutE2e).toMatch(/^E/);
    for (const [q, workflowId] of [
      [txid, depositWorkflowId(txid)],
      [failed, withdrawalWorkflowId(failed)],
      [depositE2e, depositWorkflowId(txid)],
      [payoutE2e, withdrawalWorkflowId(failed)],
      [` ${depositWorkflowId(txid)} `, depositWorkflowId(txid)],
    ]) {
      await page.goto(`${e.url}/backoffice`);
      await page.getByLabel(t.home.findCase).fill(q as string);
      await page.getByRole('button', { name: t.home.findCaseButton }).click();
      await expect
        .poll(() => page.url(), { message: q })
        .toMatch(new RegExp(`/backoffice/flows/${workflowId}$`));
      expect(await page.locator('dl.facts').textContent()).toContain(
        workflowId?.startsWith('deposit') ? depositE2e : payoutE2e,
      );
    }
    await page.goto(`${e.url}/backoffice/search`);
    await drawnAtBothWidths(page, 'search');
    const none = await page.goto(`${e.url}/backoffice/search?q=E00000000202611261200nothinghere`);
    expect(none?.status()).toBe(404);
    expect(await page.getByRole('status').textContent()).toContain('Nenhum caso encontrado');
    for (const q of ['two words', 'x'.repeat(201)]) {
      const bad = await page.goto(`${e.url}/backoffice/search?q=${encodeURIComponent(q)}`);
      expect(bad?.status(), q).toBe(400);
      expect(await page.locator('[data-field="q"]').textContent()).toContain(t.fields.q);
    }
  }, 60_000);

  it('the audit trail lists each action in words, who, before and after, and exports as CSV', async () => {
    const page = await signedInPage(people.admin);
    await page.getByRole('link', { name: t.nav.audit }).click();
    await page.getByRole('heading', { name: t.audit.title, level: 1 }).waitFor();
    // The latest 50 at most, newest first, each a row with its codes as data and its words as text.
    const rows = await auditRows(page);
    expect(rows.map((r) => r.id)).toEqual([...rows.map((r) => r.id)].sort((a, b) => b - a));
    const all = await page.goto(`${e.url}/backoffice/audit?size=200`);
    expect(all?.status()).toBe(200);
    const everything = await auditRows(page);
    expect(everything.length).toBeLessThan(200);
    expect(rows).toEqual(everything.slice(0, 50));
    const table = (await page.locator('table.audit').textContent()) ?? '';
    for (const action of [
      'onboarding.approve',
      'onboarding.refuse',
      'deposit.accept',
      'onboarding.review',
      'sign_in',
      'sign_out',
    ] as const) {
      expect(
        everything.map((r) => r.action),
        action,
      ).toContain(action);
      expect(table, action).toContain(pt.action(action));
    }
    expect(table).toContain(
      `${pt.status('onboarding', 'awaiting_review')} → ${pt.status('onboarding', 'approved')}`,
    );
    expect(table).toContain(`${pt.status('deposit', 'held')} → ${pt.status('deposit', 'completed')}`);
    expect(everything.map((r) => r.outcome)).toContain('refused'); // the viewer's try
    expect(everything.map((r) => r.outcome)).toContain('conflict'); // the late decision
    expect(table).toContain(pt.outcome('conflict'));
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: t.audit.exportAll }).click();
    const csv = readFileSync(await (await download).path(), 'utf8');
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

  it('the audit trail filters by who, action, outcome, case and days, a page at a time; a bad filter is named, never a failure', async () => {
    const page = await signedInPage(people.admin);
    const only = async (query: string) => {
      const res = await page.goto(`${e.url}/backoffice/audit?${query}&size=200`);
      expect(res?.status(), query).toBe(200);
      return auditRows(page);
    };
    const accepted = await only('action=deposit.accept');
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    expect(new Set(accepted.map((r) => r.action))).toEqual(new Set(['deposit.accept']));
    const refused = await only('outcome=refused');
    expect(new Set(refused.map((r) => r.outcome))).toEqual(new Set(['refused']));
    // Who: part of the address.
    await only('who=vera.viewer');
    const emails = await page.locator('table.audit tbody .email').allTextContents();
    expect(emails.length).toBeGreaterThan(0);
    expect(new Set(emails)).toEqual(new Set([people.viewer]));
    // A case by its txid: the deposit's decision.
    const ofCase = await only(`case=${made.heldTxid}`);
    expect(ofCase.map((r) => r.action)).toEqual(['deposit.accept']);
    // Days as the page writes them: today has rows, tomorrow has none.
    const today = new Intl.DateTimeFormat('pt-BR', { timeZone: 'Europe/Lisbon', dateStyle: 'short' }).format(
      new Date(),
    );
    const tomorrow = new Intl.DateTimeFormat('pt-BR', {
      timeZone: 'Europe/Lisbon',
      dateStyle: 'short',
    }).format(new Date(Date.now() + 86_400_000));
    expect((await only(`from=${today}&to=${today}`)).length).toBeGreaterThan(0);
    expect(await page.getByLabel(t.audit.from).inputValue()).toBe(today);
    expect(await only(`from=${tomorrow}`)).toEqual([]);
    expect(await page.locator('main').textContent()).toContain(t.audit.emptyFiltered);

    // The form: choosing filters makes the same query.
    await page.goto(`${e.url}/backoffice/audit`);
    await page.getByLabel(t.audit.action).selectOption('onboarding.approve');
    await page.getByLabel(t.audit.size).selectOption('20');
    await page.getByRole('button', { name: t.audit.filter }).click();
    await expect.poll(() => page.url()).toContain('action=onboarding.approve');
    await drawnAtBothWidths(page);

    // Pages of 20, keyset by row id: older, then newer again, no row twice, none left out.
    const everything = (await only('')).map((r) => r.id);
    expect(everything.length).toBeGreaterThan(20);
    await page.goto(`${e.url}/backoffice/audit?size=20`);
    const first = await auditRows(page);
    expect(first.length).toBe(20);
    await drawnAtBothWidths(page, 'audit');
    await page.getByRole('link', { name: t.audit.older }).click();
    await expect.poll(() => page.url()).toContain(`before=${first[19]?.id}`);
    const second = await auditRows(page);
    expect(second.length).toBeGreaterThan(0);
    expect(Math.max(...second.map((r) => r.id))).toBeLessThan(Math.min(...first.map((r) => r.id)));
    expect([...first, ...second].map((r) => r.id)).toEqual(everything.slice(0, first.length + second.length));
    await page.getByRole('link', { name: t.audit.newer }).click();
    expect((await auditRows(page)).map((r) => r.id)).toEqual(first.map((r) => r.id));

    // Bad filters: 400, the field named in words, nothing else.
    for (const [query, field, words] of [
      ['size=7', 'size', t.formErrors.pageSize],
      ['from=31/02/2026', 'from', t.formErrors.calendarDay],
      ['from=2026-13-01', 'from', t.formErrors.calendarDay],
      ['from=01/01/0001', 'from', t.formErrors.calendarDay],
      ['to=amanhã', 'to', t.formErrors.day],
      ['from=02/01/2026&to=01/01/2026', 'to', t.formErrors.untilBeforeFrom],
      ['action=delete.everything', 'action', t.formErrors.invalid],
      ['outcome=maybe', 'outcome', t.formErrors.invalid],
      ['before=abc', 'before', t.formErrors.cursor],
      ['before=99999999999999999999', 'before', t.formErrors.cursor],
      ['before=5&after=3', 'after', t.formErrors.oneCursor],
      [`who=${'x'.repeat(201)}`, 'who', t.formErrors.atMost('200')],
      ['case=a&case=b', 'case', t.formErrors.text],
    ] as const) {
      const res = await page.goto(`${e.url}/backoffice/audit?${query}`);
      expect(res?.status(), query).toBe(400);
      expect(await page.locator(`[data-field="${field}"]`).textContent(), query).toContain(words);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(t.errors.filterRefused);
    }
    const csv = await page.request.get(`${e.url}/backoffice/audit.csv?from=31/02/2026`);
    expect(csv.status()).toBe(400);
  }, 120_000);

  it('an impeded person: in the queue with the deadline to close; reinstating refused while the registry bars; closed, their deposit refused and their withdrawal paid; reinstated once eligible', async () => {
    const cpf = freshCpf();
    const hash = cpfHash(cpf, PII_KEY);
    await onboardApproved(e, cpf);
    const setRegistry = (status: string) =>
      e.sandboxControl('/sandbox/eligibility/status', {
        cpf,
        status,
        ...(status === 'impeded' ? { reason: 'self_excluded' } : {}),
      });
    const pastFresh = () => new Promise((r) => setTimeout(r, ELIGIBILITY_FRESH_MS + 100));
    const deposit = () =>
      e.call('POST', '/v1/deposits', {
        body: {
          client: { externalId: `bo-${cpf}`, cpf, email: 'ana@example.com', name: 'Ana Souza' },
          amountCentavos: 10_000,
        },
      });
    const view = async () =>
      json<{ eligibility: string; impeded: { registryAnswer: string } | null; closedAt: string | null }>(
        await e.call('GET', `/v1/customers/${cpf}`),
      );
    const audited = async (action: string) =>
      (
        await e.pool.query(
          'SELECT outcome FROM operator_actions WHERE action = $1 AND case_id = $2 ORDER BY id',
          [action, `customer-${hash}`],
        )
      ).rows.map((r) => r.outcome);
    await setRegistry('impeded');
    await pastFresh();
    await expectProblem(await deposit(), 409, 'impeded');

    // The queue: with the deadline to close (30 days from the bar), the least time left first.
    const page = await signedInPage(people.reviewer);
    await page.getByRole('link', { name: pt.queueTitle('customers-impeded') }).click();
    const row = page.locator(`#queue-items tr[data-cpf-hash="${hash}"]`);
    const text = (await row.textContent()) ?? '';
    expect(text).toContain(t.impededReason.self_excluded);
    expect(text).toMatch(/faltam (29 d 23 h|30 d 0 h)/);
    const deadlines = await page
      .locator('#queue-items tr[data-close-by]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-close-by') ?? ''));
    expect(deadlines).toEqual([...deadlines].sort());
    await drawnAtBothWidths(page, 'queue-impeded');

    // The customer page shows the impediment; reinstating is refused while the registry bars.
    await row.getByRole('link').click();
    await page.getByRole('heading', { name: t.impeded.heading }).waitFor();
    const facts = (await page.locator('section.impeded').textContent()) ?? '';
    expect(facts).toContain(t.impeded.source_['registry:deposit']);
    expect(facts).toContain(t.impeded.registryAnswer.impeded);
    const customerPage = page.url().split('?')[0] as string;
    await page.locator('#reinstate-reason').fill('the person says the court order ended');
    await page.getByRole('button', { name: t.impeded.reinstate }).click();
    await page.getByRole('heading', { name: t.impeded.stillImpeded }).waitFor();
    expect(await view()).toMatchObject({ eligibility: 'impeded', closedAt: null });
    expect(await audited('customer.reinstate')).toEqual(['conflict']);

    // Closed: audited, told, and a new deposit refused as closed.
    await page.goto(customerPage);
    await page.locator('#close-reason').fill('self-excluded at the registry; balance left to withdraw');
    await page.getByRole('button', { name: t.impeded.close }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain(t.impeded.closedDone);
    expect(await audited('customer.close')).toEqual(['done']);
    const closed = await view();
    expect(Date.parse(closed.closedAt ?? '')).not.toBeNaN();
    // Told once, in the outbox: masked CPF and keyed hash only.
    const { rows: events } = await e.pool.query(
      `SELECT data FROM events WHERE stream_id = $1 AND type = 'customer.closed'`,
      [`customer-${hash}`],
    );
    expect(events).toHaveLength(1);
    expect(events[0].data).toMatchObject({ cpfHash: hash, closed: true, reason: 'self_excluded' });
    expect(JSON.stringify(events[0].data)).not.toContain(cpf);
    await drawnAtBothWidths(page, 'customer-impeded');
    const refused = await expectProblem(await deposit(), 409, 'customer-closed');
    expect(refused).toMatchObject({ reason: 'closed' });
    // Their balance still goes to their own account.
    const paid = await withdrawal(cpf, 10_000, (s) => s === 'processing' || s === 'awaiting_biometrics');
    await e.sandboxControl(`/sandbox/withdrawals/${paid}/settle`);
    await eventually(
      async () =>
        (await json<{ state: { status: string } }>(await e.call('GET', `/v1/withdrawals/${paid}`))).state
          .status,
      (s) => s === 'completed',
    );

    // Eligible again at the registry: still closed until an operator reinstates the person.
    await setRegistry('eligible');
    await pastFresh();
    await expectProblem(await deposit(), 409, 'customer-closed');
    expect((await view()).impeded?.registryAnswer).toBe('eligible');
    await page.goto(customerPage);
    await page.locator('#reinstate-reason').fill('the registry no longer names the person');
    await page.getByRole('button', { name: t.impeded.reinstate }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain(t.impeded.reinstatedDone);
    expect(await audited('customer.reinstate')).toEqual(['conflict', 'done']);
    expect(await view()).toMatchObject({ eligibility: 'eligible', impeded: null, closedAt: null });
    expect((await deposit()).status).toBe(201);
  }, 180_000);

  it("an impeded person's closed account offers their deposits still returnable; each ticked one starts its own return, once, audited", async () => {
    const cpf = freshCpf();
    const hash = cpfHash(cpf, PII_KEY);
    await onboardApproved(e, cpf);
    // Two completed deposits of theirs, as their runs left them: one on an API Pix PSP, which
    // returns received Pix, one on the first provider, which does not.
    const completed = async (connector: string) => {
      const txid = `${Date.now()}${randomBytes(2).readUInt16BE()}`;
      await upsertFlowAndEvent(e.pool, {
        workflowId: depositWorkflowId(txid),
        type: 'deposit',
        businessId: txid,
        status: 'completed',
        cpfHash: hash,
        cpfMasked: maskCpf(cpf),
        merchant: 'sandbox-merchant',
        amountCentavos: 54_321,
        reason: null,
        details: {
          e2eId: `E${randomBytes(15).toString('hex').toUpperCase()}0`,
          payerIsClient: true,
          connector,
        },
        seq: 3,
        at: new Date(),
        runId: `run-${txid}`,
      });
      return txid;
    };
    const onPsp = await completed('api-pix');
    const onFirst = await completed('identity-payments');
    await e.sandboxControl('/sandbox/eligibility/status', {
      cpf,
      status: 'impeded',
      reason: 'self_excluded',
    });
    await new Promise((r) => setTimeout(r, ELIGIBILITY_FRESH_MS + 100));
    await expectProblem(
      await e.call('POST', '/v1/deposits', {
        body: {
          client: { externalId: `bo-${cpf}`, cpf, email: 'ana@example.com', name: 'Ana Souza' },
          amountCentavos: 10_000,
        },
      }),
      409,
      'impeded',
    );
    const page = await signedInPage(people.reviewer);
    await page.goto(`${e.url}/backoffice/customers/${hash}`);
    // Nothing offered while the account is open.
    expect(await page.getByRole('heading', { name: t.impeded.returnsHeading }).count()).toBe(0);
    await page.locator('#close-reason').fill('self-excluded at the registry');
    await page.getByRole('button', { name: t.impeded.close }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain(t.impeded.closedDone);
    // Closed: the deposit its connector can return is offered, ticked; the first provider's is not.
    const offered = page.getByRole('checkbox');
    expect(await offered.count()).toBe(1);
    expect(await offered.getAttribute('value')).toBe(depositWorkflowId(onPsp));
    expect(await page.locator('form[action$="/return-deposits"]').textContent()).toMatch(
      /R\$\s543,21, recebido por api-pix/,
    );
    await drawnAtBothWidths(page);
    await page.locator('#returns-reason').fill('account closed: the money goes back to its payer');
    await page.getByRole('button', { name: t.impeded.returnSelected }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain(t.impeded.returnsDone(1));
    const audited = await e.pool.query(
      'SELECT outcome, operator_email, reason FROM operator_actions WHERE action = $1 AND case_id = $2',
      ['deposit.return', depositWorkflowId(onPsp)],
    );
    expect(audited.rows).toEqual([
      {
        outcome: 'done',
        operator_email: people.reviewer,
        reason: 'account closed: the money goes back to its payer',
      },
    ]);
    // Its own return flow, on the deposit's row: this env's worker has no API Pix connector, so
    // the money is left to be returned by hand (the PSP's own return: test/workflows/deposit-return.test.ts).
    const result = await e.temporal.workflow.getHandle(depositReturnWorkflowId(onPsp)).result();
    expect(result).toMatchObject({
      status: 'to_return',
      returnByHand: { connector: 'api-pix', why: 'connector_not_configured' },
    });
    const row = await e.pool.query('SELECT status FROM flows WHERE workflow_id = $1', [
      depositWorkflowId(onPsp),
    ]);
    expect(row.rows).toEqual([{ status: 'to_return' }]);
    // The deposit's case says so, from its row: its own run ended completed before.
    await page.goto(`${e.url}/backoffice/flows/${depositWorkflowId(onPsp)}`);
    expect(await page.locator('.status').textContent()).toBe(pt.status('deposit', 'to_return'));
    const caseFacts = (await page.locator('dl.facts').textContent()) ?? '';
    expect(caseFacts).toContain(t.flow.byHandWhy.connector_not_configured('api-pix'));
    await page.goto(`${e.url}/backoffice/customers/${hash}`);
    // No longer offered, and asked again by a stale form: refused, audited, nothing started.
    await page.reload();
    expect(await page.getByRole('checkbox').count()).toBe(0);
    expect(await page.locator('section.impeded').textContent()).toContain(t.impeded.returnsNone);
    const again = await page.request.post(`${e.url}/backoffice/customers/${hash}/return-deposits`, {
      form: {
        _csrf: await formTokenOf(page),
        deposit: depositWorkflowId(onFirst),
        reason: 'the first provider one too',
      },
      maxRedirects: 0,
    });
    expect(again.status()).toBe(409);
    expect(
      await e.temporal.workflow
        .getHandle(depositReturnWorkflowId(onFirst))
        .describe()
        .catch(() => 'none'),
    ).toBe('none');
    const conflicts = await e.pool.query(
      'SELECT outcome FROM operator_actions WHERE action = $1 AND case_id = $2',
      ['deposit.return', `customer-${hash}`],
    );
    expect(conflicts.rows).toEqual([{ outcome: 'conflict' }]);
  }, 180_000);

  it('every page reads at 1280 and 390 px: nothing sideways, no cell cut, no raw code, and it is reachable by keyboard', async () => {
    const { workflowId } = await awaitingReview();
    // Earlier cases load refusals (400, 403, 409) on purpose; these pages must load clean.
    pageProblems.length = 0;
    const admin = await signedInPage(people.admin);
    // An API key of each state, made and revoked through the page.
    await admin.goto(`${e.url}/backoffice/api-keys`);
    for (const name of ['Checkout backend', 'Relatórios mensais do financeiro']) {
      await admin.getByLabel(t.keys.name, { exact: true }).fill(name);
      await admin.getByLabel('deposits').selectOption('write');
      await admin.getByRole('button', { name: t.keys.create }).click();
      await admin.getByRole('link', { name: t.keys.backToKeys }).waitFor();
      await drawnAtBothWidths(admin, name === 'Checkout backend' ? 'api-key-secret' : undefined);
      await admin.getByRole('link', { name: t.keys.backToKeys }).click();
    }
    await admin.getByRole('button', { name: t.keys.revokeLabel('Checkout backend') }).click();
    await admin.getByRole('status').waitFor();
    await drawnAtBothWidths(admin, 'api-keys');
    const pages: Array<[string, string | undefined]> = [
      ['/backoffice', undefined],
      ...queueIds.map((q: QueueId): [string, string | undefined] => [`/backoffice/queues/${q}`, undefined]),
      [`/backoffice/flows/${workflowId}`, undefined],
      [`/backoffice/flows/${depositWorkflowId(made.heldTxid as string)}`, undefined],
      [`/backoffice/flows/${withdrawalWorkflowId(made.failedWithdrawal as string)}`, 'case-withdrawal'],
      [`/backoffice/flows/${withdrawalWorkflowId(made.stuckWithdrawal as string)}`, undefined],
      [made.customer as string, undefined],
      ['/backoffice/audit', undefined],
      ['/backoffice/search', undefined],
      ['/backoffice/alerts', 'alerts'],
      // The policy page as a case page's link opens it: the case's version marked in the history.
      ['/backoffice/policy?version=1', 'policy'],
    ];
    for (const [where, name] of pages) {
      await admin.goto(where.startsWith('http') ? where : `${e.url}${where}`);
      await drawnAtBothWidths(admin, name);
    }

    const page = await signedInPage(people.reviewer, 390);
    await page.goto(`${e.url}/backoffice/flows/${workflowId}`);
    await drawnAtBothWidths(page);
    await page.setViewportSize({ width: 390, height: 900 });
    // From the top: the skip link first, then on through the decision form by Tab alone.
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe(t.skip);
    const reached = new Set<string>();
    for (let i = 0; i < 30; i++) {
      await page.keyboard.press('Tab');
      reached.add(
        String(await page.evaluate('document.activeElement.name || document.activeElement.textContent')),
      );
    }
    for (const name of ['decision', 'reason', t.flow.record]) expect([...reached]).toContain(name);
    // Every control has a label.
    for (const where of [
      `/backoffice/flows/${workflowId}`,
      '/backoffice/audit',
      '/backoffice/queues/failed',
    ]) {
      await page.goto(`${e.url}${where}`);
      const unlabelled = await page.evaluate(
        `[...document.querySelectorAll('input:not([type=hidden]), textarea, select')].filter((el) => !el.labels || el.labels.length === 0).length`,
      );
      expect(unlabelled, where).toBe(0);
    }
    expect(pageProblems, pageProblems.join('\n')).toEqual([]);
  }, 180_000);

  it('sign-in attempts are rate-limited per address: past the limit even the right password waits', async () => {
    const page = await newPage();
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
    expect(await res.text()).toContain(t.signIn.tooMany);
  }, 60_000);
});
