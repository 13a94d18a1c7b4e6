import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OPEN_POINT_IDS, type OpenPointId } from '../../connectors/identity-payments/open-points';
import type { RunningSandbox } from '../../sandbox/app';
import { waitUntil } from '../helpers/wait';
import { person, type Side, type Speaker, speaker, startDialectSandbox } from './support';

// Each open point's two sides, as the provider endpoints answer them in raw HTTP, and the strict
// refusals: on each side the other side's form fails, so a client that picked wrong fails here.
// Each test switches only its own point (PUT /sandbox/dialect), the rest staying on `doc`.

let sb: RunningSandbox;
let p: Speaker;
let clock = Date.parse('2026-03-02T12:00:00.000Z');

beforeAll(async () => {
  sb = await startDialectSandbox({ now: () => clock, depositExpiryMs: 60_000 });
  p = speaker(sb.url);
});
afterAll(async () => {
  await sb?.close();
});
beforeEach(async () => {
  clock += 3_600_000;
  expect((await p.control('/sandbox/reset')).status).toBe(200);
});

/** Only `point` on `side`, every other point on `doc`. */
const only = (point: OpenPointId, side: Side) => p.dialect({ points: { [point]: side } });

describe('token.expires_in', () => {
  it('doc: a JSON number; other: its decimal text', async () => {
    const doc = await p.tokenRequest();
    expect(doc.status).toBe(200);
    expect(doc.body.expires_in).toBe(3600);
    await only('token.expires_in', 'other');
    const other = await p.tokenRequest();
    expect(other.status).toBe(200);
    expect(other.body.expires_in).toBe('3600');
    expect(other.body).toMatchObject({ token_type: 'Bearer', access_token: expect.any(String) });
  });
});

