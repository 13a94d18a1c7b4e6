import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogs, labelsFor } from '../../backoffice/i18n';
import { roleAtLeast } from '../../backoffice/roles';
import { hashPassword } from '../../common/passwords';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import { operatorForSignIn, saveOperator } from '../../db/operators';
import { PAYOUT_APPROVALS_QUEUE, PAYOUT_DEADLINES_QUEUE } from '../../db/payout-queues';
import { type ApiEnv, eventually, freshCpf, json, onboardApproved, startApiEnv } from '../api/support';
import { decidePayout, drawnAtBothWidths, SHOTS } from '../helpers/backoffice-pages';
import { launchChromium } from '../helpers/browser';

// The payout controls in the back office, in Debian's Chromium against the real stack: the
// approver role, the queue of payouts awaiting approval (four eyes) and the queue of open payouts
// by time left to their prize deadline, and the approver's decision on a payout's page, sent to
// the withdrawal's own update. The queues' columns and order are checked on flows rows written
// straight into Postgres, as the withdrawal workflow writes them, so each can be set exactly; the
// decisions on real withdrawals over the approval bound, the sandbox telling what was sent.

const PASSWORD = 'correct horse battery staple';
const people = {
  reviewer: 'rui.reviewer@example.com',
  viewer: 'val.viewer@example.com',
  approver: 'ana.approver@example.com',
  second: 'beto.approver@example.com',
  admin: 'adm.admin@example.com',
  english: 'eve.english@example.com',
} as const;
const t = catalogs['pt-BR'];
const pt = labelsFor('pt-BR');
const MIN = 60_000;
/** Four eyes above R$ 200,00 here, below the biometric step-up: two different approvers. */
const APPROVAL_ABOVE = 20_000;

let e: ApiEnv;
let browser: Browser;
const contexts: BrowserContext[] = [];

