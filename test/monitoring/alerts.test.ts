import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogs, labelsFor } from '../../backoffice/i18n';
import { loadConfig } from '../../common/config';
import { createLogger } from '../../common/logger';
import { hashPassword } from '../../common/passwords';
import { PEOPLE_TIME_ZONE } from '../../common/people-time';
import { cpfHash } from '../../common/pii';
import { webhookBodySchema } from '../../contracts/events';
import { saveOperator } from '../../db/operators';
import { alertMonitorSettings, startAlertMonitor, TRIGGERS } from '../../monitoring/monitor';
import { proposePolicyChange } from '../../policy/changes';
import { applyAssignments } from '../../policy/diff';
import { type ApiEnv, counterValue, eventually, PII_KEY, peopleAt, startApiEnv } from '../api/support';
import { launchChromium } from '../helpers/browser';
import { newPerson, onboard, type Person } from '../helpers/people';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

// Monitoring alerts on the real stack (API over HTTP, worker, Temporal, Postgres, the sandbox and
// its notifications through the ingress, the alert monitor beside the API as api/main.ts runs
// it): deposits paid in the sandbox and payouts it settles, one person per rule with a history
// built to trip it and a clean person's history that trips none. Each rule raises exactly one
// alert, reading the events again raises nothing more, `alert.raised` reaches a subscribed
// webhook, and a reviewer marks an alert in the back office (Chromium), which the audit trail and
// the CSV export show. Windows are minutes, so every scenario falls within them.

const PASSWORD = 'correct horse battery staple';
const REVIEWER = 'rui.reviewer@example.com';
const VIEWER = 'vivi.viewer@example.com';
const t = catalogs['pt-BR'];
const pt = labelsFor('pt-BR');

/** Small bounds and ten-minute windows: each scenario trips its rule within them. */
const ALERT_ENV = {
  ALERT_MONITOR_INTERVAL_MS: '200',
  ALERT_STRUCTURING_BELOW_CENTAVOS: '5000',
  ALERT_STRUCTURING_BAND_PERCENT: '10',
  ALERT_STRUCTURING_COUNT: '3',
  ALERT_STRUCTURING_WINDOW_MS: '600000',
  ALERT_QUICK_IN_OUT_WINDOW_MS: '600000',
  ALERT_QUICK_IN_OUT_SHARE_PERCENT: '80',
  ALERT_QUICK_IN_OUT_MIN_CENTAVOS: '10000',
  ALERT_WINDOW_TOTAL_ABOVE_CENTAVOS: '100000',
  ALERT_WINDOW_TOTAL_WINDOW_MS: '600000',
  ALERT_WINDOW_TOTAL_OF: 'each',
  ALERT_NEW_ACCOUNT_WINDOW_MS: '600000',
  ALERT_NEW_ACCOUNT_MIN_CENTAVOS: '50000',
};

let e: ApiEnv;
let rx: WebhookReceiver;
let browser: Browser;
let n = 0;
const people: Record<'structuring' | 'quick' | 'total' | 'fresh' | 'clean', Person> = {
  structuring: newPerson(),
  quick: newPerson(),
  total: newPerson(),
  fresh: newPerson(),
  clean: newPerson(),
};
/** Every flow the scenarios made. */
const flows: string[] = [];

beforeAll(async () => {
  e = await startApiEnv(
    { pollScheduleMs: [1_000] },
    {
      alertMonitor: true,
      eventsRelay: { retryScheduleMs: [200, 300, 300], timeoutMs: 2_000 },
      env: {
        WEBHOOK_ALLOW_LOOPBACK: 'true',
        ...ALERT_ENV,
      },
    },
  );
  // Deposit and payout notifications come in through the API's own ingress; payouts settle at once.
  await e.sandboxControl('/sandbox/notifications', { url: e.ingress, partnerId: e.partnerId });
  await e.sandboxControl('/sandbox/auto', { settleWithdrawalsAfterMs: 100 });
  rx = await startWebhookReceiver();
  const res = await e.call('POST', '/v1/webhook-endpoints', {
    body: { url: rx.url, events: ['alert.raised'], description: 'compliance' },
  });
  expect(res.status).toBe(201);
  rx.secrets.push(((await res.json()) as { secret: string }).secret);
  const at = await peopleAt(e);
  await Promise.all(Object.values(people).map((p) => onboard(at, p)));
  const hash = await hashPassword(PASSWORD);
  await saveOperator(e.pool, { email: REVIEWER, name: 'Rui', role: 'reviewer', passwordHash: hash });
  await saveOperator(e.pool, { email: VIEWER, name: 'Vivi', role: 'viewer', passwordHash: hash });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await e?.close();
  await rx?.close();
});

