import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogs, labelsFor } from '../../backoffice/i18n';
import { roleAtLeast } from '../../backoffice/session';
import { hashPassword } from '../../common/passwords';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import { operatorForSignIn, saveOperator } from '../../db/operators';
import { PAYOUT_APPROVALS_QUEUE, PAYOUT_DEADLINES_QUEUE } from '../../db/payout-queues';
import { type ApiEnv, startApiEnv } from '../api/support';
import { drawnAtBothWidths, SHOTS } from '../helpers/backoffice-pages';
import { launchChromium } from '../helpers/browser';

// The payout controls in the back office, in Debian's Chromium against the real stack: the
// approver role, the queue of payouts awaiting approval (four eyes) and the queue of open payouts
// by time left to their prize deadline, and the approver's decision on a payout's page. Here the
// queues read flows rows written straight into Postgres, as the withdrawal workflow writes them,
// so every column and the order can be set exactly.

const PASSWORD = 'correct horse battery staple';
const people = {
  reviewer: 'rui.reviewer@example.com',
  viewer: 'val.viewer@example.com',
  approver: 'ana.approver@example.com',
  second: 'beto.approver@example.com',
  admin: 'adm.admin@example.com',
} as const;
const t = catalogs['pt-BR'];
const pt = labelsFor('pt-BR');
const MIN = 60_000;

let e: ApiEnv;
let browser: Browser;
const contexts: BrowserContext[] = [];

async function signedInPage(email: string, width = 1280): Promise<Page> {
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
  await page.getByRole('heading', { name: t.home.title, level: 1 }).waitFor({ timeout: 10_000 });
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
  e = await startApiEnv();
  const hash = await hashPassword(PASSWORD);
  await saveOperator(e.pool, { email: people.reviewer, role: 'reviewer', passwordHash: hash });
  await saveOperator(e.pool, { email: people.viewer, role: 'viewer', passwordHash: hash });
  await saveOperator(e.pool, { email: people.approver, role: 'approver', passwordHash: hash });
  await saveOperator(e.pool, { email: people.second, role: 'approver', passwordHash: hash });
  await saveOperator(e.pool, { email: people.admin, role: 'admin', passwordHash: hash });
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
