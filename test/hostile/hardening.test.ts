import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { depositWorkflowId } from '../../contracts/deposit';
import { API_KEY } from '../api/support';
import {
  expectRefused,
  type HostileEnv,
  PARTNER_ID,
  rawRequest,
  startHostileEnv,
  WEBHOOK_SECRET,
} from './support';

// Security headers, the per-key rate limit of /v1 (a tiny one here) and the body size limits.

const LIMIT = 8;
let h: HostileEnv;

beforeAll(async () => {
  h = await startHostileEnv({ API_RATE_LIMIT_PER_MINUTE: String(LIMIT) });
});
afterAll(async () => {
  if (!h) return;
  await h.expectNothingOnQueue();
  await h.expectHealthy();
  await h.close();
});

const depositBody = (txid: string, name = 'Ana Souza') => ({
  txid,
  client: { externalId: 'u1', cpf: '63401825771', email: 'ana@example.com', name },
  amountCentavos: 1_000,
});

describe('security headers', () => {
  it('every kind of answer carries them; only /docs may load its script; no x-powered-by', async () => {
    const answers = [
      await fetch(`${h.e.url}/healthz`),
      await fetch(`${h.e.url}/docs`),
      await fetch(`${h.e.url}/openapi.json`),
      await fetch(`${h.e.url}/v1/flows`),
      await fetch(`${h.e.url}/nowhere`),
      await fetch(`${h.e.url}/webhooks/provider/wrong-secret-0123456789`, { method: 'POST', body: '{}' }),
    ];
    for (const res of answers) {
      const what = `${res.url} ${res.status}`;
      expect(res.headers.get('x-content-type-options'), what).toBe('nosniff');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, what).toContain("default-src 'none'");
      expect(csp, what).toContain("frame-ancestors 'none'");
      expect(res.headers.get('x-frame-options'), what).toBe('SAMEORIGIN');
      expect(res.headers.get('referrer-policy'), what).toBe('no-referrer');
      expect(res.headers.get('x-powered-by'), what).toBeNull();
    }
    // Only /docs may run a script, and only the reference bundle the API serves itself.
    const docs = answers[1] as Response;
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-security-policy')).toContain("script-src 'self';");
    expect(await docs.text()).toContain('<script src="/docs/api-reference.js">');
    for (const res of answers.filter((r) => r !== docs)) {
      expect(res.headers.get('content-security-policy'), res.url).not.toContain('script-src');
    }
  });

  it('/codec CORS still works for the UI origin, with the headers', async () => {
    const res = await fetch(`${h.e.url}/codec/decode`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://127.0.0.1:8233',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:8233');
    expect(res.headers.get('access-control-allow-headers')).toContain('authorization');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('body size limits', () => {
  it('a /v1 body over 64 KiB is 413 problem+json and starts nothing', async () => {
    const txid = `7${Date.now()}`;
    const a = await rawRequest(h.e.url, {
      method: 'POST',
      path: '/v1/deposits',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(depositBody(txid, 'A'.repeat(70_000))),
    });
    expectRefused(a, 'oversized deposit');
    expect(a.status).toBe(413);
    expect(JSON.parse(a.text).type).toBe('https://pixflow.dev/problems/body-too-large');
    await h.expectNoFlows([depositWorkflowId(txid)], 'oversized deposit');
  });

  it('an ingress body over 16 KiB is 413 problem+json and nothing is stored', async () => {
    const id = `8${Date.now()}`;
    const body = JSON.stringify({
      id,
      type: 'deposit',
      action: 'updated',
      partner_id: PARTNER_ID,
      padding: 'x'.repeat(17_000),
    });
    const a = await rawRequest(h.e.url, {
      method: 'POST',
      path: `/webhooks/provider/${WEBHOOK_SECRET}/deposit`,
      headers: { 'content-type': 'application/json' },
      body,
    });
    expectRefused(a, 'oversized notification');
    expect(a.status).toBe(413);
    const rows = await h.e.pool.query('SELECT 1 FROM webhook_inbox WHERE workflow_id = $1', [
      depositWorkflowId(id),
    ]);
    expect(rows.rowCount).toBe(0);
  });
});

describe('rate limit per API key', () => {
  it('past the limit a key gets 429 problem+json with Retry-After and RateLimit headers; other keys and the ingress do not', async () => {
    const call = (key: string) =>
      fetch(`${h.e.url}/v1/flows?limit=1`, { headers: { authorization: `Bearer ${key}` } });
    for (let i = 0; i < LIMIT; i++) {
      const res = await call('another-key');
      expect(res.status, `request ${i + 1}`).toBe(200);
      expect(res.headers.get('ratelimit-policy')).toContain(`q=${LIMIT}; w=60`);
    }
    const over = await call('another-key');
    expect(over.status).toBe(429);
    expect(over.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(over.headers.get('ratelimit')).toMatch(/r=0/);
    const problem = (await over.json()) as { type: string; status: number; detail: string };
    expect(problem).toMatchObject({ type: 'https://pixflow.dev/problems/rate-limited', status: 429 });
    expect(problem.detail).not.toContain('another-key');

    // A create past the limit starts nothing.
    const txid = `6${Date.now()}`;
    const create = await rawRequest(h.e.url, {
      method: 'POST',
      path: '/v1/deposits',
      headers: { authorization: 'Bearer another-key', 'content-type': 'application/json' },
      body: JSON.stringify(depositBody(txid)),
    });
    expectRefused(create, 'deposit past the limit');
    expect(create.status).toBe(429);
    await h.expectNoFlows([depositWorkflowId(txid)], 'deposit past the limit');

    // Another key has its own budget.
    expect((await call(API_KEY)).status).toBe(200);

    // The ingress is not limited per API key: its own secret decides (401 here, never 429).
    for (let i = 0; i < LIMIT * 2; i++) {
      const a = await rawRequest(h.e.url, {
        method: 'POST',
        path: `/webhooks/provider/${WEBHOOK_SECRET}/deposit`,
        headers: { 'content-type': 'application/json', authorization: 'Bearer another-key' },
        body: JSON.stringify({ id: '1', type: 'deposit', action: 'updated', partner_id: 'wrong' }),
      });
      expect(a.status).toBe(401);
    }
  });
});
