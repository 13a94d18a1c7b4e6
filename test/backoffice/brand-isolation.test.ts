import { randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../api-keys/admin';
import { catalogs } from '../../backoffice/i18n';
import { maskCpf } from '../../common/mask';
import { hashPassword } from '../../common/passwords';
import { cpfHash } from '../../common/pii';
import { depositReturnWorkflowId, depositWorkflowId } from '../../contracts/deposit';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import { raiseAlert } from '../../db/alerts';
import { createBrand } from '../../db/brands';
import { upsertFlowAndEvent } from '../../db/flows';
import { recordAction } from '../../db/operator-actions';
import { saveOperator } from '../../db/operators';
import { type ApiEnv, freshCpf, onboardApproved, PII_KEY, startApiEnv } from '../api/support';
import { launchChromium } from '../helpers/browser';

// An operator granted one brand sees and decides nothing of another's, on every back-office route
// and method, on the real API, worker, Temporal and Postgres; an admin sees both. The person is
// one (people are every brand's): their default-brand deposit goes through the API, and brand B's
// flows are written as B's workflows write them, with the same txid and transactionId as the
// default brand's, so only the brand tells them apart.

const PASSWORD = 'the operator password 1';
const B = 'brand-b';
const t = catalogs['pt-BR'];
const people = { approver: 'ana.a@example.com', viewer: 'val.a@example.com', admin: 'adm@example.com' };

let e: ApiEnv;
let cpf: string;
let hash: string;
/** A txid as the API takes one: digits. */
const digits = () => `${Date.now()}${randomBytes(4).readUInt32BE()}`;
const sameTxid = digits();
const returnTxid = digits();
const sameTransaction = `isw-${randomBytes(5).toString('hex')}`;
const ids = {
  aHeld: depositWorkflowId(sameTxid),
  bHeld: depositWorkflowId(sameTxid, B),
  aPayout: withdrawalWorkflowId(sameTransaction),
  bPayout: withdrawalWorkflowId(sameTransaction, B),
  bFailed: depositWorkflowId(digits(), B),
  aReturnable: depositWorkflowId(returnTxid),
  bReturnable: depositWorkflowId(returnTxid, B),
};
const bE2e = `E${randomBytes(15).toString('hex').toUpperCase()}B`;
const bAlert = `alr_${randomBytes(16).toString('hex')}`;
const aAlert = `alr_${randomBytes(16).toString('hex')}`;
let bKeyId: string;
/** Every string that names something of brand B's; none may reach an operator of the default brand alone. */
let bMarks: string[];
/** Brand B's events: its flows' status changes, its alert's. */
let bEventIds: string[];

const cookieOf = (res: Response) => res.headers.get('set-cookie')?.split(';')[0] ?? '';
const tokenIn = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

async function signIn(email: string): Promise<string> {
  const form = await fetch(`${e.url}/backoffice/sign-in`);
  const pre = cookieOf(form);
  const res = await fetch(`${e.url}/backoffice/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: tokenIn(await form.text()), email, password: PASSWORD }).toString(),
  });
  expect(res.status).toBe(303);
  return cookieOf(res) || pre;
}

const get = (cookie: string, path: string) =>
  fetch(`${e.url}/backoffice${path}`, { redirect: 'manual', headers: { cookie } });

async function post(cookie: string, path: string, form: Record<string, string>) {
  const token = tokenIn(await (await get(cookie, '/')).text());
  return fetch(`${e.url}/backoffice${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: token, ...form }).toString(),
  });
}

/** A flows row as the flow's workflow writes it (with its status event), of the brand its id names. */
async function flowRow(
  workflowId: string,
  p: { type: 'deposit' | 'withdrawal'; status: string; details?: Record<string, unknown> },
) {
  const [, brand, businessId] = /^(?:([a-z][a-z0-9-]+):)?(?:deposit|withdrawal)-(.+)$/.exec(workflowId) ?? [];
  await upsertFlowAndEvent(e.pool, {
    workflowId,
    type: p.type,
    businessId: businessId ?? '',
    status: p.status,
    cpfHash: hash,
    cpfMasked: maskCpf(cpf),
    merchant: brand ?? 'sandbox-merchant',
    amountCentavos: 43_210,
    reason: null,
    details: p.details ?? {},
    seq: 3,
    at: new Date(),
    runId: `run-${workflowId}`,
    ...(brand ? { brandId: brand } : {}),
  });
}

