import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generate as generateCpf } from '@fnando/cpf';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ELIGIBILITY_DEV_SECRET } from '../../common/config';
import { eligibilityRequestSchema } from '../../eligibility/contract';
import {
  EligibilityUnavailableError,
  httpEligibilityRegistry,
  signedEligibilityRequest,
} from '../../eligibility/registry';
import { type RunningSandbox, startSandbox } from '../../sandbox';
import { eligibilityTestCpfs } from '../../sandbox/eligibility';

// The HTTP adapter to the eligibility service: its requests signed (Standard Webhooks) and its
// answers parsed, against the sandbox's emulation and against a local server that answers what a
// test tells it to.

const OTHER_SECRET = `whsec_${Buffer.from('not-the-eligibility-secret-0123').toString('base64')}`;

interface Seen {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A local service whose next answers are queued by the test: [status, body] or 'hang'. */
let service: http.Server;
let serviceUrl: string;
let queue: Array<[number, unknown] | 'hang'>;
let seen: Seen[];
let sandbox: RunningSandbox;

beforeAll(async () => {
  service = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const next = queue.shift() ?? [200, { status: 'eligible' }];
      if (next === 'hang') return;
      res.writeHead(next[0], { 'content-type': 'application/json' });
      res.end(typeof next[1] === 'string' ? next[1] : JSON.stringify(next[1]));
    });
  });
  await new Promise<void>((r) => service.listen(0, '127.0.0.1', r));
  serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}/check`;
  sandbox = await startSandbox();
});
afterAll(async () => {
  service.closeAllConnections();
  await new Promise((r) => service.close(r));
  await sandbox.close();
});
beforeEach(() => {
  queue = [];
  seen = [];
});

const local = (over: Partial<Parameters<typeof httpEligibilityRegistry>[0]> = {}) =>
  httpEligibilityRegistry({
    url: serviceUrl,
    secret: ELIGIBILITY_DEV_SECRET,
    timeoutMs: 1_000,
    backoffMs: 10,
    ...over,
  });
const emulated = (secret = ELIGIBILITY_DEV_SECRET) =>
  httpEligibilityRegistry({
    url: `${sandbox.url}/eligibility/check`,
    secret,
    timeoutMs: 1_000,
    backoffMs: 10,
  });

const control = (path: string, body: unknown) =>
  fetch(`${sandbox.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('the eligibility registry over HTTP', () => {
  it('signs each request as Standard Webhooks do, with the CPF and why it asks', async () => {
    const cpf = generateCpf();
    expect(await local().check(cpf, 'deposit')).toEqual({ status: 'eligible' });
    const [req] = seen;
    expect(req?.headers['content-type']).toBe('application/json');
    const verified = new Webhook(ELIGIBILITY_DEV_SECRET).verify(req!.body, {
      'webhook-id': String(req!.headers['webhook-id']),
      'webhook-timestamp': String(req!.headers['webhook-timestamp']),
      'webhook-signature': String(req!.headers['webhook-signature']),
    });
    expect(eligibilityRequestSchema.parse(verified)).toMatchObject({ cpf, purpose: 'deposit' });
    // Another secret does not verify it.
    expect(() =>
      new Webhook(OTHER_SECRET).verify(req!.body, {
        'webhook-id': String(req!.headers['webhook-id']),
        'webhook-timestamp': String(req!.headers['webhook-timestamp']),
        'webhook-signature': String(req!.headers['webhook-signature']),
      }),
    ).toThrow();
  });

  it('parses an impeded answer with its reason and until', async () => {
    queue.push([200, { status: 'impeded', reason: 'self_excluded', until: '2030-01-01T00:00:00Z' }]);
    expect(await local().check(generateCpf(), 'onboarding')).toEqual({
      status: 'impeded',
      reason: 'self_excluded',
      until: '2030-01-01T00:00:00Z',
    });
  });

  it('refuses an answer off contract, naming the field, without asking again', async () => {
    queue.push([200, { status: 'impeded', reason: 'bankrupt' }]);
    const err = await local()
      .check(generateCpf(), 'deposit')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EligibilityUnavailableError);
    expect((err as Error).message).toMatch(/off contract: reason/);
    queue.push([200, 'not json']);
    await expect(local().check(generateCpf(), 'deposit')).rejects.toThrow(/not JSON/);
    expect(seen).toHaveLength(2);
  });

  it('asks again after a 5xx or no answer in time, each attempt signed anew, then gives up', async () => {
    queue.push([503, {}], 'hang', [200, { status: 'eligible' }]);
    expect(await local({ timeoutMs: 200 }).check(generateCpf(), 'deposit')).toEqual({ status: 'eligible' });
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map((s) => s.headers['webhook-id'])).size).toBe(3);

    seen = [];
    queue.push([500, {}], [502, {}], [503, {}], [200, { status: 'eligible' }]);
    await expect(local().check(generateCpf(), 'deposit')).rejects.toThrow(/answered 503 \(attempt 3 of 3\)/);
    expect(seen).toHaveLength(3);
  });

  it('is unavailable when nothing listens, and its message never holds the CPF', async () => {
    const cpf = generateCpf();
    const err = await httpEligibilityRegistry({
      url: 'http://127.0.0.1:9/check',
      secret: ELIGIBILITY_DEV_SECRET,
      timeoutMs: 500,
      backoffMs: 1,
    })
      .check(cpf, 'deposit')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EligibilityUnavailableError);
    expect((err as Error).message).toMatch(/unreachable/);
    expect((err as Error).message).not.toContain(cpf);
  });
});

