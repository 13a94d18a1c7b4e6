import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { catalogs } from '../../backoffice/i18n';
import { createLogger } from '../../common/logger';
import { maskCpf } from '../../common/mask';
import { hashPassword } from '../../common/passwords';
import {
  type ApiPixConnector,
  createApiPixConnector,
  readPixNotifications,
  toApiPixTxid,
} from '../../connectors/api-pix';
import { connectorRegistry } from '../../connectors/registry';
import {
  type DepositInput,
  type DepositState,
  depositWorkflowId,
  qrCodeUpdate,
} from '../../contracts/deposit';
import { depositReversalsWorkflowId, reversalSweepWorkflowId } from '../../contracts/deposit-reversal';
import { webhookBodySchema } from '../../contracts/events';
import { saveOperator } from '../../db/operators';
import { type ApiPixListener, startApiPixListener } from '../../ingress/api-pix-listener';
import { ensureReversalSweep } from '../../ingress/api-pix-reversals';
import { type InboxRelay, startInboxRelay } from '../../ingress/inbox-relay';
import { staticPolicyReader } from '../../policy/seed';
import { type ApiEnv, eventually, freshCpf, PII_KEY, startApiEnv } from '../api/support';
import { type ApiPixForTest, apiPixRequest, startApiPixForTest } from '../helpers/api-pix';
import { problemsOf } from '../helpers/backoffice-pages';
import { launchChromium } from '../helpers/browser';
import { verifiedDepositor } from '../helpers/customers';
import { recordHistory } from '../helpers/histories';
import { policyWith } from '../helpers/policy';
import { createTestWorker } from '../helpers/worker';

// A deposit on a PSP speaking the API Pix, end to end over the real pieces: the emulated PSP
// (HTTPS, mutual TLS both ways) posts its webhook when the deposit is paid, to pixflow's own
// listener, which stores it in the inbox and wakes the deposit; then it settles a MED return the
// payer's side started and posts again, and the deposit's reversal check starts on the real
// Temporal; the check asks the PSP through the API Pix connector and records the
// return once, with its `deposit.reversed` event, however many copies of the webhook come (one at
// a time or two at once); the monitor raises its alert, and the back office lists it in Chromium.

const SECRET = `api-pix-path-${randomBytes(8).toString('hex')}`;
const PASSWORD = 'correct horse battery staple';
const VIEWER = 'vera.viewer@example.com';
const VIEWER_EN = 'ed.viewer@example.com';
const t = catalogs['pt-BR'];
const en = catalogs.en;
const log = createLogger('api-pix-test', 'silent');

let e: ApiEnv;
let psp: ApiPixForTest;
let connector: ApiPixConnector;
let listener: ApiPixListener;
let relay: InboxRelay;
let native: NativeConnection;
let stopWorker: () => Promise<void>;
let browser: Browser | undefined;
/** The reversal checks' own task queue: its worker holds the API Pix connector. */
let reversalsQueue: string;

beforeAll(async () => {
  e = await startApiEnv({}, { alertMonitor: true, env: { ALERT_MONITOR_INTERVAL_MS: '200' } });
  psp = await startApiPixForTest({ returnSettleMs: 200 });
  connector = createApiPixConnector({
    baseUrl: psp.url,
    tokenUrl: psp.tokenUrl,
    clientId: psp.clientId,
    clientSecret: psp.clientSecret,
    ...psp.tls,
    pixKey: psp.pixKey,
  });
  reversalsQueue = `${e.taskQueue}-reversals`;
  native = await NativeConnection.connect({ address: inject('temporalAddress') });
  const worker = await createTestWorker({
    connection: native,
    client: e.temporal,
    taskQueue: reversalsQueue,
    provider: e.provider,
    collectors: connectorRegistry([connector]),
    pool: e.pool,
    piiKey: PII_KEY,
    // Deposits on this queue go to the API Pix PSP.
    policy: staticPolicyReader(
      policyWith({
        deposits: {
          routing: {
            connectors: ['api-pix'],
            breaker: { failures: 5, windowMs: 60_000, coolDownMs: 30_000 },
          },
        },
      }),
    ),
  });
  const running = worker.run();
  let stopped = false;
  stopWorker = async () => {
    if (stopped) return;
    stopped = true;
    worker.shutdown();
    await running;
  };
  const ingress = {
    config: { API_PIX_WEBHOOK_SECRET: SECRET, TEMPORAL_TASK_QUEUE: reversalsQueue },
    pool: e.pool,
    temporal: e.temporal,
    log,
  };
  listener = await startApiPixListener({
    ...ingress,
    read: readPixNotifications,
    port: 0,
    host: '127.0.0.1',
    tls: { cert: psp.webhook.serverCert, key: psp.webhook.serverKey, clientCa: psp.webhook.clientCa },
  });
  // The inbox relay of this deployment: it delivers the copies a signal's window held back.
  relay = startInboxRelay({ ...ingress, intervalMs: 100, delivery: { taskQueue: reversalsQueue } });
  await connector.registerWebhook(`https://127.0.0.1:${listener.port}/webhooks/api-pix/${SECRET}`);
  const passwordHash = await hashPassword(PASSWORD);
  await saveOperator(e.pool, { email: VIEWER, role: 'viewer', passwordHash });
  await saveOperator(e.pool, { email: VIEWER_EN, role: 'viewer', passwordHash, language: 'en' });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await relay?.stop();
  await listener?.close();
  await stopWorker?.();
  await native?.close();
  await psp?.close();
  await e?.close();
});

