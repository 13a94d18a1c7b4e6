import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpfHash } from '../../common/pii';
import { depositWorkflowId } from '../../contracts/deposit';
import { launchChromium } from '../helpers/browser';
import { newPerson, onboard, ownCpfKey, type Person } from '../helpers/people';
import {
  type ApiEnv,
  CODEC_TOKEN,
  eventually,
  expectProblem,
  freshCpf,
  json,
  PII_KEY,
  peopleAt,
  startApiEnv,
} from './support';

let e: ApiEnv;
let n = 0;
/** Onboarded (approved) people, one per test that lists a person's flows: money moves only for them. */
let listed: Person;
let everyType: Person;

beforeAll(async () => {
  e = await startApiEnv();
  const at = await peopleAt(e);
  [listed, everyType] = await Promise.all([onboard(at), onboard(at)]);
});
afterAll(async () => {
  await e?.close();
});

const depositBody = (client: Person, txid: string) => ({
  txid,
  client,
  amountCentavos: 1_000 + ++n,
});

interface Page {
  items: {
    workflowId: string;
    type: string;
    businessId: string;
    status: string;
    cpfHash: string | null;
    cpfMasked: string;
    amountCentavos: number;
  }[];
  next: string | null;
}

describe('authentication', () => {
  it('no key or a wrong key is 401 problem+json and starts nothing', async () => {
    const txid = `5${Date.now()}`;
    const body = depositBody(newPerson(), txid);
    const none = await expectProblem(
      await e.call('POST', '/v1/deposits', { body, key: null }),
      401,
      'unauthorized',
    );
    expect(none.title).toBe('Missing API key');
    await expectProblem(
      await e.call('POST', '/v1/deposits', { body, key: 'wrong-key' }),
      401,
      'unauthorized',
    );
    await expectProblem(await e.call('GET', '/v1/flows', { key: 'test-api-key-1x' }), 401);
    expect(await e.workflowExists(depositWorkflowId(txid))).toBe(false);
    // Any configured key works.
    expect((await e.call('GET', '/v1/flows', { key: 'another-key' })).status).toBe(200);
  });
});