const statusOf = async (path: string) =>
  ((await (await e.call('GET', path)).json()) as { state: { status: string } }).state.status;

/** A deposit paid by the person in the sandbox, until pixflow credits it. */
async function deposit(p: Person, amountCentavos: number): Promise<string> {
  const res = await e.call('POST', '/v1/deposits', {
    body: { client: { externalId: p.externalId, cpf: p.cpf, email: p.email, name: p.name }, amountCentavos },
  });
  expect(res.status).toBe(201);
  const { txid, workflowId } = (await res.json()) as { txid: string; workflowId: string };
  await e.sandboxControl(`/sandbox/deposits/${txid}/pay`, { payerName: p.name });
  await eventually(
    () => statusOf(`/v1/deposits/${txid}`),
    (s) => s === 'completed',
    { timeoutMs: 30_000 },
  );
  flows.push(workflowId);
  return workflowId;
}

/** A payout to the person's own CPF key, until the provider settled it and pixflow completed it. */
async function withdraw(p: Person, amountCentavos: number): Promise<string> {
  const transactionId = `alerts-${Date.now()}-${++n}`;
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
  const { workflowId } = (await res.json()) as { workflowId: string };
  await eventually(
    () => statusOf(`/v1/withdrawals/${transactionId}`),
    (s) => s === 'completed',
    { timeoutMs: 30_000 },
  );
  flows.push(workflowId);
  return workflowId;
}

interface AlertView {
  id: string;
  rule: string;
  flow_id: string;
  flow_ids: string[];
  facts: Record<string, number | string>;
  cpf_masked: string;
  status: string;
  policy_version: number | null;
}
const alertsOf = async (p: Person) =>
  (
    await e.pool.query<AlertView>('SELECT * FROM alerts WHERE cpf_hash = $1 ORDER BY raised_at', [
      cpfHash(p.cpf, PII_KEY),
    ])
  ).rows;

/** Until the monitor has read every triggering event of the flows made so far. */
async function monitorCaughtUp(): Promise<void> {
  await eventually(
    async () => {
      const { rows } = await e.pool.query(
        `SELECT count(*) FILTER (WHERE ev.position IS NULL OR ev.position > c.position) AS behind
           FROM events ev, alert_monitor_cursor c WHERE ev.stream_id = ANY($1) AND ev.type = ANY($2)`,
        [flows, TRIGGERS],
      );
      return Number(rows[0].behind);
    },
    (behind) => behind === 0,
    { timeoutMs: 20_000 },
  );
}