const audit = async (caseId: string) =>
  (
    await e.pool.query('SELECT action, outcome FROM operator_actions WHERE case_id = $1 ORDER BY id', [
      caseId,
    ])
  ).rows;

/** The GET pages and exports of the back office, as an operator reaches them. */
const pages = () => [
  '/',
  '/queues/counts',
  '/queues/deposits-held',
  '/queues/failed',
  '/queues/onboardings-awaiting-review',
  '/queues/withdrawals-awaiting-biometrics',
  '/queues/reconciliation-gave-up',
  '/queues/payouts-awaiting-approval',
  '/queues/payouts-deadline',
  '/queues/customers-impeded',
  `/search?q=${sameTxid}`,
  `/search?q=${sameTransaction}`,
  `/search?q=${bE2e}`,
  `/search?q=${encodeURIComponent(ids.bHeld)}`,
  `/customers/${hash}`,
  '/alerts',
  '/alerts.csv',
  '/audit',
  '/audit.csv',
  `/audit?case=${sameTxid}`,
  '/reversals',
  '/api-keys',
  '/connectors',
  `/flows/${encodeURIComponent(ids.aHeld)}`,
  `/flows/${encodeURIComponent(ids.aPayout)}`,
  `/alerts/${aAlert}`,
];

let browser: Browser | undefined;

beforeAll(async () => {
  e = await startApiEnv();
  const actor = { operatorId: null, operatorEmail: 'setup@example.com', operatorRole: null };
  await createBrand(e.pool, actor, { id: B, name: 'Brand B' });
  const passwordHash = await hashPassword(PASSWORD);
  // Made after brand B exists: each is granted the default brand alone, as every new operator is.
  await saveOperator(e.pool, { email: people.approver, role: 'approver', passwordHash });
  await saveOperator(e.pool, { email: people.viewer, role: 'viewer', passwordHash });
  await saveOperator(e.pool, { email: people.admin, role: 'admin', passwordHash });

  cpf = freshCpf();
  hash = cpfHash(cpf, PII_KEY);
  await onboardApproved(e, cpf);
  // The default brand's own deposit through the API, for the same person.
  const created = await e.call('POST', '/v1/deposits', {
    body: {
      txid: digits(),
      amountCentavos: 12_345,
      client: { externalId: `iso-${cpf}`, cpf, email: 'ana@example.com', name: 'Ana Souza' },
    },
  });
  expect(created.status).toBe(201);

  const held = { type: 'deposit', status: 'held', details: { payerName: 'Outra Pessoa' } } as const;
  await flowRow(ids.aHeld, held);
  await flowRow(ids.bHeld, held);
  const payout = {
    type: 'withdrawal',
    status: 'awaiting_approval',
    details: { dueAt: new Date(Date.now() + 3_600_000).toISOString(), approvalsRequired: 2, approvedBy: [] },
  } as const;
  await flowRow(ids.aPayout, payout);
  await flowRow(ids.bPayout, payout);
  await flowRow(ids.bFailed, { type: 'deposit', status: 'failed' });
  const returnable = (e2eId: string) =>
    ({
      type: 'deposit',
      status: 'completed',
      details: { connector: 'api-pix', e2eId, payerIsClient: true },
    }) as const;
  await flowRow(ids.aReturnable, returnable(`E${randomBytes(15).toString('hex').toUpperCase()}A`));
  await flowRow(ids.bReturnable, returnable(bE2e));
  // The person impeded and closed, so their returnable deposits are offered.
  await e.pool.query(
    `UPDATE customers SET eligibility = 'impeded', impeded_reason = 'self_excluded', impeded_since = now(),
            impeded_source = 'registry', closed_at = now(), closed_by = 'setup', closed_reason = 'setup'
      WHERE cpf_hash = $1`,
    [hash],
  );
  for (const [id, flowId] of [
    [aAlert, ids.aHeld],
    [bAlert, ids.bHeld],
  ] as const)
    await raiseAlert(e.pool, {
      id,
      rule: 'third_party_payer',
      cpfHash: hash,
      cpfMasked: maskCpf(cpf),
      flowId,
      flowIds: [ids.aHeld, ids.bHeld],
      facts: { amountCentavos: 43_210 },
    });
  await e.pool.query(
    `INSERT INTO deposit_reversals (e2e_id, return_id, txid, workflow_id, connector, nature, amount_centavos,
                                    partial, state, cpf_hash, cpf_masked, payer_cpf_masked)
     VALUES ($1, 'D-b-1', $2, $3, 'api-pix', 'MED_FRAUDE', 100, true, 'processing', $4, $5, NULL)`,
    [bE2e, returnTxid, ids.bReturnable, hash, maskCpf(cpf)],
  );
  // What the trail holds of B: an admin's decision on B's deposit, and B's own API key.
  await recordAction(e.pool, {
    operatorId: null,
    operatorEmail: 'someone.b@example.com',
    operatorRole: 'admin',
    action: 'deposit.accept',
    outcome: 'done',
    caseType: 'flow',
    caseId: ids.bHeld,
    reason: 'reason-of-brand-b',
  });
  bKeyId = (
    await createKey(e.pool, actor, {
      name: 'key-of-brand-b',
      scopes: ['deposits:read'],
      brand: B,
      expiresAt: null,
    })
  ).key.id;
  const bEvents = await e.pool.query('SELECT id FROM events WHERE brand_id = $1', [B]);
  bEventIds = bEvents.rows.map((r) => r.id as string);
  // B's flows wrote their status events, and its alert its own.
  expect(bEventIds.length).toBeGreaterThanOrEqual(5);
  bMarks = [
    ...bEventIds,
    B,
    ...Object.values(ids).filter((id) => id.startsWith(`${B}:`)),
    bE2e,
    bAlert,
    bKeyId,
    'reason-of-brand-b',
    'key-of-brand-b',
  ];
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await e?.close();
});