describe('GET /v1/flows', () => {
  it('filters by CPF, type, status and time, and pages with a cursor', async () => {
    const { cpf } = listed;
    const txids = [0, 1, 2].map((i) => `4${Date.now()}${i}`);
    for (const txid of txids) {
      expect((await e.call('POST', '/v1/deposits', { body: depositBody(listed, txid) })).status).toBe(201);
    }
    const list = (query: string) => e.call('GET', `/v1/flows?${query}`).then((r) => json<Page>(r));
    // The flows write their rows themselves, just after the QR is handed out.
    await eventually(
      () => list(`cpf=${cpf}&status=awaiting_payment`),
      (p) => p.items.length === 3,
    );

    const first = await list(`cpf=${cpf}&type=deposit&limit=2`);
    expect(first.items).toHaveLength(2);
    expect(first.next).toEqual(expect.any(String));
    const second = await list(`cpf=${cpf}&type=deposit&limit=2&cursor=${first.next}`);
    expect(second.items).toHaveLength(1);
    expect(second.next).toBeNull();
    const ids = [...first.items, ...second.items].map((i) => i.workflowId);
    expect(ids.sort()).toEqual(txids.map((t) => depositWorkflowId(t)).sort());
    expect(first.items[0]).toMatchObject({ type: 'deposit', status: 'awaiting_payment' });
    expect(first.items[0]?.cpfMasked).toBe(`***.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-**`);
    // The table never holds the CPF itself.
    expect(JSON.stringify(first)).not.toContain(cpf);

    expect((await list(`cpf=${cpf}&type=withdrawal`)).items).toHaveLength(0);
    expect((await list(`cpf=${cpf}&status=completed`)).items).toHaveLength(0);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await list(`cpf=${cpf}&created_from=${future}`)).items).toHaveLength(0);
    // The three deposits, and the person's onboarding before them.
    const untilFuture = await list(`cpf=${cpf}&created_to=${future}`);
    expect(untilFuture.items.map((i) => i.type)).toEqual(['deposit', 'deposit', 'deposit', 'onboarding']);
  });

  it("every type's row names the CPF hash it is found by (the PixflowCpfHash of the Temporal UI)", async () => {
    // Onboarded (the onboarding's row) before the person's deposit and payout.
    const client = everyType;
    const { cpf } = client;
    const started = await Promise.all([
      e.call('POST', '/v1/deposits', { body: { client, amountCentavos: 500 } }),
      e.call('POST', '/v1/withdrawals', { body: { client, ...ownCpfKey(client), amountCentavos: 700 } }),
    ]);
    expect(started.map((r) => r.status)).toEqual([201, 202]);
    const page = await eventually(
      () => e.call('GET', `/v1/flows?cpf=${cpf}`).then((r) => json<Page>(r)),
      (p) => p.items.length === 3,
    );
    const hash = cpfHash(cpf, PII_KEY);
    expect(page.items.map((i) => i.type).sort()).toEqual(['deposit', 'onboarding', 'withdrawal']);
    for (const item of page.items) expect(item.cpfHash, item.type).toBe(hash);
  });

  it('an unknown status is a 400 naming the value and the statuses of the type', async () => {
    const bogus = await expectProblem(await e.call('GET', '/v1/flows?status=bogus'), 400, 'validation-error');
    expect(bogus.invalid_params).toHaveLength(1);
    expect(bogus.invalid_params?.[0]?.name).toBe('query.status');
    // Without a type: any type's status is allowed.
    expect(bogus.invalid_params?.[0]?.reason).toBe(
      '"bogus" is not a status; one of: kyc, awaiting_liveness, awaiting_review, approved, rejected, expired, creating, awaiting_payment, held, completed, failed, to_return, refused, return_requested, returned, return_failed, validating, awaiting_biometrics, awaiting_approval, awaiting_authorization, sending, processing, stuck, issuing_link, awaiting_identification, passed, unavailable',
    );
    const other = await expectProblem(
      await e.call('GET', '/v1/flows?type=deposit&status=awaiting_review'),
      400,
      'validation-error',
    );
    expect(other.invalid_params).toEqual([
      {
        name: 'query.status',
        reason:
          '"awaiting_review" is not a deposit status; one of: creating, awaiting_payment, held, completed, expired, failed, to_return, refused, return_requested, returned, return_failed',
      },
    ]);
    for (const query of [
      'status=stuck',
      'type=onboarding&status=awaiting_review',
      'type=withdrawal&status=stuck',
    ]) {
      expect((await e.call('GET', `/v1/flows?${query}`)).status, query).toBe(200);
    }
  });

  it('invalid query parameters are 400 naming them', async () => {
    for (const [query, name] of [
      ['limit=0', 'query.limit'],
      ['limit=101', 'query.limit'],
      ['type=payment', 'query.type'],
      ['cpf=123', 'query.cpf'],
      ['created_from=yesterday', 'query.created_from'],
      ['cursor=not-a-cursor', 'query.cursor'],
    ]) {
      const p = await expectProblem(await e.call('GET', `/v1/flows?${query}`), 400, 'validation-error');
      expect(p.invalid_params?.map((i) => i.name)).toContain(name);
    }
  });
});