/**
 * A deposit routed to the API Pix PSP, asked as the API asks, paid there by the person: the PSP's
 * webhook is what wakes it (no sweep on this queue, and the env's own cannot reach the PSP).
 */
async function creditedDeposit(amountCentavos: number) {
  const cpf = freshCpf();
  await verifiedDepositor(e.pool, PII_KEY, cpf);
  const txid = `${Date.now()}${randomBytes(3).readUIntBE(0, 3)}`;
  const input: DepositInput = {
    txid,
    merchant: 'sandbox-merchant',
    client: { externalId: `rv-${txid}`, cpf, email: 'ana@example.com', name: 'Ana Souza' },
    amountCentavos,
  };
  const workflowId = depositWorkflowId(txid);
  await e.temporal.workflow.executeUpdateWithStart(qrCodeUpdate, {
    args: [{ amountCentavos, payerCpf: cpf, merchant: input.merchant, requestId: 'req-1' }],
    startWorkflowOperation: new WithStartWorkflowOperation('depositWorkflow', {
      workflowId,
      taskQueue: reversalsQueue,
      args: [{ ...input, requestId: 'req-1' }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
  const pix = await psp.pay(toApiPixTxid(txid));
  const done: DepositState = await e.temporal.workflow.getHandle(workflowId).result();
  expect(done).toMatchObject({ status: 'completed', connector: 'api-pix' });
  expect(done.payment?.e2eId).toBe(pix.endToEndId);
  // Woken by the webhook's hint, which went through the inbox.
  expect(done.notifications).toBeGreaterThanOrEqual(1);
  const hints = await e.pool.query(
    `SELECT delivered_at FROM webhook_inbox WHERE workflow_id = $1 AND point = 'api-pix'`,
    [workflowId],
  );
  expect(hints.rows.some((r) => r.delivered_at !== null)).toBe(true);
  return { txid, cpf, e2eId: pix.endToEndId as string, workflowId };
}

const reversalsOf = async (txid: string) =>
  (await e.pool.query('SELECT * FROM deposit_reversals WHERE txid = $1', [txid])).rows;

const reversedEvents = async (workflowId: string) =>
  (
    await e.pool.query(
      `SELECT type, data FROM events WHERE stream_id = $1 AND type = 'deposit.reversed' ORDER BY seq`,
      [workflowId],
    )
  ).rows;

/** The PSP's Pix as its webhook carries it, read from the PSP. */
async function pixBody(e2eId: string) {
  const token = await psp.token('pix.read');
  const answer = await psp.request(`/pix/${e2eId}`, { headers: { authorization: `Bearer ${token}` } });
  expect(answer.status).toBe(200);
  return { pix: [answer.body] };
}

/** A POST to the listener as the PSP makes it: its webhook client certificate. */
const asThePsp = (path: string, body: unknown) =>
  apiPixRequest(`https://127.0.0.1:${listener.port}${path}`, {
    method: 'POST',
    body,
    tls: {
      cert: readFileSync(psp.pki.pspWebhookClient.cert, 'utf8'),
      key: readFileSync(psp.pki.pspWebhookClient.key, 'utf8'),
      ca: psp.webhook.serverCa,
    },
  });

/** Every inbox row of the deposit's reversal check is delivered (none pending). */
const checksDelivered = async (txid: string) =>
  (
    await e.pool.query(
      `SELECT count(*) FILTER (WHERE delivered_at IS NULL AND gave_up_at IS NULL)::int AS pending,
              count(*)::int AS rows
         FROM webhook_inbox WHERE workflow_id = $1`,
      [depositReversalsWorkflowId(txid)],
    )
  ).rows[0] as { pending: number; rows: number };

describe('a deposit on an API Pix PSP', () => {
  it('is woken by its paid webhook; a MED return of it is recorded once from the PSP, whatever the copies of its webhook, with one deposit.reversed event, an alert and a line in the queue', async () => {
    const d = await creditedDeposit(10_000);
    // The payer's side opens a MED return for fraud of part of it; the PSP settles it and posts.
    await psp.med(d.e2eId, { natureza: 'MED_FRAUDE', valor: '40.00' });

    const [recorded] = await eventually(
      () => reversalsOf(d.txid),
      (rows) => rows.length === 1 && rows[0].state === 'returned',
      { timeoutMs: 30_000 },
    );
    expect(recorded).toMatchObject({
      e2e_id: d.e2eId,
      nature: 'med_fraud',
      amount_centavos: 4000,
      partial: true,
      connector: 'api-pix',
      cpf_masked: maskCpf(d.cpf),
    });
    expect(recorded.settled_at).toBeInstanceOf(Date);

    // The same news again, once, then two copies at once: still one return, one event.
    const body = await pixBody(d.e2eId);
    const path = `/webhooks/api-pix/${SECRET}/pix`;
    expect((await asThePsp(path, body)).status).toBe(200);
    const both = await Promise.all([asThePsp(path, body), asThePsp(path, body)]);
    expect(both.map((a) => a.status)).toEqual([200, 200]);
    await eventually(
      () => checksDelivered(d.txid),
      (c) => c.pending === 0 && c.rows >= 1,
      { timeoutMs: 30_000 },
    );
    expect(await reversalsOf(d.txid)).toHaveLength(1);

    const events = await reversedEvents(d.workflowId);
    expect(events).toHaveLength(1);
    const reversal = events[0].data.details.reversal;
    expect(reversal).toMatchObject({
      e2eId: d.e2eId,
      nature: 'med_fraud',
      amountCentavos: 4000,
      partial: true,
      state: 'returned',
    });
    // The deposit stays credited; its row shows the reversal beside its status.
    const row = (
      await e.pool.query('SELECT status, details FROM flows WHERE workflow_id = $1', [d.workflowId])
    ).rows[0];
    expect(row.status).toBe('completed');
    expect(row.details.reversed).toHaveLength(1);
    // The deposit's own read shows it too, though its run is closed: status kept, the return beside it.
    const read = await e.call('GET', `/v1/deposits/${d.txid}`);
    expect(read.status).toBe(200);
    const { state: readState } = (await read.json()) as {
      state: {
        status: string;
        reversed?: Array<{ nature: string; amountCentavos: number; partial: boolean }>;
      };
    };
    expect(readState.status).toBe('completed');
    expect(readState.reversed).toEqual([
      expect.objectContaining({ nature: 'med_fraud', amountCentavos: 4000, partial: true }),
    ]);
    // The event is what a backend gets: the webhook body's schema reads it.
    const pulled = await e.call('GET', `/v1/events?type=deposit.reversed&flow=${d.workflowId}`);
    const page = (await pulled.json()) as { items: unknown[] };
    expect(page.items).toHaveLength(1);
    expect(webhookBodySchema.safeParse(page.items[0]).success).toBe(true);

    // The monitor raises the reversals alert once, with the return's nature and amount.
    const alerts = await eventually(
      async () =>
        (await e.pool.query(`SELECT * FROM alerts WHERE rule = 'reversals' AND flow_id = $1`, [d.workflowId]))
          .rows,
      (rows) => rows.length === 1,
      { timeoutMs: 20_000 },
    );
    expect(alerts[0].facts).toMatchObject({
      nature: 'med_fraud',
      reversedCentavos: 4000,
      partial: 'partial',
    });
    expect(alerts[0].policy_version).toBeGreaterThan(0);

    // The check's run ends once the copies are over; its history is a replay fixture.
    const handle = e.temporal.workflow.getHandle(depositReversalsWorkflowId(d.txid));
    expect((await handle.result()).checks).toBeGreaterThanOrEqual(1);
    await recordHistory(handle, 'deposit-reversals-med');

    // Operators see it under Devoluções MED, newest first, linked to the deposit's case.
    browser = await launchChromium();
    const context = await browser.newContext({ locale: 'pt-BR', timezoneId: 'America/Sao_Paulo' });
    const tab = await context.newPage();
    await tab.goto(`${e.url}/backoffice/sign-in`);
    await tab.getByLabel(t.signIn.email).fill(VIEWER);
    await tab.getByLabel(t.signIn.password).fill(PASSWORD);
    await tab.getByRole('button', { name: t.signIn.submit }).click();
    await tab.getByRole('heading', { name: t.home.title, level: 1 }).waitFor({ timeout: 10_000 });
    await tab.getByRole('link', { name: t.home.reversals }).click();
    await tab.getByRole('heading', { name: t.reversals.title, level: 1 }).waitFor({ timeout: 10_000 });
    const line = tab.locator(`#reversal-items tbody tr[data-workflow-id="${d.workflowId}"]`);
    expect(await line.count()).toBe(1);
    const text = ((await line.textContent()) ?? '').replace(/\s+/g, ' ');
    expect(text).toContain(t.reversals.natures.med_fraud);
    expect(text).toContain('R$ 40,00');
    expect(text).toContain(t.reversals.partial);
    expect(text).toContain(t.reversals.states.returned);
    expect(text).toContain(maskCpf(d.cpf));
    // The payer as the PSP names them (here the person paid it themselves), masked.
    expect(await line.locator('td.payer').textContent()).toBe(maskCpf(d.cpf));
    expect(text).not.toContain(d.cpf);
    // Nothing wider than the window or cut, no code shown raw, at both widths.
    for (const width of [1280, 390]) {
      await tab.setViewportSize({ width, height: 900 });
      expect(await problemsOf(tab), `${width} px`).toEqual([]);
    }
    await line.getByRole('link', { name: /Depósito/ }).click();
    await tab.waitForURL((u) => u.pathname === `/backoffice/flows/${encodeURIComponent(d.workflowId)}`);
    await context.close();

    // In English for an operator who reads English.
    const inEnglish = await browser.newContext({ locale: 'en-US', timezoneId: 'America/Sao_Paulo' });
    const english = await inEnglish.newPage();
    await english.goto(`${e.url}/backoffice/sign-in`);
    await english.getByLabel(en.signIn.email).fill(VIEWER_EN);
    await english.getByLabel(en.signIn.password).fill(PASSWORD);
    await english.getByRole('button', { name: en.signIn.submit }).click();
    await english.getByRole('heading', { name: en.home.title, level: 1 }).waitFor({ timeout: 10_000 });
    await english.getByRole('link', { name: en.home.reversals }).click();
    await english.getByRole('heading', { name: en.reversals.title, level: 1 }).waitFor({ timeout: 10_000 });
    const enRow = english.locator(`#reversal-items tbody tr[data-workflow-id="${d.workflowId}"]`);
    const words = ((await enRow.textContent()) ?? '').replace(/\s+/g, ' ');
    expect(words).toContain(en.reversals.natures.med_fraud);
    expect(words).toContain(en.reversals.partial);
    await inEnglish.close();
  }, 120_000);

  it('whose webhook was lost is found by the sweep over recent deposits, once', async () => {
    const d = await creditedDeposit(20_000);
    // The MED return's webhook never reaches pixflow.
    await psp.faults({ webhooks: { dropNext: 1 } });
    await psp.med(d.e2eId, { natureza: 'MED_OPERACIONAL' });
    await eventually(
      async () =>
        ((await psp.state()).deliveries as Array<{ body: unknown; status: string }>).filter(
          (x) =>
            JSON.stringify(x.body).includes('MED_OPERACIONAL') && JSON.stringify(x.body).includes(d.e2eId),
        ),
      (drops) => drops.some((x) => x.status === 'dropped'),
      { timeoutMs: 15_000 },
    );
    expect(await reversalsOf(d.txid)).toHaveLength(0);

    // What every API process taking API Pix webhooks does at start.
    await ensureReversalSweep(e.temporal, reversalsQueue, log, { retryMs: 500, stopped: () => false });
    const [found] = await eventually(
      () => reversalsOf(d.txid),
      (rows) => rows.length === 1,
      { timeoutMs: 30_000 },
    );
    expect(found).toMatchObject({
      nature: 'med_operational',
      amount_centavos: 20_000,
      partial: false,
      state: 'returned',
    });
    const handle = e.temporal.workflow.getHandle(reversalSweepWorkflowId(reversalsQueue));
    // Its batch done (the earlier deposit looked at again, nothing new there), it rests.
    await eventually(
      async () => (await handle.fetchHistory()).events ?? [],
      (events) => events.some((x) => x.timerStartedEventAttributes),
      { timeoutMs: 30_000 },
    );
    expect(await reversedEvents(d.workflowId)).toHaveLength(1);
    const first = (
      await e.pool.query(`SELECT txid FROM deposit_reversals WHERE workflow_id <> $1`, [d.workflowId])
    ).rows;
    expect(first).toHaveLength(1);
    await stopWorker();
    await handle.terminate('test over');
    await recordHistory(handle, 'deposit-reversal-sweep');
  }, 90_000);
});