describe('an operator granted the default brand alone', () => {
  it('reads nothing of brand B on any page or export, and the same pages show the default brand’s', async () => {
    const cookie = await signIn(people.approver);
    for (const path of pages()) {
      const res = await get(cookie, path);
      expect(res.status, path).toBeLessThan(500);
      expect([200, 303, 404], path).toContain(res.status);
      // What the operator typed is said back to them; nothing else may name B.
      const asked = new URL(path, e.url).searchParams.get('q');
      const said = `${res.headers.get('location') ?? ''}${await res.text()}`;
      const body = asked ? said.replaceAll(asked, '').replaceAll(encodeURIComponent(asked), '') : said;
      for (const mark of bMarks) expect(body, `${path} names ${mark}`).not.toContain(mark);
    }
    // The default brand's are there: the queues, the person's page and the exports list them.
    expect(await (await get(cookie, '/queues/deposits-held')).text()).toContain(ids.aHeld);
    expect(await (await get(cookie, '/queues/payouts-awaiting-approval')).text()).toContain(ids.aPayout);
    const person = await (await get(cookie, `/customers/${hash}`)).text();
    expect(person).toContain(ids.aReturnable);
    expect(await (await get(cookie, '/alerts.csv')).text()).toContain(aAlert);
    // A txid both brands have is the default brand's case at once.
    const search = await get(cookie, `/search?q=${sameTxid}`);
    expect(search.status).toBe(303);
    expect(search.headers.get('location')).toBe(`/backoffice/flows/${encodeURIComponent(ids.aHeld)}`);
  });

  it("counts only its brands' flows in the queues", async () => {
    const count = async (cookie: string, queue: string) => {
      const html = await (await get(cookie, '/queues/counts')).text();
      const m = new RegExp(`data-queue="${queue}">[\\s\\S]*?<td class="num">(\\d+)</td>`).exec(html);
      return Number(m?.[1]);
    };
    const mine = await signIn(people.approver);
    const admin = await signIn(people.admin);
    expect(await count(mine, 'deposits-held')).toBe(1);
    expect(await count(admin, 'deposits-held')).toBe(2);
    expect(await count(mine, 'failed')).toBe(0);
    expect(await count(admin, 'failed')).toBe(1);
  });

  it("gets the 404 of an unknown case for each of brand B's, by every route and method, with nothing changed or written", async () => {
    for (const email of [people.approver, people.viewer]) {
      const cookie = await signIn(email);
      const unknown = await (await get(cookie, '/flows/deposit-nobody-ever')).text();
      const notFound = />([^<]*)<\/h1>/.exec(unknown)?.[1];
      for (const path of [
        `/flows/${encodeURIComponent(ids.bHeld)}`,
        `/flows/${encodeURIComponent(ids.bPayout)}`,
        `/flows/${encodeURIComponent(ids.bPayout)}/receipt.png`,
        `/flows/${encodeURIComponent(ids.bReturnable)}`,
        `/alerts/${bAlert}`,
      ]) {
        const res = await get(cookie, path);
        expect(res.status, path).toBe(404);
        expect(/>([^<]*)<\/h1>/.exec(await res.text())?.[1], path).toBe(notFound);
      }
      const before = await e.pool.query('SELECT count(*)::int AS n FROM operator_actions');
      for (const [path, form] of [
        [`/flows/${encodeURIComponent(ids.bHeld)}/resolution`, { decision: 'accept', reason: 'mine' }],
        [`/flows/${encodeURIComponent(ids.bPayout)}/payout-decision`, { decision: 'approve' }],
        [`/alerts/${bAlert}/decision`, { decision: 'reviewed', note: 'seen' }],
        [`/customers/${hash}/return-deposits`, { deposit: ids.bReturnable, reason: 'back to the payer' }],
      ] as const) {
        const res = await post(cookie, path, form);
        expect(res.status, `${email} ${path}`).toBe(404);
      }
      // Nothing written of B's: not even a refusal.
      const after = await e.pool.query('SELECT count(*)::int AS n FROM operator_actions');
      expect(after.rows[0].n).toBe(before.rows[0].n);
    }
    const statuses = await e.pool.query('SELECT workflow_id, status FROM flows WHERE workflow_id = ANY($1)', [
      [ids.bHeld, ids.bPayout, ids.bReturnable],
    ]);
    expect(Object.fromEntries(statuses.rows.map((r) => [r.workflow_id, r.status]))).toEqual({
      [ids.bHeld]: 'held',
      [ids.bPayout]: 'awaiting_approval',
      [ids.bReturnable]: 'completed',
    });
    expect((await e.pool.query('SELECT status FROM alerts WHERE id = $1', [bAlert])).rows[0].status).toBe(
      'open',
    );
    expect(await e.workflowExists(depositReturnWorkflowId(returnTxid, B))).toBe(false);
    expect(await audit(ids.bHeld)).toEqual([{ action: 'deposit.accept', outcome: 'done' }]);
  });
});