describe('monitoring rules over real movements', () => {
  it('raises one alert per rule on the history built for it, and none on a clean one', async () => {
    const s = people.structuring;
    const q = people.quick;
    const w = people.total;
    const f = people.fresh;
    const c = people.clean;
    const made = await Promise.all([
      // Three deposits just under R$ 50,00 (within 10%).
      (async () => [await deposit(s, 4_600), await deposit(s, 4_800), await deposit(s, 4_999)])(),
      // R$ 200,00 in, R$ 180,00 (90%) out with nothing between.
      (async () => [await deposit(q, 20_000), await withdraw(q, 18_000)])(),
      // R$ 1.100,00 deposited in the window, over R$ 1.000,00.
      (async () => [await deposit(w, 60_000), await deposit(w, 50_000)])(),
      // R$ 600,00 paid out minutes after registering.
      (async () => [await withdraw(f, 60_000)])(),
      // A few ordinary deposits, and a payout of a small part of them.
      (async () => [await deposit(c, 3_000), await deposit(c, 2_000), await withdraw(c, 1_000)])(),
    ]);
    await monitorCaughtUp();
    const [structuring, quick, total, fresh] = made;

    const sAlerts = await alertsOf(s);
    expect(sAlerts.map((a) => a.rule)).toEqual(['structuring']);
    expect(sAlerts[0]).toMatchObject({
      flow_id: structuring[2],
      flow_ids: structuring,
      facts: { deposits: 3, totalCentavos: 14_399, belowCentavos: 5_000, fromCentavos: 4_500 },
      status: 'open',
    });
    // The masked CPF and the keyed hash only.
    expect(JSON.stringify(sAlerts)).not.toContain(s.cpf);

    const qAlerts = await alertsOf(q);
    expect(qAlerts.map((a) => a.rule)).toEqual(['quick_in_out']);
    expect(qAlerts[0]).toMatchObject({
      flow_id: quick[1],
      flow_ids: quick,
      facts: { withdrawalCentavos: 18_000, depositsCentavos: 20_000, deposits: 1, sharePercent: 90 },
    });

    const tAlerts = await alertsOf(w);
    expect(tAlerts.map((a) => a.rule)).toEqual(['window_total']);
    expect(tAlerts[0]).toMatchObject({
      flow_id: total[1],
      flow_ids: total,
      facts: { direction: 'deposits', totalCentavos: 110_000, aboveCentavos: 100_000, movements: 2 },
    });

    const fAlerts = await alertsOf(f);
    expect(fAlerts.map((a) => a.rule)).toEqual(['new_account']);
    expect(fAlerts[0]).toMatchObject({ flow_id: fresh[0], facts: { withdrawalCentavos: 60_000 } });
    // Each raised under the policy's version in force: the one the environment seeded.
    for (const a of [...sAlerts, ...qAlerts, ...tAlerts, ...fAlerts])
      expect(a.policy_version, a.rule).toBe(1);
    expect(Number(fAlerts[0]?.facts.sinceRegistrationMs)).toBeLessThan(600_000);

    expect(await alertsOf(c)).toEqual([]);
    for (const rule of ['structuring', 'quick_in_out', 'window_total', 'new_account'])
      expect(await counterValue(e, 'pixflow_alerts_raised_total', { rule }), rule).toBe(1);
  }, 180_000);

  it('reading the events again (a crash before the cursor moved) raises nothing twice', async () => {
    const before = await e.pool.query('SELECT id FROM alerts ORDER BY id');
    await e.pool.query(`UPDATE alert_monitor_cursor SET position = 0`);
    await monitorCaughtUp();
    // Another pass of its own, as a second API process would make.
    await e.alertMonitor?.runOnce();
    const after = await e.pool.query('SELECT id FROM alerts ORDER BY id');
    expect(after.rows).toEqual(before.rows);
    expect(before.rows).toHaveLength(4);
    const events = await e.pool.query(
      `SELECT stream_id, count(*)::int AS n FROM events WHERE type = 'alert.raised' GROUP BY stream_id ORDER BY stream_id`,
    );
    expect(events.rows).toEqual(before.rows.map((r) => ({ stream_id: r.id, n: 1 })));
    expect(await counterValue(e, 'pixflow_alerts_raised_total', { rule: 'structuring' })).toBe(1);
  });

  it('delivers alert.raised to a subscribed webhook, signed, and lists it in GET /v1/events', async () => {
    const ids = (await e.pool.query<{ id: string }>('SELECT id FROM alerts ORDER BY id')).rows.map(
      (r) => r.id,
    );
    const delivered = await eventually(
      async () => rx.delivered(),
      (d) => new Set(d.map((r) => r.body.data.flowId)).size === ids.length,
      { timeoutMs: 20_000 },
    );
    expect(rx.unverified).toEqual([]);
    for (const r of delivered) {
      const body = webhookBodySchema.parse(r.body);
      expect(body.type).toBe('alert.raised');
      expect(body.data.flowType).toBe('alert');
      if (body.data.flowType !== 'alert') continue;
      expect(body.data.state.alertId).toBe(body.data.flowId);
      expect(ids).toContain(body.data.state.alertId);
    }
    expect(JSON.stringify(delivered)).not.toMatch(
      new RegExp(
        Object.values(people)
          .map((p) => p.cpf)
          .join('|'),
      ),
    );
    const page = (await (await e.call('GET', '/v1/events?type=alert.raised&limit=100')).json()) as {
      items: Array<{ type: string; data: { flowId: string } }>;
    };
    expect(page.items.map((i) => i.data.flowId).sort()).toEqual(ids);
  });
});

