import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, type ApiEnv, expectProblem, startApiEnv } from './support';

// Failed authentication limited per client address on the real API over HTTP, with the default
// budget (20 failures) and a short window. TRUST_PROXY names loopback as the proxy, so each test
// is its own client by X-Forwarded-For, as clients behind a real proxy are.

const BUDGET = 20;
const WINDOW_MS = 4_000;

let e: ApiEnv;
beforeAll(async () => {
  e = await startApiEnv({}, { env: { TRUST_PROXY: 'loopback', AUTH_FAILURE_WINDOW_MS: String(WINDOW_MS) } });
}, 120_000);
afterAll(() => e?.close());

let lastAddress = 0;
/** A client address of its own (TEST-NET-3). */
const newClient = () => `203.0.113.${++lastAddress}`;

const flows = (client: string, key: string) =>
  fetch(`${e.url}/v1/flows?limit=1`, {
    headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': client },
  });

const notify = (client: string, secret: string) =>
  fetch(`${e.url}/webhooks/provider/${encodeURIComponent(secret)}/deposit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': client },
    // A deposit no flow has: stored and left pending, which is all a right secret needs to show.
    body: JSON.stringify({
      id: `9${Date.now()}`,
      type: 'deposit',
      action: 'updated',
      partner_id: e.partnerId,
    }),
  });

const wrongKey = () => `wrong-${randomBytes(8).toString('hex')}`;
/** Shaped like a key record's secret, so the API looks it up in Postgres before refusing it. */
const wrongRecordKey = () => `pxk_${randomBytes(32).toString('base64url')}`;

async function metric(name: string, surface: string): Promise<number> {
  const text = await (await fetch(`${e.url}/metrics`)).text();
  const m = new RegExp(`^${name}\\{surface="${surface}"\\} (\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

async function expectTooMany(res: Response) {
  const problem = await expectProblem(res, 429, 'too-many-failed-authentications');
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(WINDOW_MS / 1000);
  return problem;
}

describe('failed authentication on /v1, per address across keys', () => {
  it('distinct wrong keys are 401 up to the budget, then 429 with Retry-After; the right key too, until the window ends', async () => {
    const client = newClient();
    // Many good requests at once from the same address spend nothing of the budget.
    const good = await Promise.all(Array.from({ length: 40 }, () => flows(client, API_KEY)));
    expect(good.map((r) => r.status)).toEqual(Array(40).fill(200));

    const failuresBefore = await metric('pixflow_auth_failures_total', 'api');
    for (let i = 0; i < BUDGET; i++) {
      const res = await flows(client, i % 2 ? wrongKey() : wrongRecordKey());
      expect(res.status, `wrong key ${i + 1}`).toBe(401);
    }
    const limitedBefore = await metric('pixflow_auth_limited_total', 'api');
    const over = await expectTooMany(await flows(client, wrongKey()));
    expect(over.detail).not.toContain('wrong-');
    // The right key from the limited address waits too.
    await expectTooMany(await flows(client, API_KEY));
    // A POST is refused before its body is read, and starts nothing.
    const deposit = await fetch(`${e.url}/v1/deposits`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${API_KEY}`,
        'content-type': 'application/json',
        'x-forwarded-for': client,
      },
      body: '{}',
    });
    await expectTooMany(deposit);

    // Another address keeps its own budget.
    expect((await flows(newClient(), wrongKey())).status).toBe(401);
    expect((await flows(newClient(), API_KEY)).status).toBe(200);

    expect(await metric('pixflow_auth_failures_total', 'api')).toBe(failuresBefore + BUDGET + 1);
    expect(await metric('pixflow_auth_limited_total', 'api')).toBe(limitedBefore + 3);

    // Once the window has passed, the right key is let in again.
    await new Promise((r) => setTimeout(r, WINDOW_MS + 200));
    expect((await flows(client, API_KEY)).status).toBe(200);
  });

  it('requests without any key count as failures too', async () => {
    const client = newClient();
    for (let i = 0; i < BUDGET; i++) {
      const res = await fetch(`${e.url}/v1/flows`, { headers: { 'x-forwarded-for': client } });
      expect(res.status).toBe(401);
    }
    await expectTooMany(await fetch(`${e.url}/v1/flows`, { headers: { 'x-forwarded-for': client } }));
    await expectTooMany(await flows(client, API_KEY));
  });
});

describe('failed authentication on the webhook ingress, per address across secret paths', () => {
  it('distinct wrong secrets are 401 up to the budget, then 429 with Retry-After, the right secret too; the secret never comes back', async () => {
    const client = newClient();
    const failuresBefore = await metric('pixflow_auth_failures_total', 'ingress');
    for (let i = 0; i < BUDGET; i++) {
      const res = await notify(client, `guess-${randomBytes(12).toString('hex')}`);
      expect(res.status, `wrong secret ${i + 1}`).toBe(401);
    }
    const guess = `guess-${randomBytes(12).toString('hex')}`;
    const over = await expectTooMany(await notify(client, guess));
    expect(over.instance).toMatch(/^\/webhooks\/provider\/\*\*\*/);
    expect(JSON.stringify(over)).not.toContain(guess);
    const secret = new URL(e.ingress).pathname.split('/')[3] ?? '';
    const right = await notify(client, decodeURIComponent(secret));
    const body = await expectTooMany(right);
    expect(JSON.stringify(body)).not.toContain(decodeURIComponent(secret));
    expect(await metric('pixflow_auth_failures_total', 'ingress')).toBe(failuresBefore + BUDGET);

    // Another address is not limited; the /v1 budget is apart from the ingress's.
    expect((await notify(newClient(), decodeURIComponent(secret))).status).toBe(200);
    expect((await flows(client, API_KEY)).status).toBe(200);
  });
});
