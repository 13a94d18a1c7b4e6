import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createPixflowClient,
  dataOf,
  PixflowProblem,
  retryAfterMs,
  verifyEvent,
  WebhookVerificationError,
} from '../../clients/typescript/src';

// The hand-written part of the TypeScript client (clients/typescript/src), against a tiny HTTP
// server here that answers each request as the test scripts it: real requests over a real
// socket, the client's own fetch. Retries where pixflow asks for them and only within bounds,
// idempotency keys made once per call, error answers thrown as PixflowProblem, and events
// verified the Standard Webhooks way.

interface Seen {
  method: string;
  path: string;
  authorization: string | undefined;
  body: string;
  at: number;
}

interface Scripted {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

let server: http.Server;
let url: string;
const seen: Seen[] = [];
/** The answers to give, in order; past the last, the last again. */
let script: Scripted[] = [];

const problemJson = { 'content-type': 'application/problem+json' };
const ok = (body: unknown, status = 200): Scripted => ({ status, body });
const tooMany = (retryAfter: string): Scripted => ({
  status: 429,
  headers: { ...problemJson, 'retry-after': retryAfter },
  body: { type: 'https://pixflow.dev/problems/rate-limited', title: 'Too many requests', status: 429 },
});
const unavailable: Scripted = {
  status: 503,
  headers: { ...problemJson, 'retry-after': '0' },
  body: { type: 'https://pixflow.dev/problems/temporal-unavailable', title: 'Unavailable', status: 503 },
};

const client = (retry = {}) => createPixflowClient({ baseUrl: url, apiKey: 'test-key', retry });
const DEPOSIT = {
  amountCentavos: 15_000,
  client: { externalId: 'user-1', cpf: '73628883504', email: 'bia@example.com', name: 'Bia Lima' },
};
const WITHDRAWAL = { ...DEPOSIT, pixKey: '73628883504', pixType: 'CPF' as const };

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        path: req.url ?? '',
        authorization: req.headers.authorization,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      const answer = script[Math.min(seen.length - 1, script.length - 1)] as Scripted;
      const body = answer.body === undefined ? '' : JSON.stringify(answer.body);
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  seen.length = 0;
  script = [];
});

const bodies = () => seen.map((s) => JSON.parse(s.body) as Record<string, unknown>);