describe('an admin', () => {
  it("sees both brands' flows, cases, alerts, audit rows and exports, each flow naming its brand", async () => {
    const cookie = await signIn(people.admin);
    // The person's timeline holds both brands' events.
    const person = await (await get(cookie, `/customers/${hash}`)).text();
    const flowEvents = await e.pool.query(
      `SELECT id FROM events WHERE brand_id = $1 AND stream_type IN ('deposit', 'withdrawal')`,
      [B],
    );
    expect(flowEvents.rows.length).toBe(4);
    for (const { id } of flowEvents.rows) expect(person).toContain(id);
    const held = await (await get(cookie, '/queues/deposits-held')).text();
    expect(held).toContain(ids.aHeld);
    expect(held).toContain(ids.bHeld);
    expect(held).toContain(`data-brand="${B}"`);
    const bCase = await get(cookie, `/flows/${encodeURIComponent(ids.bHeld)}`);
    expect(bCase.status).toBe(200);
    expect(await bCase.text()).toContain(B);
    expect((await get(cookie, `/alerts/${bAlert}`)).status).toBe(200);
    expect(await (await get(cookie, '/alerts.csv')).text()).toContain(bAlert);
    expect(await (await get(cookie, '/audit.csv')).text()).toContain('reason-of-brand-b');
    // A case named by its txid is found at each brand.
    expect(await (await get(cookie, `/audit?case=${sameTxid}`)).text()).toContain('reason-of-brand-b');
    expect(await (await get(cookie, '/reversals')).text()).toContain(ids.bReturnable);
    expect(await (await get(cookie, '/api-keys')).text()).toContain('key-of-brand-b');
    // Searching a txid both brands have lists both; the brand filter narrows to one.
    const both = await (await get(cookie, `/search?q=${sameTxid}`)).text();
    expect(both).toContain(ids.aHeld);
    expect(both).toContain(ids.bHeld);
    const onlyB = await get(cookie, `/search?q=${sameTxid}&brand=${B}`);
    expect(onlyB.status).toBe(303);
    expect(onlyB.headers.get('location')).toBe(`/backoffice/flows/${encodeURIComponent(ids.bHeld)}`);
    const queueB = await (await get(cookie, `/queues/deposits-held?brand=${B}`)).text();
    expect(queueB).toContain(ids.bHeld);
    expect(queueB).not.toContain(`"${ids.aHeld}"`);
  });

  it("returns brand B's deposit under brand B: its return flow is B's, apart from the default brand's of the same txid", async () => {
    const cookie = await signIn(people.admin);
    const res = await post(cookie, `/customers/${hash}/return-deposits`, {
      deposit: ids.bReturnable,
      reason: 'account closed: back to the payer',
    });
    expect(res.status).toBe(303);
    expect(await e.workflowExists(depositReturnWorkflowId(returnTxid, B))).toBe(true);
    expect(await e.workflowExists(depositReturnWorkflowId(returnTxid))).toBe(false);
    expect(await audit(ids.bReturnable)).toEqual([{ action: 'deposit.return', outcome: 'done' }]);
  });
});