async function signedIn(email: string, width = 1280): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, locale: 'pt-BR' });
  const page = await context.newPage();
  await page.goto(`${e.url}/backoffice`);
  await page.getByLabel(t.signIn.email).fill(email);
  await page.getByLabel(t.signIn.password).fill(PASSWORD);
  await page.getByRole('button', { name: t.signIn.submit }).click();
  await page.getByRole('heading', { level: 1, name: t.home.title }).waitFor({ timeout: 10_000 });
  return page;
}

const auditOf = async (alertId: string) =>
  (
    await e.pool.query(
      'SELECT operator_email, action, outcome, before, after, reason FROM operator_actions WHERE case_id = $1 ORDER BY id',
      [alertId],
    )
  ).rows;

describe('the alerts queue in the back office', () => {
  it('a reviewer marks an alert reviewed with a note: the alert, its page and the audit trail say so', async () => {
    const [alert] = await alertsOf(people.structuring);
    if (!alert) throw new Error('no structuring alert');
    const page = await signedIn(REVIEWER);
    await page.getByRole('link', { name: t.nav.alerts }).click();
    await page.getByRole('heading', { level: 1, name: t.alerts.title }).waitFor();
    // Every alert in the queue, newest first, labelled in Portuguese.
    await expect.poll(() => page.locator('tr[data-alert]').count()).toBe(4);
    expect(await page.locator('main').textContent()).toContain(pt.alertRule('structuring'));

    // Filtered by rule, the one alert; its page shows what tripped it.
    await page.getByLabel(t.alerts.rule).selectOption('structuring');
    await page.getByRole('button', { name: t.alerts.filter }).click();
    await expect.poll(() => page.locator('tr[data-alert]').count()).toBe(1);
    await page.getByRole('link', { name: pt.alertRule('structuring') }).click();
    await page
      .getByRole('heading', { level: 1, name: t.alerts.heading(pt.alertRule('structuring')) })
      .waitFor();
    const text = await page.locator('main').textContent();
    expect(text).toContain(alert.cpf_masked);
    expect(text).toMatch(/R\$\s143,99/);

    // No note: the form is refused by name, and nothing changes.
    await page.locator('#alert-note').evaluate((el) => el.removeAttribute('required'));
    await page.getByRole('button', { name: t.alerts.record }).click();
    await page.getByRole('heading', { level: 1, name: t.errors.formRefused }).waitFor();
    expect(await page.locator('main').textContent()).toContain(`${t.fields.note}`);
    expect((await alertsOf(people.structuring))[0]?.status).toBe('open');

    await page.goto(`${e.url}/backoffice/alerts/${alert.id}`);
    await page.getByLabel(t.alerts.reviewedChoice).check();
    await page.getByLabel(t.alerts.noteLabel).fill('deposits of a weekly wage, checked with the customer');
    await page.getByRole('button', { name: t.alerts.record }).click();
    await page.getByText(t.alerts.done.reviewed ?? '').waitFor();
    expect(await page.locator('[data-status]').first().getAttribute('data-status')).toBe('reviewed');
    // The alert's own audit trail, on its page and in the table.
    expect(await page.locator('table.audit').textContent()).toContain(pt.action('alert.review'));
    const audit = await auditOf(alert.id);
    expect(audit).toEqual([
      {
        operator_email: REVIEWER,
        action: 'alert.review',
        outcome: 'done',
        before: { status: 'open' },
        after: { status: 'reviewed' },
        reason: 'deposits of a weekly wage, checked with the customer',
      },
    ]);
    expect((await alertsOf(people.structuring))[0]).toMatchObject({
      status: 'reviewed',
      decided_by: REVIEWER,
      note: 'deposits of a weekly wage, checked with the customer',
    });

    // Reviewed once, it may still be reported; marking it reviewed again is a conflict that changes nothing.
    const form = async (decision: string, note: string) => {
      await page.goto(`${e.url}/backoffice/alerts/${alert.id}`);
      const csrf = await page.locator('input[name=_csrf]').first().inputValue();
      return page.request.post(`${e.url}/backoffice/alerts/${alert.id}/decision`, {
        form: { _csrf: csrf, decision, note },
        maxRedirects: 0,
      });
    };
    const again = await form('reviewed', 'again');
    expect(again.status()).toBe(409);
    const bogus = await form('ignored', 'a note');
    expect(bogus.status()).toBe(400);
    expect(await bogus.text()).toContain(t.formErrors.decisionAlert);
    expect((await alertsOf(people.structuring))[0]?.status).toBe('reviewed');
    expect((await auditOf(alert.id)).map((a) => a.outcome)).toEqual(['done', 'conflict']);
    // Without the form token: refused, and nothing changes.
    const forged = await page.request.post(`${e.url}/backoffice/alerts/${alert.id}/decision`, {
      form: { decision: 'reported', note: 'forged' },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    expect((await alertsOf(people.structuring))[0]?.status).toBe('reviewed');
    expect(await auditOf(alert.id)).toHaveLength(2);
  }, 60_000);

  it('a viewer sees the queue but may not mark an alert: refused, audited, nothing changed', async () => {
    const [alert] = await alertsOf(people.quick);
    if (!alert) throw new Error('no quick in-out alert');
    const page = await signedIn(VIEWER);
    await page.goto(`${e.url}/backoffice/alerts/${alert.id}`);
    expect(await page.locator('main').textContent()).toContain(t.alerts.mayNotDecide(pt.role('viewer')));
    const csrf = await page.locator('input[name=_csrf]').first().inputValue();
    const res = await page.request.post(`${e.url}/backoffice/alerts/${alert.id}/decision`, {
      form: { _csrf: csrf, decision: 'reported', note: 'trying' },
      maxRedirects: 0,
    });
    expect(res.status()).toBe(403);
    expect((await alertsOf(people.quick))[0]?.status).toBe('open');
    expect(await auditOf(alert.id)).toMatchObject([
      { operator_email: VIEWER, action: 'alert.report', outcome: 'refused' },
    ]);
  }, 60_000);

  it('exports the alerts as CSV by status and period, audited; a bad filter is refused by name', async () => {
    const page = await signedIn(REVIEWER);
    await page.goto(`${e.url}/backoffice/alerts`);
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: t.alerts.export }).click();
    const csv = readFileSync(await (await download).path(), 'utf8');
    const lines = csv.trim().split('\n');
    expect(lines[0]).toBe(
      'id,raised_at,rule,status,cpf_masked,cpf_hash,triggered_by,flow_ids,facts,decided_by,decided_at,note,policy_version',
    );
    expect(lines).toHaveLength(5);
    for (const line of lines.slice(1)) expect(line, 'raised under version 1').toMatch(/,1$/);
    for (const rule of ['structuring', 'quick_in_out', 'window_total', 'new_account'])
      expect(csv).toMatch(new RegExp(`^alr_[0-9a-f]{32},[^,]+,${rule},`, 'm'));
    expect(csv).not.toMatch(
      new RegExp(
        Object.values(people)
          .map((p) => p.cpf)
          .join('|'),
      ),
    );

    // The operator's day (São Paulo's by default), not UTC's: they differ for three hours a night.
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: PEOPLE_TIME_ZONE }).format(new Date());
    const reviewed = await page.request.get(
      `${e.url}/backoffice/alerts.csv?status=reviewed&from=${today}&to=${today}`,
    );
    expect(reviewed.status()).toBe(200);
    const rows = (await reviewed.text()).trim().split('\n');
    expect(rows).toHaveLength(2);
    expect(rows[1]).toContain(',structuring,reviewed,');
    expect(rows[1]).toContain('deposits of a weekly wage');
    const earlier = await page.request.get(`${e.url}/backoffice/alerts.csv?to=01/01/2020`);
    expect((await earlier.text()).trim().split('\n')).toHaveLength(1);

    const exports = await e.pool.query(
      `SELECT operator_email FROM operator_actions WHERE action = 'alert.export' AND outcome = 'done'`,
    );
    expect(exports.rows.length).toBeGreaterThanOrEqual(3);

    for (const [query, field] of [
      ['from=31/02/2026', t.fields.from],
      ['status=closed', t.fields.status],
      ['rule=smurfing', t.fields.rule],
      ['cpf=123', t.fields.cpf],
      ['from=02/01/2026&to=01/01/2026', t.fields.to],
    ] as const) {
      for (const path of ['/backoffice/alerts', '/backoffice/alerts.csv']) {
        const res = await page.request.get(`${e.url}${path}?${query}`);
        expect(res.status(), `${path}?${query}`).toBe(400);
        expect(await res.text()).toContain(field);
      }
    }
    expect((await page.request.get(`${e.url}/backoffice/alerts/alr_nope`)).status()).toBe(404);
  }, 60_000);

  it('the queue and an alert read on a 390 px phone: nothing sideways, no rule code shown raw', async () => {
    const [alert] = await alertsOf(people.total);
    const page = await signedIn(REVIEWER, 390);
    for (const path of ['/backoffice/alerts', `/backoffice/alerts/${alert?.id}`]) {
      await page.goto(`${e.url}${path}`);
      const { scroll, client } = (await page.evaluate(
        '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
      )) as { scroll: number; client: number };
      expect(scroll, path).toBeLessThanOrEqual(client);
      const text = (await page.locator('main').textContent()) ?? '';
      expect(text, path).not.toMatch(/\b(window_total|quick_in_out|new_account|structuring|deposits)\b/);
      expect(text, path).not.toMatch(/\d{4}-\d{2}-\d{2}T/);
    }
  }, 60_000);
});

