import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  postSignedJson,
  SignedPostError,
  type SignedPostOptions,
  signedJsonRequest,
} from '../../signed-requests/client';
import { signedJsonEndpoint } from '../../signed-requests/verify';

// pixflow's signed POST to an operator's service and its receiving side, each against a real HTTP
// server: the client against one that answers what a test queues, the verifier mounted on one
// that the client (or a hand-made request) calls.

const SECRET = `whsec_${Buffer.from('the-signed-requests-test-secret').toString('base64')}`;
const OTHER_SECRET = `whsec_${Buffer.from('not-the-signed-requests-secret').toString('base64')}`;
const SENDER = { idPrefix: 'test', userAgent: 'pixflow-test/1' };

const answerSchema = z.object({ ok: z.literal(true), echo: z.string() }).strict();
const requestSchema = z.object({ echo: z.string().min(1), n: z.number().int() }).strict();

interface Seen {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

type Next = [number, unknown] | 'hang' | 'redirect';

/** The operator's service as the client meets it: its next answers queued by the test. */
let service: http.Server;
let serviceUrl: string;
let queue: Next[];
let seen: Seen[];
let redirectedTo: number;

/** The receiving side: the verifier on an express app, with what it let through and refused. */
let receiver: http.Server;
let receiverUrl: string;
let answered: Array<z.infer<typeof requestSchema>>;
let unverified: number;

const listen = async (server: http.Server) => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};
const close = async (server: http.Server) => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
};

beforeAll(async () => {
  service = http.createServer((req, res) => {
    if (req.url === '/elsewhere') {
      redirectedTo++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"echo":"elsewhere"}');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ headers: req.headers, body, at: performance.now() });
      const next = queue.shift() ?? [200, { ok: true, echo: 'default' }];
      if (next === 'hang') return;
      if (next === 'redirect') {
        res.writeHead(302, { location: '/elsewhere' }).end();
        return;
      }
      res.writeHead(next[0], { 'content-type': 'application/json' });
      res.end(typeof next[1] === 'string' ? next[1] : JSON.stringify(next[1]));
    });
  });
  serviceUrl = `${await listen(service)}/ask`;

  const app = express();
  app.post(
    '/ask',
    ...signedJsonEndpoint({
      secret: SECRET,
      request: requestSchema,
      refuse: (res, status, error, message) => {
        res.status(status).json({ status, error, message });
      },
      onUnverified: () => {
        unverified++;
      },
      answer: (request, res) => {
        answered.push(request);
        res.json({ ok: true, echo: request.echo });
      },
    }),
  );
  // As a server's own error handler would: the body parser's 413 as a status, not a logged stack.
  app.use(
    (err: { status?: number }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(err.status ?? 500).json({ status: err.status ?? 500 });
    },
  );
  receiver = http.createServer(app);
  receiverUrl = `${await listen(receiver)}/ask`;
});
afterAll(async () => {
  await close(service);
  await close(receiver);
});
beforeEach(() => {
  queue = [];
  seen = [];
  redirectedTo = 0;
  answered = [];
  unverified = 0;
});

const options = (over: Partial<SignedPostOptions> = {}): SignedPostOptions => ({
  url: serviceUrl,
  secret: SECRET,
  timeoutMs: 1_000,
  backoffMs: 10,
  ...over,
});
const ask = (over: Partial<SignedPostOptions> = {}, request: unknown = { echo: 'hi', n: 1 }) =>
  postSignedJson(options(over), SENDER, answerSchema, request);
const failure = (p: Promise<unknown>) =>
  p.then(
    () => expect.unreachable('the request should have failed'),
    (e: unknown) => e as SignedPostError,
  );
const headersOf = (s: Seen) => ({
  'webhook-id': String(s.headers['webhook-id']),
  'webhook-timestamp': String(s.headers['webhook-timestamp']),
  'webhook-signature': String(s.headers['webhook-signature']),
});