describe('retries', () => {
  it("waits out a 429's Retry-After, then sends the same request again with the key", async () => {
    script = [tooMany('1'), ok({ items: [], next: null })];
    const page = await dataOf(client().GET('/v1/flows', { params: { query: { limit: 5 } } }));
    expect(page).toEqual({ items: [], next: null });
    expect(seen.map((s) => s.path)).toEqual(['/v1/flows?limit=5', '/v1/flows?limit=5']);
    expect(seen.map((s) => s.authorization)).toEqual(['Bearer test-key', 'Bearer test-key']);
    const [first, second] = seen as [Seen, Seen];
    expect(second.at - first.at).toBeGreaterThanOrEqual(950);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-23T18:00:00Z');
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs('Mon, 23 Nov 2026 18:00:05 GMT', now)).toBe(5000);
    expect(retryAfterMs('Mon, 23 Nov 2026 17:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs(null, now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
  });

  it('stops after its retries and throws the last answer', async () => {
    script = [unavailable];
    const call = client({ retries: 2 }).GET('/v1/deposits/{txid}', { params: { path: { txid: '123' } } });
    await expect(call).rejects.toMatchObject({ name: 'PixflowProblem', status: 503 });
    expect(seen).toHaveLength(3);
  });

  it('gives back at once an answer that asks for a longer wait than its bound', async () => {
    script = [tooMany('120'), ok({})];
    const started = Date.now();
    const call = client({ maxDelayMs: 10_000 }).GET('/v1/webhook-endpoints');
    await expect(call).rejects.toMatchObject({ status: 429 });
    expect(seen).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('does not send again after a 503 a POST that would make a second webhook endpoint', async () => {
    script = [unavailable, ok({}, 201)];
    const body = { url: 'https://backend.example.com/events', events: ['*' as const] };
    await expect(client().POST('/v1/webhook-endpoints', { body })).rejects.toMatchObject({ status: 503 });
    expect(seen).toHaveLength(1);
  });

  it('answers other errors at once: a 400 is not sent again', async () => {
    script = [{ status: 400, headers: problemJson, body: { type: 'x', title: 'Bad', status: 400 } }];
    await expect(client().POST('/v1/deposits', { body: DEPOSIT })).rejects.toBeInstanceOf(PixflowProblem);
    expect(seen).toHaveLength(1);
  });
});

describe('idempotency keys', () => {
  it('gives a deposit without a txid one, the same on every attempt: a retry is the same deposit', async () => {
    script = [unavailable, unavailable, ok({ txid: 'from-server' }, 201)];
    await client().POST('/v1/deposits', { body: DEPOSIT });
    const [first, ...rest] = bodies();
    expect(first?.txid).toMatch(/^\d{32}$/);
    expect(rest.map((b) => b.txid)).toEqual([first?.txid, first?.txid]);
    expect(first).toMatchObject(DEPOSIT);
  });

  it('gives a withdrawal without a transactionId one, and every call its own', async () => {
    script = [ok({}, 202)];
    await client().POST('/v1/withdrawals', { body: WITHDRAWAL });
    await client().POST('/v1/withdrawals', { body: WITHDRAWAL });
    const [a, b] = bodies().map((x) => x.transactionId);
    expect(a).toMatch(/^[0-9a-f-]{36}$/);
    expect(b).toMatch(/^[0-9a-f-]{36}$/);
    expect(a).not.toBe(b);
  });

  it("keeps the caller's own key, and adds none where the API takes none", async () => {
    script = [ok({}, 201)];
    await client().POST('/v1/deposits', { body: { ...DEPOSIT, txid: '4711' } });
    await client().POST('/v1/onboardings', {
      body: { cpf: '73628883504', plan: 'plan_basic', event: 'signup' },
    });
    expect(bodies()).toEqual([
      { ...DEPOSIT, txid: '4711' },
      { cpf: '73628883504', plan: 'plan_basic', event: 'signup' },
    ]);
  });
});

describe('problems', () => {
  it('throws a problem+json answer as a PixflowProblem with its fields', async () => {
    const problem = {
      type: 'https://pixflow.dev/problems/validation-error',
      title: 'Request validation failed',
      status: 400,
      detail: 'body.client.cpf: has invalid check digits',
      instance: '/v1/deposits',
      invalid_params: [{ name: 'body.client.cpf', reason: 'has invalid check digits' }],
    };
    script = [{ status: 400, headers: problemJson, body: problem }];
    const err = await client()
      .POST('/v1/deposits', { body: DEPOSIT })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PixflowProblem);
    expect(err).toMatchObject({
      type: problem.type,
      title: problem.title,
      status: 400,
      detail: problem.detail,
      instance: '/v1/deposits',
      fieldErrors: problem.invalid_params,
      message: '400 Request validation failed: body.client.cpf: has invalid check digits',
    });
  });

  it("keeps a problem's own members (a refused flow's reason and status)", async () => {
    const problem = { type: 'x/not-verified', title: 'Not verified', status: 409, verification: 'pending' };
    script = [{ status: 409, headers: problemJson, body: problem }];
    const err = (await client()
      .POST('/v1/deposits', { body: DEPOSIT })
      .catch((e: unknown) => e)) as PixflowProblem;
    expect(err.problem.verification).toBe('pending');
    expect(err.fieldErrors).toEqual([]);
  });

  it('throws an answer without problem details (a proxy page) as the problem of its status', async () => {
    script = [{ status: 502, headers: { 'content-type': 'text/html' }, body: 'Bad gateway' }];
    const err = await client()
      .GET('/v1/webhook-endpoints')
      .catch((e: unknown) => e);
    expect(err).toMatchObject({
      name: 'PixflowProblem',
      type: 'about:blank',
      status: 502,
      detail: '"Bad gateway"',
    });
  });
});

describe('verifyEvent', () => {
  const secret = `whsec_${Buffer.from('a-test-secret-of-24-byte').toString('base64')}`;
  const other = `whsec_${Buffer.from('another-secret-24-bytes!').toString('base64')}`;
  const body = JSON.stringify({
    type: 'deposit.completed',
    timestamp: '2026-11-23T18:04:05.120Z',
    data: { flowId: 'deposit-1', businessId: '1', sequence: 2, flowType: 'deposit', state: {} },
  });
  const signed = (key: string, payload = body, at = new Date()) => ({
    'webhook-id': 'evt_1',
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(key).sign('evt_1', at, payload),
  });

  it('answers the event, with its id, for a body signed with the secret', () => {
    const event = verifyEvent(secret, body, signed(secret));
    expect(event).toMatchObject({ id: 'evt_1', type: 'deposit.completed', data: { flowType: 'deposit' } });
  });

  it('takes the headers as fetch holds them, and the body as bytes', () => {
    const event = verifyEvent(secret, Buffer.from(body), new Headers(signed(secret)));
    expect(event.id).toBe('evt_1');
  });

  it('verifies with any of the secrets given (a rotated one being deployed)', () => {
    expect(verifyEvent([other, secret], body, signed(secret)).id).toBe('evt_1');
  });

  it('refuses a changed body, another secret, an old timestamp and missing headers', () => {
    const changed = body.replace('deposit.completed', 'deposit.expired');
    expect(() => verifyEvent(secret, changed, signed(secret))).toThrow(WebhookVerificationError);
    expect(() => verifyEvent(other, body, signed(secret))).toThrow(WebhookVerificationError);
    const old = new Date(Date.now() - 10 * 60_000);
    expect(() => verifyEvent(secret, body, signed(secret, body, old))).toThrow(/too old/i);
    const { 'webhook-signature': _, ...unsigned } = signed(secret);
    expect(() => verifyEvent(secret, body, unsigned)).toThrow(WebhookVerificationError);
  });
});