async function signedInPage(email: string, width = 1280, words = t): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width, height: 900 },
    timezoneId: 'America/Sao_Paulo',
    locale: 'pt-BR',
  });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${e.url}/backoffice/sign-in`);
  await page.getByLabel(t.signIn.email).fill(email);
  await page.getByLabel(t.signIn.password).fill(PASSWORD);
  await page.getByRole('button', { name: t.signIn.submit }).click();
  await page.getByRole('heading', { name: words.home.title, level: 1 }).waitFor({ timeout: 10_000 });
  return page;
}

/** The form token of a signed-in page: what a same-origin form would send. */
const formTokenOf = (page: Page) => page.locator('input[name="_csrf"]').first().inputValue();

/** A withdrawal's flows row as the workflow writes it, times relative to now. */
async function payoutRow(p: {
  status: string;
  amountCentavos: number;
  startedMinAgo: number;
  dueInMin?: number;
  details?: Record<string, unknown>;
}) {
  const transactionId = `po-${randomBytes(5).toString('hex')}`;
  const workflowId = withdrawalWorkflowId(transactionId);
  const now = Date.now();
  const details = {
    ...(p.dueInMin === undefined
      ? {}
      : {
          dueAt: new Date(now + p.dueInMin * MIN).toISOString(),
          atRiskAt: new Date(now + (p.dueInMin - 30) * MIN).toISOString(),
        }),
    ...p.details,
  };
  await e.pool.query(
    `INSERT INTO flows (workflow_id, type, business_id, status, cpf_hash, cpf_masked, amount_centavos,
                        details, created_at, updated_at)
     VALUES ($1, 'withdrawal', $2, $3, $4, '***.456.789-**', $5, $6,
             now() - $7 * interval '1 minute', now() - $7 * interval '1 minute')`,
    [
      workflowId,
      transactionId,
      p.status,
      `hash-${transactionId}`,
      p.amountCentavos,
      details,
      p.startedMinAgo,
    ],
  );
  return workflowId;
}

const audited = async (workflowId: string) =>
  (
    await e.pool.query(
      'SELECT action, outcome, operator_email FROM operator_actions WHERE case_id = $1 ORDER BY id',
      [workflowId],
    )
  ).rows;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  e = await startApiEnv(
    {},
    { env: { PAYOUT_APPROVAL_ABOVE_CENTAVOS: String(APPROVAL_ABOVE), PAYOUT_APPROVERS: '2' } },
  );
  const hash = await hashPassword(PASSWORD);
  await saveOperator(e.pool, { email: people.reviewer, role: 'reviewer', passwordHash: hash });
  await saveOperator(e.pool, { email: people.viewer, role: 'viewer', passwordHash: hash });
  await saveOperator(e.pool, { email: people.approver, role: 'approver', passwordHash: hash });
  await saveOperator(e.pool, { email: people.second, role: 'approver', passwordHash: hash });
  await saveOperator(e.pool, { email: people.admin, role: 'admin', passwordHash: hash });
  await saveOperator(e.pool, { email: people.english, role: 'approver', passwordHash: hash, language: 'en' });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  await e?.close();
});

describe('the approver role', () => {
  it('sits between reviewer and admin, and Postgres keeps no other', async () => {
    expect(roleAtLeast('approver', 'reviewer')).toBe(true);
    expect(roleAtLeast('admin', 'approver')).toBe(true);
    expect(roleAtLeast('reviewer', 'approver')).toBe(false);
    expect((await operatorForSignIn(e.pool, people.approver))?.operator.role).toBe('approver');
    await expect(
      e.pool.query(`UPDATE operators SET role = 'superuser' WHERE email = $1`, [people.viewer]),
    ).rejects.toThrow(/operators_role_check/);
    expect(pt.role('approver')).toBe('Aprovador');
  });
});

describe('the payout queues', () => {
  it('list payouts awaiting approval and open payouts by time left, overdue first, with the time waited for the person apart', async () => {
    const awaiting = await payoutRow({
      status: 'awaiting_approval',
      amountCentavos: 6_000_000,
      startedMinAgo: 50,
      dueInMin: 70,
      details: {
        approvalsRequired: 2,
        approvedBy: [people.second],
        requestedBy: 'ops.manual@example.com',
        waitedForPersonMs: 10 * MIN,
      },
    });
    const missed = await payoutRow({
      status: 'processing',
      amountCentavos: 25_000,
      startedMinAgo: 130,
      dueInMin: -10,
      details: { deadlineState: 'missed', waitedForPersonMs: 20 * MIN },
    });
    const atRisk = await payoutRow({
      status: 'sending',
      amountCentavos: 10_000,
      startedMinAgo: 100,
      dueInMin: 20,
      details: { deadlineState: 'at_risk', waitedForPersonMs: 0 },
    });
    // Asked for first but due last (PAYOUT_DEADLINE was longer then): the order is the deadline's.
    const fresh = await payoutRow({
      status: 'awaiting_biometrics',
      amountCentavos: 1_500_000,
      startedMinAgo: 140,
      dueInMin: 115,
      details: { waitedForPersonMs: 5 * MIN },
    });
    // Closed, or without a deadline yet: in neither queue.
    const paid = await payoutRow({
      status: 'completed',
      amountCentavos: 1,
      startedMinAgo: 200,
      dueInMin: -80,
    });
    const refused = await payoutRow({
      status: 'refused',
      amountCentavos: 1,
      startedMinAgo: 3,
      dueInMin: 117,
    });
    const validating = await payoutRow({ status: 'validating', amountCentavos: 1, startedMinAgo: 0 });

    const page = await signedInPage(people.reviewer);
    for (const [queue, n] of [
      [PAYOUT_APPROVALS_QUEUE, 1],
      [PAYOUT_DEADLINES_QUEUE, 4],
    ] as const) {
      const row = page.locator(`tr[data-queue="${queue}"]`);
      expect(await row.locator('th').textContent()).toBe(pt.queueTitle(queue));
      expect(Number(await row.getByRole('cell').first().textContent())).toBe(n);
    }

    await page.getByRole('link', { name: pt.queueTitle(PAYOUT_APPROVALS_QUEUE) }).click();
    await page.getByRole('heading', { name: 'Pagamentos aguardando aprovação', level: 1 }).waitFor();
    const rows = page.locator('#queue-items tbody tr');
    expect(await rows.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-workflow-id')))).toEqual([
      awaiting,
    ]);
    const text = (await rows.first().textContent()) ?? '';
    expect(text).toMatch(/R\$\s60\.000,00/);
    expect(text).toContain('***.456.789-**');
    expect(text).toContain('ops.manual@example.com');
    expect(text).toContain(`1 de 2 (por ${people.second})`);
    expect(text).toMatch(/faltam 1 h 9 min|faltam 1 h 10 min/);
    expect(text).toContain(t.payouts.onTime);
    await drawnAtBothWidths(page, 'queue-payout-approvals');

    await page.goto(`${e.url}/backoffice/queues/${PAYOUT_DEADLINES_QUEUE}`);
    const order = await page
      .locator('#queue-items tbody tr')
      .evaluateAll((rs) => rs.map((r) => r.getAttribute('data-workflow-id')));
    expect(order).toEqual([missed, atRisk, awaiting, fresh]);
    for (const gone of [paid, refused, validating]) expect(order).not.toContain(gone);
    const cells = async (id: string) => {
      const r = page.locator(`tr[data-workflow-id="${id}"]`);
      return {
        state: await r.getAttribute('data-state'),
        text: (await r.textContent()) ?? '',
        person: await r.locator('.waited-person').textContent(),
        pixflow: await r.locator('.waited-pixflow').textContent(),
      };
    };
    const late = await cells(missed);
    expect(late.state).toBe('missed');
    expect(late.text).toMatch(/vencido há 10 min/);
    expect(late.text).toContain(t.payouts.missed);
    expect(late.text).toContain(pt.status('withdrawal', 'processing'));
    // 130 minutes since the request: 20 waiting for the person, 110 with pixflow and the provider.
    expect(late.person).toBe('20 min');
    expect(late.pixflow).toMatch(/^1 h (49|50) min$/);
    expect((await cells(atRisk)).state).toBe('at_risk');
    expect((await cells(fresh)).state).toBe('on_time');
    expect((await cells(fresh)).text).toContain(t.payouts.onTime);
    await drawnAtBothWidths(page, 'queue-payout-deadlines');

    // In English for an operator who chose it, times still in São Paulo's zone.
    const en = catalogs.en;
    const english = await signedInPage(people.english, 1280, en);
    await english.goto(`${e.url}/backoffice/queues/${PAYOUT_DEADLINES_QUEUE}`);
    await english.getByRole('heading', { name: 'Payout deadlines', level: 1 }).waitFor();
    const missedRow = (await english.locator(`tr[data-workflow-id="${missed}"]`).textContent()) ?? '';
    expect(missedRow).toContain('overdue by 10 min');
    expect(missedRow).toContain(en.payouts.missed);
    expect(missedRow).toContain(labelsFor('en').status('withdrawal', 'processing'));
    await english.goto(`${e.url}/backoffice/queues/${PAYOUT_APPROVALS_QUEUE}`);
    expect(await english.locator(`tr[data-workflow-id="${awaiting}"]`).textContent()).toContain(
      `1 of 2 (by ${people.second})`,
    );
    expect(await english.locator('time').first().getAttribute('title')).toMatch(/BRT|GMT-3/);
  }, 120_000);
});

describe('a payout decision', () => {
  it('is offered to approvers and admins only; a viewer or reviewer sending one anyway is refused (403) and audited', async () => {
    const id = await payoutRow({
      status: 'awaiting_approval',
      amountCentavos: 7_000_000,
      startedMinAgo: 10,
      dueInMin: 110,
      details: { approvalsRequired: 2, approvedBy: [] },
    });
    for (const who of [people.viewer, people.reviewer]) {
      const page = await signedInPage(who);
      await page.goto(`${e.url}/backoffice/flows/${id}`);
      expect(await page.locator('form.payout-decision').count()).toBe(0);
      const role = who === people.viewer ? 'viewer' : 'reviewer';
      expect(await page.locator('main').textContent()).toContain(t.payouts.mayNotDecide(pt.role(role)));
      const res = await page.request.post(`${e.url}/backoffice/flows/${id}/payout-decision`, {
        form: { _csrf: await formTokenOf(page), decision: 'approve', reason: '' },
      });
      expect(res.status()).toBe(403);
    }
    expect(await audited(id)).toEqual([
      { action: 'withdrawal.decision', outcome: 'refused', operator_email: people.viewer },
      { action: 'withdrawal.decision', outcome: 'refused', operator_email: people.reviewer },
    ]);
    for (const who of [people.approver, people.admin]) {
      const page = await signedInPage(who);
      await page.goto(`${e.url}/backoffice/flows/${id}`);
      await page.locator('form.payout-decision').waitFor();
      expect(await page.locator('dl.facts').textContent()).toContain('0 de 2');
    }
  }, 120_000);

  it('a refusal without a reason is a form error naming the reason; without its payout form token, 403', async () => {
    const id = await payoutRow({
      status: 'awaiting_approval',
      amountCentavos: 7_000_000,
      startedMinAgo: 10,
      dueInMin: 110,
      details: { approvalsRequired: 1, approvedBy: [] },
    });
    const page = await signedInPage(people.approver);
    await page.goto(`${e.url}/backoffice/flows/${id}`);
    const token = await formTokenOf(page);
    for (const reason of ['', '   ']) {
      const res = await page.request.post(`${e.url}/backoffice/flows/${id}/payout-decision`, {
        form: { _csrf: token, decision: 'refuse', reason },
      });
      expect(res.status()).toBe(400);
      const html = await res.text();
      expect(html).toContain('data-field="reason"');
      expect(html).toContain(t.formErrors.mustSayWhy);
    }
    const forged = await page.request.post(`${e.url}/backoffice/flows/${id}/payout-decision`, {
      form: { decision: 'approve' },
    });
    expect(forged.status()).toBe(403);
    expect(await audited(id)).toEqual([]);
  }, 60_000);
});

/** A payout over the approval bound to the person's own CPF key; waits until it awaits approval. */
async function largePayout(requestedBy?: string) {
  const cpf = freshCpf();
  await onboardApproved(e, cpf);
  const transactionId = `po-${randomBytes(5).toString('hex')}`;
  const res = await e.call('POST', '/v1/withdrawals', {
    body: {
      transactionId,
      client: { externalId: `po-${cpf}`, cpf, email: 'ana@example.com', name: 'Ana Souza' },
      pixKey: cpf,
      pixType: 'CPF',
      amountCentavos: APPROVAL_ABOVE + 1_000,
      ...(requestedBy ? { requestedBy } : {}),
    },
  });
  expect(res.status).toBe(202);
  await eventually(
    () => statusOf(transactionId),
    (s) => s.status === 'awaiting_approval',
  );
  return { transactionId, workflowId: withdrawalWorkflowId(transactionId) };
}

const statusOf = async (transactionId: string) =>
  (
    await json<{ state: { status: string; reason?: string } }>(
      await e.call('GET', `/v1/withdrawals/${transactionId}`),
    )
  ).state;

/** How many payouts the sandbox received for the transaction. */
const payoutsSent = async (transactionId: string): Promise<number> => {
  const state = (await (await fetch(`${e.sandbox.url}/sandbox/state`)).json()) as {
    counters: { payouts: Record<string, number> };
  };
  return state.counters.payouts[transactionId] ?? 0;
};

/** Chooses and sends the decision on the payout's page. */
const decide = (page: Page, workflowId: string, decision: 'approve' | 'refuse', reason = '') =>
  decidePayout(page, e.url, workflowId, decision, reason);

describe('four eyes on the real stack', () => {
  it('a payout over the bound waits in the queue; its requester may not approve; one approval of two sends nothing, a second by another operator sends it once; each decision audited', async () => {
    const { transactionId, workflowId } = await largePayout(people.approver);
    const page = await signedInPage(people.approver);
    await page.goto(`${e.url}/backoffice/queues/${PAYOUT_APPROVALS_QUEUE}`);
    const row = page.locator(`tr[data-workflow-id="${workflowId}"]`);
    expect(await row.getAttribute('data-required')).toBe('2');
    expect(await row.textContent()).toContain(people.approver);
    expect(await row.textContent()).toContain('0 de 2');
    // And in the deadline queue, with its deadline.
    await page.goto(`${e.url}/backoffice/queues/${PAYOUT_DEADLINES_QUEUE}`);
    expect(await page.locator(`tr[data-workflow-id="${workflowId}"]`).getAttribute('data-due-at')).toMatch(
      /Z$/,
    );

    // Its requester: told on the page, and refused when approving anyway; nothing reaches the flow.
    await page.goto(`${e.url}/backoffice/flows/${workflowId}`);
    expect(await page.locator('main').textContent()).toContain(t.payouts.youRequested);
    await drawnAtBothWidths(page, 'case-payout-approval');
    await decide(page, workflowId, 'approve');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(t.payouts.notDecided);
    expect(await page.locator('main').textContent()).toContain(t.payouts.isRequester);

    // One approval of two: still waiting, nothing sent.
    const second = await signedInPage(people.second);
    await decide(second, workflowId, 'approve', 'amount matches the prize won');
    expect(await second.getByRole('status').textContent()).toContain('aprovado (1 de 2)');
    expect(await statusOf(transactionId)).toMatchObject({ status: 'awaiting_approval' });
    expect(await payoutsSent(transactionId)).toBe(0);
    // Twice by the same operator: refused, the count unchanged.
    await decide(second, workflowId, 'approve');
    expect(await second.locator('main').textContent()).toContain(t.payouts.alreadyApproved);
    await second.goto(`${e.url}/backoffice/flows/${workflowId}`);
    expect(await second.locator('dl.facts').textContent()).toContain(`1 de 2 (por ${people.second})`);
    expect(await payoutsSent(transactionId)).toBe(0);

    // A second operator's approval sends it, once.
    const admin = await signedInPage(people.admin);
    await decide(admin, workflowId, 'approve');
    expect(await admin.getByRole('status').textContent()).toContain('aprovado (2 de 2)');
    await eventually(
      () => payoutsSent(transactionId),
      (n) => n === 1,
    );
    await e.sandboxControl(`/sandbox/withdrawals/${transactionId}/settle`);
    await eventually(
      () => statusOf(transactionId),
      (s) => s.status === 'completed',
    );
    expect(await payoutsSent(transactionId)).toBe(1);
    // Decided: no form any more, and a late decision is refused as not awaiting approval.
    await admin.goto(`${e.url}/backoffice/flows/${workflowId}`);
    expect(await admin.locator('form.payout-decision').count()).toBe(0);
    const late = await admin.request.post(`${e.url}/backoffice/flows/${workflowId}/payout-decision`, {
      form: { _csrf: await formTokenOf(admin), decision: 'approve' },
    });
    expect(late.status()).toBe(409);

    expect(await audited(workflowId)).toEqual([
      { action: 'withdrawal.approve', outcome: 'refused', operator_email: people.approver },
      { action: 'withdrawal.approve', outcome: 'done', operator_email: people.second },
      { action: 'withdrawal.approve', outcome: 'refused', operator_email: people.second },
      { action: 'withdrawal.approve', outcome: 'done', operator_email: people.admin },
      { action: 'withdrawal.approve', outcome: 'conflict', operator_email: people.admin },
    ]);
    const { rows } = await e.pool.query(
      `SELECT before, after, reason FROM operator_actions WHERE case_id = $1 AND outcome = 'done' ORDER BY id`,
      [workflowId],
    );
    expect(rows[0]).toMatchObject({
      before: { status: 'awaiting_approval', approvals: [] },
      after: { status: 'awaiting_approval', approvals: [people.second] },
      reason: 'amount matches the prize won',
    });
    expect(rows[1]?.after.approvals).toEqual([people.second, people.admin]);
    expect(rows[1]?.after.status).not.toBe('awaiting_approval');
  }, 180_000);

  it('a refusal without a reason is a form error; with one, the withdrawal ends refused by an operator and nothing is sent', async () => {
    const { transactionId, workflowId } = await largePayout();
    const page = await signedInPage(people.approver);
    await page.goto(`${e.url}/backoffice/queues/${PAYOUT_APPROVALS_QUEUE}`);
    expect(await page.locator(`tr[data-workflow-id="${workflowId}"]`).textContent()).toContain(
      t.payouts.byTheCustomer,
    );
    await decide(page, workflowId, 'refuse');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(t.errors.formRefused);
    expect(await page.locator('[data-field="reason"]').textContent()).toContain(t.formErrors.mustSayWhy);
    expect(await statusOf(transactionId)).toMatchObject({ status: 'awaiting_approval' });
    expect(await audited(workflowId)).toEqual([]);

    await decide(page, workflowId, 'refuse', 'the winning bet is under investigation');
    expect(await page.getByRole('status').textContent()).toContain(
      t.payouts.refusedDone(pt.status('withdrawal', 'refused').toLowerCase()),
    );
    expect(await statusOf(transactionId)).toMatchObject({ status: 'refused', reason: 'operator_refused' });
    expect(await page.locator('dl.facts').textContent()).toContain(
      `${people.approver}: the winning bet is under investigation`,
    );
    await drawnAtBothWidths(page, 'case-payout-refused');
    expect(await payoutsSent(transactionId)).toBe(0);
    expect(await audited(workflowId)).toEqual([
      { action: 'withdrawal.refuse', outcome: 'done', operator_email: people.approver },
    ]);
  }, 180_000);
});