describe('token.errors', () => {
  const wrong = 'client_id=sandbox-client&client_secret=nope&grant_type=client_credentials';

  it('doc: bad credentials 401, the rate limit 429 with Retry-After', async () => {
    const bad = await p.tokenRequest(wrong);
    expect(bad.status).toBe(401);
    expect(bad.body).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
    await p.control('/sandbox/faults', { tokenRateLimitNext: 1, retryAfterSeconds: 7 });
    const limited = await p.tokenRequest();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
  });

  it('other: bad credentials 400 invalid_client, the rate limit 403 with Retry-After', async () => {
    await only('token.errors', 'other');
    const bad = await p.tokenRequest(wrong);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
    await p.control('/sandbox/faults', { tokenRateLimitNext: 1, retryAfterSeconds: 7 });
    const limited = await p.tokenRequest();
    expect(limited.status).toBe(403);
    expect(limited.headers.get('retry-after')).toBe('7');
    // A window really full answers the same way.
    const small = await startDialectSandbox({
      tokenRateLimit: { max: 1, windowMs: 60_000 },
      dialect: { default: 'doc', points: { 'token.errors': 'other' } },
    });
    try {
      const s = speaker(small.url);
      expect((await s.tokenRequest()).status).toBe(200);
      const full = await s.tokenRequest();
      expect(full.status).toBe(403);
      expect(Number(full.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await small.close();
    }
  });
});

describe('auth.header', () => {
  const livenessBody = { correlation_id: 'c-1' };

  it('doc: KYC and liveness take the bare token only, inquiries Bearer only', async () => {
    const token = await p.token();
    expect((await p.kyc(person.cpf, token)).status).toBe(200);
    expect((await p.kyc(person.cpf, `Bearer ${token}`)).status).toBe(401);
    expect((await p.liveness(person.cpf, token, livenessBody)).status).toBe(200);
    expect((await p.liveness(person.cpf, `Bearer ${token}`, livenessBody)).status).toBe(401);
    for (const kind of ['deposit', 'withdraw'] as const) {
      // 404: past the token check, the transaction does not exist.
      expect((await p.inquiry(kind, '1', `Bearer ${token}`)).status).toBe(404);
      expect((await p.inquiry(kind, '1', token)).status).toBe(401);
    }
  });

  it('other: Bearer everywhere, the bare token refused with 401', async () => {
    await only('auth.header', 'other');
    const token = await p.token();
    expect((await p.kyc(person.cpf, `Bearer ${token}`)).status).toBe(200);
    expect((await p.kyc(person.cpf, token)).status).toBe(401);
    expect((await p.liveness(person.cpf, `Bearer ${token}`, livenessBody)).status).toBe(200);
    expect((await p.liveness(person.cpf, token, livenessBody)).status).toBe(401);
    for (const kind of ['deposit', 'withdraw'] as const) {
      expect((await p.inquiry(kind, '1', `Bearer ${token}`)).status).toBe(404);
      expect((await p.inquiry(kind, '1', token)).status).toBe(401);
    }
  });

  it('both: no token, or an unknown one in the right form, is a 401', async () => {
    for (const side of ['doc', 'other'] as const) {
      await only('auth.header', side);
      expect((await p.kyc(person.cpf, '')).status).toBe(401);
      expect((await p.kyc(person.cpf, side === 'doc' ? 'nope' : 'Bearer nope')).status).toBe(401);
      expect((await p.inquiry('deposit', '1', 'Bearer nope')).status).toBe(401);
    }
  });
});

describe('liveness.correlation', () => {
  const nestBody = {
    statusCode: 400,
    message: ['correlationId should not be empty', 'correlationId must be a string'],
    error: 'Bad Request',
  };

  it('doc: correlation_id, required; correlationId alone is a 400 naming correlation_id', async () => {
    const token = await p.token();
    const ok = await p.liveness(person.cpf, token, { correlation_id: 'snake-1' });
    expect(ok.status).toBe(200);
    expect(ok.body.correlation_id).toBe('snake-1');
    const camel = await p.liveness(person.cpf, token, { correlationId: 'camel-1' });
    expect(camel.status).toBe(400);
    expect(JSON.stringify(camel.body.message)).toContain('correlation_id');
  });

  it('other: correlationId, required; correlation_id instead is the NestJS 400, shaped like the deceased error', async () => {
    await only('liveness.correlation', 'other');
    const token = await p.token();
    const ok = await p.liveness(person.cpf, token, { correlationId: 'camel-2' });
    expect(ok.status).toBe(200);
    // The answer still echoes it as correlation_id.
    expect(ok.body.correlation_id).toBe('camel-2');
    expect(ok.body).not.toHaveProperty('correlationId');
    const snake = await p.liveness(person.cpf, token, { correlation_id: 'snake-2' });
    expect(snake.status).toBe(400);
    expect(snake.body).toEqual(nestBody);
    expect((await p.liveness(person.cpf, token, {})).body).toEqual(nestBody);
    expect((await p.liveness(person.cpf, token, { correlationId: 5 })).body).toEqual({
      ...nestBody,
      message: ['correlationId must be a string'],
    });
    // The trap: the document's deceased-or-under-age error has the very same shape.
    const deceased = await p.liveness('77858374060', token, { correlationId: 'camel-3' });
    expect(deceased.status).toBe(400);
    expect(Object.keys(deceased.body).sort()).toEqual(Object.keys(snake.body).sort());
    expect(deceased.body).toMatchObject({
      statusCode: 400,
      error: 'Bad Request',
      message: [expect.any(String)],
    });
  });
});

describe('kyc.status', () => {
  it('doc: lower case; other: upper case; a null status stays null; liveness is upper case on both', async () => {
    for (const side of ['doc', 'other'] as const) {
      await only('kyc.status', side);
      const token = await p.token();
      const suspended = await p.kyc('30281362874', token);
      expect(suspended.status).toBe(200);
      expect(suspended.body.status).toBe(side === 'doc' ? 'suspenso' : 'SUSPENSO');
      expect((await p.kyc(person.cpf, token)).body.status).toBe(side === 'doc' ? 'regular' : 'REGULAR');
      const none = await p.kyc('27735381379', token);
      expect(none.status).toBe(200);
      expect(none.body.status).toBeNull();
      const live = await p.liveness(person.cpf, token, { correlation_id: `c-${side}` });
      expect(live.body.kyc.status).toBe('REGULAR');
    }
  });
});

describe('inquiry.status', () => {
  it('maps every state: processing, completed, failed, expired', async () => {
    const expected = {
      doc: { processing: 'processing', completed: 'completed', failed: 'failed', expired: 'expired' },
      other: { processing: 'ATIVA', completed: 'CONCLUIDA', failed: 'REJEITADA', expired: 'EXPIRADA' },
    };
    for (const side of ['doc', 'other'] as const) {
      await p.control('/sandbox/reset');
      await only('inquiry.status', side);
      const words = expected[side];
      const bearer = `Bearer ${await p.token()}`;
      const status = async (kind: 'deposit' | 'withdraw', id: string) =>
        (await p.inquiry(kind, id, bearer)).body.status;
      expect((await p.deposit('1001', 10.5)).status).toBe(201);
      expect((await p.deposit('1002', 10.5)).status).toBe(201);
      expect(await status('deposit', '1001')).toBe(words.processing);
      await p.control('/sandbox/deposits/1001/pay');
      expect(await status('deposit', '1001')).toBe(words.completed);
      expect((await p.withdraw('w-ok', 10.5)).status).toBe(201);
      expect((await p.withdraw('w-ko', 10.5)).status).toBe(201);
      expect(await status('withdraw', 'w-ok')).toBe(words.processing);
      await p.control('/sandbox/withdrawals/w-ok/settle');
      await p.control('/sandbox/withdrawals/w-ko/fail', { reason: 'closed' });
      expect(await status('withdraw', 'w-ok')).toBe(words.completed);
      expect(await status('withdraw', 'w-ko')).toBe(words.failed);
      clock += 120_000; // past the deposit's expiry
      expect(await status('deposit', '1002')).toBe(words.expired);
      // The sandbox's own view keeps its words, whatever the dialect.
      const state = (await p.control('/sandbox/state', undefined, 'GET')).body;
      expect(state.deposits.map((d: { status: string }) => d.status).sort()).toEqual([
        'completed',
        'expired',
      ]);
    }
  });
});

describe('inquiry.empty', () => {
  it('doc: "" for empty fields, payedAt, value a number', async () => {
    const bearer = `Bearer ${await p.token()}`;
    await p.deposit('2001', 10.5);
    const unpaid = (await p.inquiry('deposit', '2001', bearer)).body;
    expect(unpaid).toMatchObject({ name_payer: '', cpf_payer: '', payedAt: '', e2eId: '', value: 10.5 });
    expect(unpaid).not.toHaveProperty('paidAt');
    await p.control('/sandbox/deposits/2001/pay', { payerCpf: '' });
    const paid = (await p.inquiry('deposit', '2001', bearer)).body;
    expect(paid).toMatchObject({ cpf_payer: '', payedAt: new Date(clock).toISOString() });
    await p.withdraw('w-1', 7);
    expect((await p.inquiry('withdraw', 'w-1', bearer)).body).toMatchObject({ payedAt: '', value: 7 });
  });

  it('other: null for empty fields, paidAt, value a decimal string', async () => {
    await only('inquiry.empty', 'other');
    const bearer = `Bearer ${await p.token()}`;
    await p.deposit('2002', 10.5);
    const unpaid = (await p.inquiry('deposit', '2002', bearer)).body;
    expect(unpaid).toMatchObject({
      name_payer: null,
      cpf_payer: null,
      paidAt: null,
      e2eId: null,
      value: '10.50',
    });
    expect(unpaid).not.toHaveProperty('payedAt');
    // Only the empty ones: the rest keep their values.
    expect(unpaid).toMatchObject({ txid: '2002', cpf_client: person.cpf, status: 'processing' });
    await p.control('/sandbox/deposits/2002/pay', { payerCpf: '' });
    const paid = (await p.inquiry('deposit', '2002', bearer)).body;
    expect(paid).toMatchObject({
      cpf_payer: null,
      name_payer: person.name,
      paidAt: new Date(clock).toISOString(),
    });
    expect(paid.e2eId).toMatch(/^E\d{20}/);
    await p.withdraw('w-2', 7);
    const w = (await p.inquiry('withdraw', 'w-2', bearer)).body;
    expect(w).toMatchObject({ paidAt: null, value: '7.00', name_payer: null });
    expect(w).not.toHaveProperty('payedAt');
  });
});

describe('withdraw.duplicate', () => {
  it('doc: 409; other: 400; the sandbox error body; never paid twice', async () => {
    for (const side of ['doc', 'other'] as const) {
      await only('withdraw.duplicate', side);
      const id = `dup-${side}`;
      expect((await p.withdraw(id, 5)).status).toBe(201);
      const again = await p.withdraw(id, 5);
      expect(again.status).toBe(side === 'doc' ? 409 : 400);
      expect(again.body).toEqual({
        statusCode: again.status,
        message: expect.any(String),
        error: 'DUPLICATE_TRANSACTION',
      });
      const state = (await p.control('/sandbox/state', undefined, 'GET')).body;
      expect(state.counters.payouts[id]).toBe(1);
    }
  });
});

describe('withdraw.create', () => {
  it('doc: 201 with value a number; other: 200 with value a decimal string and e2eId null', async () => {
    const doc = await p.withdraw('c-doc', 10.5);
    expect(doc.status).toBe(201);
    expect(doc.body).toMatchObject({
      transactionId: 'c-doc',
      value: 10.5,
      status: 'processing',
      responseStatus: 201,
    });
    expect(doc.body.e2eId).toMatch(/^E\d{20}/);
    await only('withdraw.create', 'other');
    const other = await p.withdraw('c-other', 10.5);
    expect(other.status).toBe(200);
    expect(other.body).toMatchObject({
      transactionId: 'c-other',
      value: '10.50',
      e2eId: null,
      responseStatus: 200,
    });
  });
});

describe('receipt.content-type', () => {
  it('doc: JSON only, a form is a 415; other: a form only, JSON is a 415', async () => {
    expect((await p.receipt('nope', 'json')).status).toBe(200);
    const form = await p.receipt('nope', 'form');
    expect(form.status).toBe(415);
    expect(form.body).toMatchObject({
      statusCode: 415,
      message: expect.stringContaining('application/json'),
    });
    await only('receipt.content-type', 'other');
    expect((await p.receipt('nope', 'form')).status).toBe(200);
    const json = await p.receipt('nope', 'json');
    expect(json.status).toBe(415);
    expect(json.body.message).toContain('application/x-www-form-urlencoded');
  });
});

describe('receipt.status', () => {
  it('doc: integer codes, "" when empty; other: codes as text, null when empty', async () => {
    await p.withdraw('r-1', 10);
    await p.control('/sandbox/withdrawals/r-1/settle');
    const unknown = (await p.receipt('nope', 'json')).body;
    expect(unknown).toMatchObject({ transactionId: 'nope', status: 0, invoice: '', datetimepayed: '' });
    const done = (await p.receipt('r-1', 'json')).body;
    expect(done).toMatchObject({ status: 4, datetimepayed: new Date(clock).toISOString() });
    expect(done.invoice.length).toBeGreaterThan(100);

    await only('receipt.status', 'other');
    const unknownText = (await p.receipt('nope', 'json')).body;
    expect(unknownText).toMatchObject({
      transactionId: 'nope',
      status: '0',
      invoice: null,
      datetimepayed: null,
    });
    const doneText = (await p.receipt('r-1', 'json')).body;
    expect(doneText).toMatchObject({ status: '4', invoice: done.invoice, datetimepayed: done.datetimepayed });
    await p.withdraw('r-2', 10);
    expect((await p.receipt('r-2', 'json')).body).toMatchObject({ status: '3', invoice: null });
  });
});

describe('every point at once', () => {
  it('`other` answers every point on its other side; the console, pages and notifications still work', async () => {
    const received: Record<string, unknown>[] = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
        res.statusCode = 204;
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      expect((await p.control('/sandbox/notifications', { url: hook, partnerId: 'p-1' })).status).toBe(200);
      await p.dialect({ default: 'other' });
      const token = await p.tokenRequest();
      expect(token.body.expires_in).toBe('3600');
      const bearer = `Bearer ${token.body.access_token}`;
      expect((await p.kyc('30281362874', bearer)).body.status).toBe('SUSPENSO');
      const live = await p.liveness(person.cpf, bearer, { correlationId: 'all-other' });
      expect(live.status).toBe(200);
      const livenessPage = await fetch(live.body.action.url);
      expect(livenessPage.status).toBe(200);
      expect(await livenessPage.text()).toContain('Liveness check (sandbox)');
      expect((await p.deposit('3001', 1)).status).toBe(201);
      expect((await p.inquiry('deposit', '3001', bearer)).body).toMatchObject({
        status: 'ATIVA',
        paidAt: null,
      });
      expect((await p.withdraw('a-1', 1)).status).toBe(200);
      expect((await p.withdraw('a-1', 1)).status).toBe(400);
      expect((await p.receipt('a-1', 'form')).body).toMatchObject({ status: '3', invoice: null });
      const page = await fetch(`${sb.url}/sandbox/console`);
      expect(page.status).toBe(200);
      const rows = await (await fetch(`${sb.url}/sandbox/console/rows`)).text();
      expect(rows).toContain('deposit-3001');
      expect(rows).toContain('withdrawal-a-1');
      // The notifications are the sandbox's own: the same messages in every dialect.
      expect((await p.control('/sandbox/deposits/3001/pay')).status).toBe(200);
      await waitUntil(
        () => received.length,
        (n) => n >= 2,
        5_000,
      );
      expect(received).toEqual(
        expect.arrayContaining([
          { id: '3001', type: 'deposit', action: 'requested', partner_id: 'p-1' },
          { id: '3001', type: 'deposit', action: 'updated', partner_id: 'p-1' },
        ]),
      );
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });
});

describe('the control endpoint', () => {
  it('reads the dialect with every point side, puts another in place, refuses an unknown point or side', async () => {
    const read = await p.control('/sandbox/dialect', undefined, 'GET');
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      default: 'doc',
      points: {},
      sides: Object.fromEntries(OPEN_POINT_IDS.map((id) => [id, 'doc'])),
    });
    const put = await p.control(
      '/sandbox/dialect',
      { default: 'other', points: { 'auth.header': 'doc' } },
      'PUT',
    );
    expect(put.status).toBe(200);
    expect(put.body.sides['auth.header']).toBe('doc');
    expect(put.body.sides['inquiry.status']).toBe('other');
    // The answers follow at once.
    expect((await p.tokenRequest()).body.expires_in).toBe('3600');

    const unknown = await p.control('/sandbox/dialect', { points: { 'inquiry.colour': 'other' } }, 'PUT');
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body.message)).toContain('inquiry.colour');
    const badSide = await p.control('/sandbox/dialect', { points: { 'inquiry.status': 'maybe' } }, 'PUT');
    expect(badSide.status).toBe(400);
    expect(JSON.stringify(badSide.body.message)).toContain('inquiry.status');
    // A refused change changes nothing.
    expect((await p.control('/sandbox/dialect', undefined, 'GET')).body.default).toBe('other');
  });

  it('reset and DELETE go back to the configured dialect', async () => {
    const configured = await startDialectSandbox({
      dialect: { default: 'doc', points: { 'inquiry.status': 'other' } },
    });
    try {
      const s = speaker(configured.url);
      const sides = async () => (await s.control('/sandbox/dialect', undefined, 'GET')).body.sides;
      expect((await sides())['inquiry.status']).toBe('other');
      expect((await sides())['withdraw.create']).toBe('doc');
      await s.dialect({ default: 'other', points: { 'inquiry.status': 'doc' } });
      expect((await sides())['inquiry.status']).toBe('doc');
      expect((await sides())['withdraw.create']).toBe('other');
      expect((await s.control('/sandbox/reset')).status).toBe(200);
      expect((await s.control('/sandbox/dialect', undefined, 'GET')).body).toMatchObject({
        default: 'doc',
        points: { 'inquiry.status': 'other' },
      });
      await s.dialect({ default: 'other' });
      expect((await s.control('/sandbox/dialect', undefined, 'DELETE')).body.points).toEqual({
        'inquiry.status': 'other',
      });
      expect((await sides())['withdraw.create']).toBe('doc');
    } finally {
      await configured.close();
    }
  });
});