describe('the signed POST', () => {
  it('sends the request as JSON, signed as Standard Webhooks sign, and answers the parsed 200', async () => {
    queue.push([200, { ok: true, echo: 'hi' }]);
    const before = Math.floor(Date.now() / 1000);
    expect(await ask()).toEqual({ ok: true, echo: 'hi' });
    const [req] = seen;
    expect(req?.headers['content-type']).toBe('application/json');
    expect(req?.headers['user-agent']).toBe('pixflow-test/1');
    expect(req?.headers['webhook-id']).toMatch(/^test_[0-9a-f]{32}$/);
    const timestamp = Number(req?.headers['webhook-timestamp']);
    expect(timestamp).toBeGreaterThanOrEqual(before);
    expect(timestamp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(JSON.parse(req!.body)).toEqual({ echo: 'hi', n: 1 });
    expect(new Webhook(SECRET).verify(req!.body, headersOf(req!))).toEqual({ echo: 'hi', n: 1 });
    expect(() => new Webhook(OTHER_SECRET).verify(req!.body, headersOf(req!))).toThrow();
  });

  it('asks again after a 5xx or a 429, the same body signed anew, waiting twice as long each time', async () => {
    queue.push([503, {}], [429, {}], [500, {}], [200, { ok: true, echo: 'at last' }]);
    expect(await ask({ attempts: 4, backoffMs: 40 })).toEqual({ ok: true, echo: 'at last' });
    expect(seen).toHaveLength(4);
    expect(new Set(seen.map((s) => s.body)).size).toBe(1);
    expect(new Set(seen.map((s) => s.headers['webhook-id'])).size).toBe(4);
    for (const s of seen)
      expect(new Webhook(SECRET).verify(s.body, headersOf(s))).toEqual({ echo: 'hi', n: 1 });
    // Waits of 40, 80 and 160 ms between the attempts: lower bounds only (timers may fire a ms early).
    const gaps = seen.slice(1).map((s, i) => s.at - seen[i]!.at);
    expect(gaps[0]).toBeGreaterThanOrEqual(38);
    expect(gaps[1]).toBeGreaterThanOrEqual(78);
    expect(gaps[2]).toBeGreaterThanOrEqual(158);
  });

  it('asks again when an attempt gets no answer within its bound', async () => {
    queue.push('hang', [200, { ok: true, echo: 'second' }]);
    expect(await ask({ timeoutMs: 200 })).toEqual({ ok: true, echo: 'second' });
    expect(seen).toHaveLength(2);
  });

  it('gives up after its attempts, saying what went wrong and at which attempt', async () => {
    queue.push([500, {}], [502, {}], [503, {}], [200, { ok: true, echo: 'too late' }]);
    const err = await failure(ask());
    expect(err).toBeInstanceOf(SignedPostError);
    expect(err.message).toBe('answered 503 (attempt 3 of 3)');
    expect(err).toMatchObject({ problem: 'answered 503', attempt: 3, attempts: 3 });
    expect(seen).toHaveLength(3);

    seen = [];
    queue = ['hang'];
    const slow = await failure(ask({ timeoutMs: 200, attempts: 1 }));
    expect(slow.message).toBe('no answer within 200 ms (attempt 1 of 1)');
    expect(seen).toHaveLength(1);
  });

  it('does not ask again after another status, an answer that is not JSON or one off contract', async () => {
    queue.push([401, { error: 'Unauthorized' }]);
    expect((await failure(ask())).message).toBe('answered 401 (attempt 1 of 3)');
    queue.push([404, {}]);
    expect((await failure(ask())).message).toBe('answered 404 (attempt 1 of 3)');
    queue.push([201, { ok: true, echo: 'created' }]);
    expect((await failure(ask())).message).toBe('answered 201 (attempt 1 of 3)');
    queue.push([200, 'OK, fine']);
    expect((await failure(ask())).message).toBe('answered something that is not JSON (attempt 1 of 3)');
    queue.push([200, { ok: true, echo: 7 }]);
    expect((await failure(ask())).message).toMatch(/^answered off contract: echo: .+ \(attempt 1 of 3\)$/);
    queue.push([200, []]);
    expect((await failure(ask())).message).toMatch(/^answered off contract: body: /);
    expect(seen).toHaveLength(6);
  });

  it('follows no redirect', async () => {
    queue.push('redirect', 'redirect');
    const err = await failure(ask({ attempts: 2 }));
    expect(err.message).toMatch(/^unreachable: .+ \(attempt 2 of 2\)$/);
    expect(seen).toHaveLength(2);
    expect(redirectedTo).toBe(0);
  });

  it('is unreachable when nothing listens, and never names what it asked', async () => {
    const err = await failure(
      ask({ url: 'http://127.0.0.1:9/ask', attempts: 2, backoffMs: 1 }, { echo: '73628883504', n: 1 }),
    );
    expect(err).toBeInstanceOf(SignedPostError);
    expect(err.message).toMatch(/^unreachable: .+ \(attempt 2 of 2\)$/);
    expect(err.message).not.toContain('73628883504');
  });
});

describe('the signed endpoint', () => {
  const post = (body: string, headers: Record<string, string>) =>
    fetch(receiverUrl, { method: 'POST', headers, body });
  const signed = (body: string, secret = SECRET, now = new Date()) =>
    signedJsonRequest(body, secret, SENDER, now);

  it("answers the client's signed request on contract", async () => {
    expect(await ask({ url: receiverUrl }, { echo: 'round trip', n: 2 })).toEqual({
      ok: true,
      echo: 'round trip',
    });
    expect(answered).toEqual([{ echo: 'round trip', n: 2 }]);
    expect(unverified).toBe(0);
  });

  it('refuses with a 401 a request unsigned, signed with another secret, altered or stale', async () => {
    const body = JSON.stringify({ echo: 'hi', n: 1 });
    const unsigned = await post(body, { 'content-type': 'application/json' });
    const other = await post(body, signed(body, OTHER_SECRET));
    const altered = await post(JSON.stringify({ echo: 'hi', n: 2 }), signed(body));
    const stale = await post(body, signed(body, SECRET, new Date(Date.now() - 10 * 60_000)));
    for (const res of [unsigned, other, altered, stale]) {
      expect(res.status).toBe(401);
      const problem = (await res.json()) as { error: string; message: string };
      expect(problem.error).toBe('Unauthorized');
      expect(problem.message).toMatch(/^signature: /);
    }
    expect(unverified).toBe(4);
    expect(answered).toEqual([]);
    // The client takes the 401 as final: one attempt.
    const err = await failure(ask({ url: receiverUrl, secret: OTHER_SECRET }));
    expect(err.message).toBe('answered 401 (attempt 1 of 3)');
    expect(unverified).toBe(5);
  });

  it('refuses with a 400 a signed body that is not JSON or off contract, naming the field', async () => {
    const notJson = await post('{"echo":', signed('{"echo":'));
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toEqual({ status: 400, error: 'Bad Request', message: 'body: not JSON' });

    const offContract = JSON.stringify({ echo: '', n: 1.5 });
    const off = await post(offContract, signed(offContract));
    expect(off.status).toBe(400);
    const problem = (await off.json()) as { message: string[] };
    expect(problem.message).toEqual([expect.stringMatching(/^echo: /), expect.stringMatching(/^n: /)]);

    const nothing = await post('null', signed('null'));
    expect(nothing.status).toBe(400);
    expect(((await nothing.json()) as { message: string[] }).message).toHaveLength(2);
    expect(answered).toEqual([]);
    expect(unverified).toBe(0);
  });

  it('reads at most 16 kB of body', async () => {
    const big = JSON.stringify({ echo: 'x'.repeat(17 * 1024), n: 1 });
    const res = await post(big, signed(big));
    expect(res.status).toBe(413);
    expect(answered).toEqual([]);
  });
});
