import { randomBytes } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogs } from '../../backoffice/i18n';
import { hashPassword } from '../../common/passwords';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import { saveOperator } from '../../db/operators';
import { PAYOUT_DEADLINES_QUEUE } from '../../db/payout-queues';
import { type ApiEnv, eventually, freshCpf, json, onboardApproved, startApiEnv } from '../api/support';
import { launchChromium } from '../helpers/browser';

// The deadline queue fed by the withdrawal workflow itself, in Debian's Chromium against the real
// stack: a real payout the sandbox does not settle crosses its at-risk mark, then its deadline,
// and the queue shows each once the workflow has recorded it (its event written), the overdue
// payout above one asked earlier but due later; settled, it leaves the queue.

const PASSWORD = 'correct horse battery staple';
const REVIEWER = 'rita.reviewer@example.com';
const t = catalogs['pt-BR'];
const MIN = 60_000;
// At risk after 4 s, missed after 16 s: the window between is wide enough to read the page in.
const DEADLINE_S = 16;
const AT_RISK_SHARE = 0.25;

let e: ApiEnv;
let browser: Browser;
let context: BrowserContext | undefined;

async function signedInPage(email: string): Promise<Page> {
  context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    timezoneId: 'America/Sao_Paulo',
    locale: 'pt-BR',
  });
  const page = await context.newPage();
  await page.goto(`${e.url}/backoffice/sign-in`);
  await page.getByLabel(t.signIn.email).fill(email);
  await page.getByLabel(t.signIn.password).fill(PASSWORD);
  await page.getByRole('button', { name: t.signIn.submit }).click();
  await page.getByRole('heading', { name: t.home.title, level: 1 }).waitFor({ timeout: 10_000 });
  return page;
}

beforeAll(async () => {
  e = await startApiEnv(
    {},
    { env: { PAYOUT_DEADLINE: `${DEADLINE_S}s`, PAYOUT_AT_RISK_SHARE: String(AT_RISK_SHARE) } },
  );
  await saveOperator(e.pool, {
    email: REVIEWER,
    role: 'reviewer',
    passwordHash: await hashPassword(PASSWORD),
  });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await context?.close().catch(() => {});
  await browser?.close();
  await e?.close();
});

const statusOf = async (transactionId: string) =>
  (await json<{ state: { status: string } }>(await e.call('GET', `/v1/withdrawals/${transactionId}`))).state;

/** The deadline events the workflow recorded for the withdrawal, oldest first. */
const deadlineEvents = async (workflowId: string) =>
  (
    await e.pool.query(
      `SELECT type FROM events WHERE stream_id = $1 AND type LIKE 'withdrawal.deadline_%' ORDER BY seq`,
      [workflowId],
    )
  ).rows.map((r) => r.type as string);

/** The deadline queue's rows as the page lists them: workflow id and state, in order. */
async function queueRows(page: Page) {
  await page.goto(`${e.url}/backoffice/queues/${PAYOUT_DEADLINES_QUEUE}`);
  return page
    .locator('#queue-items tbody tr')
    .evaluateAll((rs) => rs.map((r) => [r.getAttribute('data-workflow-id'), r.getAttribute('data-state')]));
}

describe('the deadline queue on the real stack', () => {
  it('shows a payout the provider does not settle at risk, then missed above one due later; settled, it leaves', async () => {
    // Asked two hours ago under a longer deadline, due in 100 minutes: on time, and below the
    // overdue payout though asked first.
    const earlierId = withdrawalWorkflowId(`po-${randomBytes(5).toString('hex')}`);
    await e.pool.query(
      `INSERT INTO flows (workflow_id, type, business_id, status, amount_centavos, details, created_at, updated_at)
       VALUES ($1, 'withdrawal', $1, 'processing', 10000, $2, now() - interval '2 hours', now() - interval '2 hours')`,
      [
        earlierId,
        {
          dueAt: new Date(Date.now() + 100 * MIN).toISOString(),
          atRiskAt: new Date(Date.now() + 70 * MIN).toISOString(),
        },
      ],
    );

    const cpf = freshCpf();
    await onboardApproved(e, cpf);
    const page = await signedInPage(REVIEWER);
    const transactionId = `po-${randomBytes(5).toString('hex')}`;
    const workflowId = withdrawalWorkflowId(transactionId);
    const res = await e.call('POST', '/v1/withdrawals', {
      body: {
        transactionId,
        client: { externalId: `po-${cpf}`, cpf, email: 'ana@example.com', name: 'Ana Souza' },
        pixKey: cpf,
        pixType: 'CPF',
        amountCentavos: 10_000,
      },
    });
    expect(res.status).toBe(202);

    await eventually(
      () => deadlineEvents(workflowId),
      (types) => types.includes('withdrawal.deadline_at_risk'),
      { timeoutMs: 20_000 },
    );
    expect(await queueRows(page)).toEqual([
      [workflowId, 'at_risk'],
      [earlierId, 'on_time'],
    ]);
    expect(await page.locator(`tr[data-workflow-id="${workflowId}"]`).textContent()).toContain(
      t.payouts.atRisk,
    );

    await eventually(
      () => deadlineEvents(workflowId),
      (types) => types.includes('withdrawal.deadline_missed'),
      { timeoutMs: 30_000 },
    );
    expect(await deadlineEvents(workflowId)).toEqual([
      'withdrawal.deadline_at_risk',
      'withdrawal.deadline_missed',
    ]);
    expect(await queueRows(page)).toEqual([
      [workflowId, 'missed'],
      [earlierId, 'on_time'],
    ]);
    const late = (await page.locator(`tr[data-workflow-id="${workflowId}"]`).textContent()) ?? '';
    expect(late).toContain(t.payouts.missed);
    expect(late).toMatch(/vencido há/);

    await e.sandboxControl(`/sandbox/withdrawals/${transactionId}/settle`);
    await eventually(
      () => statusOf(transactionId),
      (s) => s.status === 'completed',
      { timeoutMs: 30_000 },
    );
    expect(await queueRows(page)).toEqual([[earlierId, 'on_time']]);
  }, 180_000);
});
