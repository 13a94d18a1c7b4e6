import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitedError, UnauthorizedError } from '../helpers/identity-payments-wire';
import { clientFor, control, rawToken, sandboxState, startProviderSandbox } from './support';

type Sandbox = Awaited<ReturnType<typeof startProviderSandbox>>;
let sb: Sandbox;

beforeAll(async () => {
  sb = await startProviderSandbox({ tokenRateLimit: { max: 5, windowMs: 60_000 } });
});
afterAll(() => sb.close());

describe('token endpoint and credentials', () => {
  it('200 concurrent calls with an empty cache cause exactly one token request', async () => {
    await control(sb.url, '/sandbox/reset');
    const client = clientFor(sb.url);
    const results = await Promise.all(
      Array.from({ length: 200 }, () => client.getDeposit('1').catch((e: unknown) => e)),
    );
    expect(results.every((r) => r instanceof Error && r.name === 'NotFoundError')).toBe(true);
    const state = await sandboxState(sb.url);
    expect(state.counters.tokenRequests).toBe(1);
    expect(client.tokenRequests).toBe(1);
  });

  it('refreshes after expiry (injectable clock)', async () => {
    await control(sb.url, '/sandbox/reset');
    let now = Date.now();
    const client = clientFor(sb.url, { now: () => now });
    await client.kyc('63401825771', 'plan_basic');
    now += 3599_000 - 60_000;
    await client.kyc('63401825771', 'plan_basic');
    expect((await sandboxState(sb.url)).counters.tokenRequests).toBe(1);
    now += 1000;
    await client.kyc('63401825771', 'plan_basic');
    expect((await sandboxState(sb.url)).counters.tokenRequests).toBe(2);
  });

  it('refreshes once and retries once after a 401 (revoked tokens)', async () => {
    await control(sb.url, '/sandbox/reset');
    const client = clientFor(sb.url);
    await client.kyc('63401825771', 'plan_basic');
    expect((await control(sb.url, '/sandbox/tokens/revoke')).body).toEqual({ revoked: 1 });
    const all = await Promise.all(Array.from({ length: 20 }, () => client.kyc('63401825771', 'plan_basic')));
    expect(all).toHaveLength(20);
    expect((await sandboxState(sb.url)).counters.tokenRequests).toBe(2);
  });

  it('rejects wrong client credentials and a wrong grant', async () => {
    await control(sb.url, '/sandbox/reset');
    const bad = clientFor(sb.url, { clientSecret: 'wrong' });
    await expect(bad.kyc('63401825771', 'plan_basic')).rejects.toBeInstanceOf(UnauthorizedError);
    const res = await fetch(`${sb.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'client_id=sandbox-client&client_secret=sandbox-secret&grant_type=password',
    });
    expect(res.status).toBe(400);
  });

  it('rate-limits too many token requests in a window with 429 and Retry-After', async () => {
    await control(sb.url, '/sandbox/reset');
    for (let i = 0; i < 5; i++) await rawToken(sb.url);
    const res = await fetch(`${sb.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'client_id=sandbox-client&client_secret=sandbox-secret&grant_type=client_credentials',
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    const err = await clientFor(sb.url)
      .kyc('63401825771', 'plan_basic')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBeGreaterThan(0);
  });

  it("a full window's Retry-After is the seconds until its oldest token leaves it, when asking again succeeds", async () => {
    let now = Date.parse('2026-11-27T12:00:00Z');
    const clocked = await startProviderSandbox({
      tokenRateLimit: { max: 5, windowMs: 60_000 },
      now: () => now,
    });
    try {
      const ask = () =>
        fetch(`${clocked.url}/oauth2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'client_id=sandbox-client&client_secret=sandbox-secret&grant_type=client_credentials',
        });
      expect((await ask()).status).toBe(200);
      now += 10_000;
      for (let i = 0; i < 4; i++) expect((await ask()).status).toBe(200);
      now += 10_000;
      const refused = await ask();
      expect(refused.status).toBe(429);
      // The first token leaves the 60 s window 40 s from now; a caller that obeys waits that long.
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBe(40);
      now += (retryAfter - 1) * 1000;
      expect((await ask()).headers.get('retry-after')).toBe('1');
      now += 1000;
      expect((await ask()).status).toBe(200);
      // The fault knob's 429, the window not full, says what the knob says.
      now += 60_000;
      await control(clocked.url, '/sandbox/faults', { tokenRateLimitNext: 1, retryAfterSeconds: 7 });
      const injected = await ask();
      expect(injected.status).toBe(429);
      expect(injected.headers.get('retry-after')).toBe('7');
      expect((await ask()).status).toBe(200);
    } finally {
      await clocked.close();
    }
  });

  // The forms the document's samples show, each only (test/sandbox/dialect.test.ts: `auth.header`).
  it('answers 401 without a credential on every non-token endpoint, and takes the token in the form its samples show', async () => {
    await control(sb.url, '/sandbox/reset');
    const token = await rawToken(sb.url);
    const json = { 'content-type': 'application/json' };
    const calls: [string, string, unknown, string, string][] = [
      ['POST', '/kyc/63401825771', { plan: 'plan_basic' }, token, `Bearer ${token}`],
      [
        'POST',
        '/kyc-liveness/63401825771',
        { correlation_id: 'c', plan: 'plan_basic', event: 'e' },
        token,
        `Bearer ${token}`,
      ],
      ['GET', '/dataconnector/transaction/1/type/deposit', undefined, `Bearer ${token}`, token],
      ['GET', '/dataconnector/transaction/1/type/withdraw', undefined, `Bearer ${token}`, token],
    ];
    for (const [method, path, body, taken, refused] of calls) {
      const send = (headers: Record<string, string>) =>
        fetch(`${sb.url}${path}`, {
          method,
          headers: { ...json, ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      expect((await send({})).status, path).toBe(401);
      expect((await send({ authorization: 'Bearer nope' })).status, path).toBe(401);
      expect([200, 404]).toContain((await send({ authorization: taken })).status);
      expect((await send({ authorization: refused })).status, path).toBe(401);
    }
    for (const path of [
      '/v2/deposit/create',
      '/v2/withdraw/create',
      '/receipts/merchant/cash-out/generate',
    ]) {
      const res = await fetch(`${sb.url}${path}`, { method: 'POST', headers: json, body: '{}' });
      expect(res.status, path).toBe(401);
      const wrong = await fetch(`${sb.url}${path}`, {
        method: 'POST',
        headers: { ...json, 'x-service-api-key': 'Api-Key wrong' },
        body: '{}',
      });
      expect(wrong.status, path).toBe(401);
    }
  });
});