describe('granting a brand', () => {
  it('lets the operator see it at once, and revoking it hides it again; both audited', async () => {
    const admin = await signIn(people.admin);
    const mine = await signIn(people.approver);
    expect((await get(mine, `/flows/${encodeURIComponent(ids.bHeld)}`)).status).toBe(404);
    expect((await post(admin, '/operators/grant', { email: people.approver, brand: B })).status).toBe(303);
    expect((await get(mine, `/flows/${encodeURIComponent(ids.bHeld)}`)).status).toBe(200);
    expect(await (await get(admin, '/operators')).text()).toContain(`data-brands="${B} default"`);
    expect((await post(admin, '/operators/revoke', { email: people.approver, brand: B })).status).toBe(303);
    expect((await get(mine, `/flows/${encodeURIComponent(ids.bHeld)}`)).status).toBe(404);
    expect(await audit(people.approver)).toEqual([
      { action: 'operator.brand.grant', outcome: 'done' },
      { action: 'operator.brand.revoke', outcome: 'done' },
    ]);
    // Only an admin grants: anyone else is refused, audited, with nothing granted.
    expect((await post(mine, '/operators/grant', { email: people.approver, brand: B })).status).toBe(403);
    expect((await get(mine, '/operators')).status).toBe(403);
    expect((await get(mine, `/flows/${encodeURIComponent(ids.bHeld)}`)).status).toBe(404);
  });
});

describe('in Chromium', () => {
  it("the default brand's operator's search form offers no brand of another's, and the admin's offers both", async () => {
    browser = await launchChromium();
    for (const [email, expected] of [
      [people.approver, []],
      [people.admin, ['', B, 'default']],
    ] as const) {
      const context = await browser.newContext({ locale: 'pt-BR' });
      const page = await context.newPage();
      await page.goto(`${e.url}/backoffice/sign-in`);
      await page.getByLabel(t.signIn.email).fill(email);
      await page.getByLabel(t.signIn.password).fill(PASSWORD);
      await page.getByRole('button', { name: t.signIn.submit }).click();
      await page.getByRole('heading', { name: t.home.title, level: 1 }).waitFor({ timeout: 10_000 });
      await page.goto(`${e.url}/backoffice/search`);
      const options = await page
        .locator('#search-brand option')
        .evaluateAll((os) => os.map((o) => o.getAttribute('value') ?? ''));
      expect(options).toEqual(expected);
      await context.close();
    }
  });
});