describe('API description', () => {
  it('serves /openapi.json (OpenAPI 3.1, every route) and /docs without a key', async () => {
    const res = await fetch(`${e.url}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        '/v1/customers/{cpf}',
        '/v1/customers/{cpf}/accounts',
        '/v1/customers/{cpf}/accounts/{id}',
        '/v1/customers/{cpf}/deposit-limits',
        '/v1/biometrics/{cpf}',
        '/v1/deposits',
        '/v1/deposits/{txid}',
        '/v1/deposits/{txid}/qrcode.png',
        '/v1/deposits/{txid}/resolution',
        '/v1/events',
        '/v1/events/{id}',
        '/v1/events/{id}/redeliver',
        '/v1/flows',
        '/v1/onboardings',
        '/v1/onboardings/{cpf}',
        '/v1/onboardings/{cpf}/liveness-link',
        '/v1/onboardings/{cpf}/liveness-link/qrcode.png',
        '/v1/onboardings/{cpf}/review',
        '/v1/webhook-endpoints',
        '/v1/webhook-endpoints/{id}',
        '/v1/webhook-endpoints/{id}/attempts',
        '/v1/webhook-endpoints/{id}/rotate-secret',
        '/v1/withdrawals',
        '/v1/withdrawals/{transactionId}',
        '/v1/withdrawals/{transactionId}/biometrics-link/qrcode.png',
        '/v1/withdrawals/{transactionId}/receipt.png',
      ].sort(),
    );
    expect(doc.paths['/v1/deposits']?.post).toMatchObject({
      requestBody: {
        content: { 'application/json': { schema: { $ref: '#/components/schemas/DepositRequest' } } },
      },
    });
  });

  it('/docs renders the API reference in a browser, with operations and examples, from this origin only', async () => {
    const docs = await fetch(`${e.url}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/^text\/html/);
    // Nothing from a CDN: every script and stylesheet is served by the API itself.
    expect(await docs.text()).not.toMatch(/<(script|link)[^>]+(src|href)="(https?:)?\/\//);

    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      const foreign: string[] = [];
      page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
      page.on('console', (m) => {
        if (m.type() === 'error' || /Content.Security.Policy/i.test(m.text())) problems.push(m.text());
      });
      page.on('request', (r) => {
        if (!r.url().startsWith(e.url) && !/^(data|blob):/.test(r.url())) foreign.push(r.url());
      });
      await page.goto(`${e.url}/docs`);
      // An operation, its request example (OnboardingRequest's userRef) in the code sample and
      // its answer's example (Onboarding's workflowId), both from the zod schemas.
      await page.getByText('Start an onboarding (idempotent per CPF)').first().waitFor({ timeout: 30_000 });
      const sample = page.locator('pre, code').filter({ hasText: 'curl' }).first();
      await expect.poll(() => sample.textContent(), { timeout: 30_000 }).toContain('"userRef": "user-4711"');
      await page.getByText('"onboarding-3f2a9c0d5e7b41a8"').first().waitFor({ timeout: 30_000 });
      // The webhooks pixflow sends, from the same schemas as GET /v1/events, in the Events group.
      await page
        .getByRole('button', { name: /Events/ })
        .first()
        .click();
      await page.getByText('deposit events').first().waitFor({ timeout: 30_000 });
      expect(foreign).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 90_000);

  it('unknown routes are 404 problem+json', async () => {
    await expectProblem(await fetch(`${e.url}/nope`), 404, 'not-found');
    await expectProblem(await e.call('DELETE', '/v1/nope'), 404, 'not-found');
  });

  it('a known path with a method it does not take is 405 with Allow', async () => {
    const cpf = freshCpf();
    const secret = 'a-webhook-secret-for-405';
    for (const [method, path, allow, key] of [
      ['DELETE', '/v1/deposits', 'POST', undefined],
      ['PUT', `/v1/onboardings/${cpf}`, 'GET, HEAD', undefined],
      ['GET', `/v1/onboardings/${cpf}/review`, 'POST', undefined],
      ['PATCH', '/v1/flows', 'GET, HEAD', undefined],
      ['PUT', `/v1/customers/${cpf}/accounts/17`, 'DELETE', undefined],
      ['DELETE', `/v1/customers/${cpf}/accounts`, 'GET, HEAD, POST', undefined],
      ['POST', '/openapi.json', 'GET, HEAD', null],
      ['DELETE', '/docs', 'GET, HEAD', null],
      ['GET', `/webhooks/provider/${secret}/deposit`, 'POST', null],
      ['PUT', `/webhooks/provider/${secret}`, 'POST', null],
      ['GET', '/codec/decode', 'POST', CODEC_TOKEN],
    ] as const) {
      const res = await e.call(method, path, { key });
      expect(res.headers.get('allow'), `${method} ${path}`).toBe(allow);
      const p = await expectProblem(res, 405, 'method-not-allowed');
      // The answer names the route, never the path it was asked at (a CPF, the webhook secret).
      expect(JSON.stringify(p)).not.toContain(secret);
      expect(JSON.stringify(p)).not.toContain(cpf);
    }
  });
});

describe('GET /metrics', () => {
  it('counts requests by route and status and reports the inbox backlog, without a key', async () => {
    await e.call('GET', '/v1/flows?limit=1');
    // A notification with a wrong secret: counted as rejected, nothing else happens.
    await fetch(`${e.url}/webhooks/provider/not-the-secret-at-all/deposit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: '1', type: 'deposit', action: 'updated', partner_id: 'x' }),
    });
    const res = await fetch(`${e.url}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(
      /pixflow_http_requests_total\{method="GET",route="\/v1\/flows",status="200"\} [1-9]/,
    );
    expect(text).toMatch(/^pixflow_inbox_pending \d+$/m);
    expect(text).toMatch(
      /pixflow_ingress_notifications_total\{point="deposit",type="unknown",outcome="rejected_401"\} 1/,
    );
    expect(text).toContain('pixflow_api_process_resident_memory_bytes');
  });
});