describe("the sandbox's eligibility emulation", () => {
  it('answers each test CPF as documented, and any other CPF eligible', async () => {
    for (const d of eligibilityTestCpfs) expect(await emulated().check(d.cpf, 'deposit')).toEqual(d.answer);
    expect(await emulated().check(generateCpf(), 'deposit')).toEqual({ status: 'eligible' });
  });

  it('refuses a request signed with another secret (401), which the adapter does not retry', async () => {
    const before = ((await (await fetch(`${sandbox.url}/sandbox/eligibility`)).json()) as { refused: number })
      .refused;
    await expect(emulated(OTHER_SECRET).check(generateCpf(), 'deposit')).rejects.toThrow(/answered 401/);
    const after = ((await (await fetch(`${sandbox.url}/sandbox/eligibility`)).json()) as { refused: number })
      .refused;
    expect(after - before).toBe(1);
  });

  it('refuses a signed body that is not JSON or off contract with a 400, not a 5xx', async () => {
    for (const body of ['{"cpf":', JSON.stringify({ cpf: generateCpf() })]) {
      const res = await fetch(`${sandbox.url}/eligibility/check`, {
        method: 'POST',
        headers: signedEligibilityRequest(body, ELIGIBILITY_DEV_SECRET),
        body,
      });
      expect(res.status, body).toBe(400);
    }
  });

  it("changes a person's status through its control endpoint", async () => {
    const cpf = generateCpf();
    const res = await control('/sandbox/eligibility/status', {
      cpf,
      status: 'impeded',
      reason: 'court_order',
    });
    expect(res.status).toBe(200);
    expect(await emulated().check(cpf, 'rescreening')).toEqual({ status: 'impeded', reason: 'court_order' });
    await control('/sandbox/eligibility/status', { cpf, status: 'eligible' });
    expect(await emulated().check(cpf, 'rescreening')).toEqual({ status: 'eligible' });
  });

  it('refuses bad control input with a 400 naming the field', async () => {
    const invalid = await control('/sandbox/eligibility/status', {
      cpf: '12345678900',
      status: 'impeded',
      reason: 'court_order',
    });
    expect(invalid.status).toBe(400);
    expect(JSON.stringify(await invalid.json())).toMatch(/cpf: must be a valid CPF/);
    const noReason = await control('/sandbox/eligibility/status', { cpf: generateCpf(), status: 'impeded' });
    expect(noReason.status).toBe(400);
    expect(JSON.stringify(await noReason.json())).toMatch(/reason: required when status is impeded/);
    const badReason = await control('/sandbox/eligibility/status', {
      cpf: generateCpf(),
      status: 'impeded',
      reason: 'x',
    });
    expect(badReason.status).toBe(400);
    expect(JSON.stringify(await badReason.json())).toMatch(/reason/);
    const badMode = await control('/sandbox/eligibility/outage', { mode: 'sometimes' });
    expect(badMode.status).toBe(400);
    expect(JSON.stringify(await badMode.json())).toMatch(/mode/);
  });

  it('fails on demand: 503s for a count of calls, or for good until cleared', async () => {
    await control('/sandbox/eligibility/outage', { mode: 'error', count: 2 });
    // Two 503s, then the adapter's third attempt is answered.
    expect(await emulated().check(generateCpf(), 'deposit')).toEqual({ status: 'eligible' });
    await control('/sandbox/eligibility/outage', { mode: 'error' });
    await expect(emulated().check(generateCpf(), 'deposit')).rejects.toThrow(/answered 503/);
    await control('/sandbox/eligibility/outage', { mode: 'timeout', delayMs: 5_000 });
    await expect(
      httpEligibilityRegistry({
        url: `${sandbox.url}/eligibility/check`,
        secret: ELIGIBILITY_DEV_SECRET,
        timeoutMs: 200,
        attempts: 1,
      }).check(generateCpf(), 'deposit'),
    ).rejects.toThrow(/no answer within 200 ms/);
    await control('/sandbox/eligibility/outage', { mode: 'none' });
    expect(await emulated().check(generateCpf(), 'deposit')).toEqual({ status: 'eligible' });
  });
});