describe('the monitor across a restart', () => {
  it('a monitor stopped while money moves raises nothing meanwhile, and catches up once started again', async () => {
    await e.alertMonitor?.stop();
    const p = newPerson();
    await onboard(await peopleAt(e), p);
    const made = [await deposit(p, 30_000), await withdraw(p, 30_000)];
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await alertsOf(p)).toEqual([]);
    const restarted = startAlertMonitor({
      pool: e.pool,
      log: createLogger('alerts-test', 'silent'),
      settings: alertMonitorSettings(loadConfig(ALERT_ENV)),
      policy: e.policy,
    });
    try {
      await monitorCaughtUp();
      const alerts = await alertsOf(p);
      expect(alerts.map((a) => [a.rule, a.flow_id])).toEqual([['quick_in_out', made[1]]]);
      expect(alerts[0]?.facts).toMatchObject({
        withdrawalCentavos: 30_000,
        depositsCentavos: 30_000,
        sharePercent: 100,
      });
    } finally {
      await restarted.stop();
    }
  }, 90_000);
});

describe('the thresholds are the rules policy in force', () => {
  it('a threshold an admin changes applies at the next pass, and the alert records the version that raised it', async () => {
    const inForce = await e.policy.current();
    // Smaller payouts soon after registering are looked at too (under 50000 before).
    const changed = await proposePolicyChange(
      e.pool,
      { operatorId: null, operatorEmail: 'ana.admin@example.com', operatorRole: 'admin' },
      {
        policy: applyAssignments(inForce.policy, [['alerts.newAccount.minCentavos', '5000']]),
        reason: 'smaller payouts after registration are looked at too',
      },
    );
    expect(changed).toMatchObject({ kind: 'applied', version: inForce.version + 1 });
    await eventually(
      () => e.policy.current(),
      (p) => p.version === inForce.version + 1,
      5_000,
    );
    const monitor = startAlertMonitor({
      pool: e.pool,
      log: createLogger('alerts-test', 'silent'),
      settings: alertMonitorSettings(loadConfig(ALERT_ENV)),
      policy: e.policy,
    });
    try {
      const p = newPerson();
      await onboard(await peopleAt(e), p);
      const payout = await withdraw(p, 6_000);
      await monitorCaughtUp();
      const alerts = await alertsOf(p);
      expect(alerts.map((a) => [a.rule, a.flow_id, a.policy_version])).toEqual([
        ['new_account', payout, inForce.version + 1],
      ]);
    } finally {
      await monitor.stop();
    }
  }, 90_000);
});
