import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, type ApiEnv, peopleAt, startApiEnv } from '../api/support';
import { onboard, ownCpfKey, type Person } from '../helpers/people';

// The real app's /metrics: every answer of one route, whatever its status and wherever it was
// decided (the handler, the body parser, the router's error path), counts under that route's
// template with its mount prefix, so a route's error rate is its errors over its requests.

let e: ApiEnv;
let n = 0;
/** Onboarded: money moves only for an approved person. */
let client: Person;

beforeAll(async () => {
  e = await startApiEnv();
  client = await onboard(await peopleAt(e));
});
afterAll(async () => {
  await e?.close();
});

const withdrawalBody = () => ({
  transactionId: `labels-wd-${Date.now()}-${++n}`,
  client,
  ...ownCpfKey(client),
  amountCentavos: 1_000,
});

async function requestCount(method: string, route: string, status: number): Promise<number> {
  const text = await (await fetch(`${e.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) =>
      l.startsWith(`pixflow_http_requests_total{method="${method}",route="${route}",status="${status}"}`),
    );
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('request metrics label a route the same way for every answer', () => {
  it('POST /v1/withdrawals: 202, 400 (validation), 409 (conflict) and 400 (malformed JSON)', async () => {
    const body = withdrawalBody();
    expect((await e.call('POST', '/v1/withdrawals', { body })).status).toBe(202);
    expect((await e.call('POST', '/v1/withdrawals', { body: { ...body, amountCentavos: -1 } })).status).toBe(
      400,
    );
    expect(
      (await e.call('POST', '/v1/withdrawals', { body: { ...body, amountCentavos: 2_000 } })).status,
    ).toBe(409);
    const malformed = await fetch(`${e.url}/v1/withdrawals`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: '{"transactionId": ',
    });
    expect(malformed.status).toBe(400);

    expect(await requestCount('POST', '/v1/withdrawals', 202)).toBe(1);
    // The validation error and the malformed body.
    expect(await requestCount('POST', '/v1/withdrawals', 400)).toBe(2);
    expect(await requestCount('POST', '/v1/withdrawals', 409)).toBe(1);
    expect(await requestCount('POST', '/withdrawals', 400)).toBe(0);
    expect(await requestCount('POST', 'unmatched', 400)).toBe(0);
  });

  it('a parameterised route keeps its template for a 404 it answers itself', async () => {
    const res = await e.call('GET', `/v1/deposits/${'9'.repeat(20)}`);
    expect(res.status).toBe(404);
    expect(await requestCount('GET', '/v1/deposits/:txid', 404)).toBe(1);
  });

  it('the webhook ingress is labelled by its template, never by the secret in its path', async () => {
    const res = await fetch(`${e.url}/webhooks/provider/not-the-secret-0123456789/deposit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    expect(res.status).toBe(401);
    expect(await requestCount('POST', '/webhooks/provider/:secret/:point', 401)).toBe(1);
    expect(await (await fetch(`${e.url}/metrics`)).text()).not.toContain('not-the-secret');
  });

  it('a path no route serves stays unmatched', async () => {
    expect((await e.call('GET', '/v1/nowhere')).status).toBe(404);
    expect((await fetch(`${e.url}/nowhere`)).status).toBe(404);
    expect(await requestCount('GET', 'unmatched', 404)).toBe(2);
  });
});
