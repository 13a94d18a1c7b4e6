import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../common/config';
import {
  BadRequestError,
  ContractError,
  DeceasedOrUnderAgeError,
  RateLimitedError,
  UnauthorizedError,
} from '../../connectors/errors';
import { createTransport, type ProviderClientOptions } from '../../connectors/identity-payments/transport';
import { readErrorMessages } from '../../connectors/identity-payments/wire/errors';

// The transport against a real HTTP server on 127.0.0.1 that answers each way the document leaves
// open: which Authorization form each endpoint takes, which body the receipt takes, how the token
// endpoint says no.

interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}
interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

const servers: { close: () => Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A provider on a random port: `answer` decides every reply; every request is kept in `seen`. */
async function provider(answer: (req: Seen) => Answer) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      seen.push(r);
      const a = answer(r);
      res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers });
      res.end(a.body === undefined ? '' : JSON.stringify(a.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const handle = {
    url: `http://127.0.0.1:${port}`,
    seen,
    tokenRequests: () => seen.filter((s) => s.path === '/oauth2/token').length,
    calls: (prefix: string) => seen.filter((s) => s.path.startsWith(prefix)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  servers.push(handle);
  return handle;
}

type Form = 'bare' | 'bearer';

/**
 * A provider that issues tokens (tok1, tok2, ...) and takes, per path prefix, only the given
 * Authorization forms; a refused form gets `refusal` (401 unless told). `revoke()` kills every
 * token issued so far.
 */
async function tokenProvider(
  takes: Record<string, Form[]>,
  options: { refusal?: number; expiresIn?: unknown; ok?: (req: Seen) => Answer } = {},
) {
  const valid = new Set<string>();
  let issued = 0;
  const p = await provider((req) => {
    if (req.path === '/oauth2/token') {
      issued += 1;
      const token = `tok${issued}`;
      valid.add(token);
      return {
        status: 200,
        body: { access_token: token, expires_in: options.expiresIn ?? 3600, token_type: 'Bearer' },
      };
    }
    if (req.headers['x-service-api-key'] === 'Api-Key key') {
      return options.ok ? options.ok(req) : { status: 200, body: { ok: true } };
    }
    const prefix = Object.keys(takes).find((k) => req.path.startsWith(k));
    const header = String(req.headers.authorization ?? '');
    const form: Form = header.startsWith('Bearer ') ? 'bearer' : 'bare';
    const token = form === 'bearer' ? header.slice('Bearer '.length) : header;
    if (prefix && takes[prefix]?.includes(form) && valid.has(token)) {
      return options.ok ? options.ok(req) : { status: 200, body: { ok: true } };
    }
    const status = options.refusal ?? 401;
    return { status, body: { statusCode: status, message: 'Unauthorized', error: 'Unauthorized' } };
  });
  return { ...p, revoke: () => valid.clear() };
}

function logs() {
  const info: { obj: object; msg?: string }[] = [];
  const warn: { obj: object; msg?: string }[] = [];
  return {
    info,
    warn,
    logger: {
      debug() {},
      info: (obj: object, msg?: string) => info.push({ obj, msg }),
      warn: (obj: object, msg?: string) => warn.push({ obj, msg }),
    },
  };
}

function transport(url: string, over: Partial<ProviderClientOptions> = {}) {
  return createTransport({
    baseUrl: url,
    authUrl: url,
    clientId: 'id',
    clientSecret: 'secret',
    apiKey: 'key',
    merchant: 'm',
    timeoutMs: 2000,
    ...over,
  });
}

const kyc = (t: ReturnType<typeof transport>) => t.postWithToken('kyc', '/kyc/1', '{"plan":"plan_basic"}');
const liveness = (t: ReturnType<typeof transport>) =>
  t.postWithToken('liveness', '/kyc-liveness/1', '{"correlation_id":"c","plan":"plan_basic","event":"e"}');
const inquiry = (t: ReturnType<typeof transport>) =>
  t.getWithToken('inquiry', '/dataconnector/transaction/1/type/deposit');
const authHeaders = (calls: Seen[]) => calls.map((c) => String(c.headers.authorization));

describe('Authorization form', () => {
  it("auto: takes the document's form where the provider does, and says so once per endpoint", async () => {
    const p = await tokenProvider({
      '/kyc/': ['bare'],
      '/kyc-liveness/': ['bare'],
      '/dataconnector/': ['bearer'],
    });
    const l = logs();
    const t = transport(p.url, { logger: l.logger });
    for (let i = 0; i < 2; i++) {
      await kyc(t);
      await liveness(t);
      await inquiry(t);
    }
    expect(authHeaders(p.calls('/kyc/'))).toEqual(['tok1', 'tok1']);
    expect(authHeaders(p.calls('/dataconnector/'))).toEqual(['Bearer tok1', 'Bearer tok1']);
    expect(t.learned().authHeader).toEqual({ kyc: 'bare', liveness: 'bare', inquiry: 'bearer' });
    expect(p.tokenRequests()).toBe(1);
    expect(l.info.map((x) => x.obj)).toEqual([
      { endpoint: 'kyc', authHeader: 'bare' },
      { endpoint: 'liveness', authHeader: 'bare' },
      { endpoint: 'inquiry', authHeader: 'bearer' },
    ]);
  });

  it.each([401, 403])(
    'auto: learns Bearer where the bare token is refused with %i, remembers it, and never refreshes for it',
    async (refusal) => {
      const p = await tokenProvider(
        { '/kyc/': ['bearer'], '/kyc-liveness/': ['bearer'], '/dataconnector/': ['bearer'] },
        { refusal },
      );
      const l = logs();
      const t = transport(p.url, { logger: l.logger });
      await kyc(t);
      await kyc(t);
      await liveness(t);
      await liveness(t);
      await inquiry(t);
      expect(authHeaders(p.calls('/kyc/'))).toEqual(['tok1', 'Bearer tok1', 'Bearer tok1']);
      expect(authHeaders(p.calls('/kyc-liveness/'))).toEqual(['tok1', 'Bearer tok1', 'Bearer tok1']);
      expect(authHeaders(p.calls('/dataconnector/'))).toEqual(['Bearer tok1']);
      expect(t.learned().authHeader).toEqual({ kyc: 'bearer', liveness: 'bearer', inquiry: 'bearer' });
      expect(p.tokenRequests()).toBe(1);
      expect(l.info.map((x) => x.obj)).toContainEqual({ endpoint: 'kyc', authHeader: 'bearer' });
      expect(JSON.stringify(l.info)).not.toContain('tok1');
    },
  );

  it('auto: learns the bare token where Bearer is refused (inquiries)', async () => {
    const p = await tokenProvider({ '/dataconnector/': ['bare'] });
    const t = transport(p.url);
    await inquiry(t);
    await inquiry(t);
    expect(authHeaders(p.calls('/dataconnector/'))).toEqual(['Bearer tok1', 'tok1', 'tok1']);
    expect(t.learned().authHeader.inquiry).toBe('bare');
  });

  it('auto: a revoked token is replaced once and the learned form kept', async () => {
    const p = await tokenProvider({ '/kyc/': ['bearer'] });
    const t = transport(p.url);
    await kyc(t);
    p.revoke();
    await kyc(t);
    expect(authHeaders(p.calls('/kyc/'))).toEqual([
      'tok1',
      'Bearer tok1',
      'Bearer tok1',
      'tok1',
      'Bearer tok2',
    ]);
    expect(p.tokenRequests()).toBe(2);
    expect(t.learned().authHeader.kyc).toBe('bearer');
  });

  it('auto: a provider refusing every form costs one token replacement in all, however often it is asked', async () => {
    const p = await tokenProvider({});
    const t = transport(p.url);
    for (let i = 0; i < 5; i++) {
      const err = await kyc(t).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnauthorizedError);
      expect((err as UnauthorizedError).retryable).toBe(true);
    }
    expect(p.tokenRequests()).toBe(2);
    // The first call: both forms, a new token, both forms; then both forms per call.
    expect(p.calls('/kyc/')).toHaveLength(4 + 4 * 2);
    expect(t.learned().authHeader.kyc).toBeUndefined();
  });

  it("fixed 'bare' sends only the bare token, and refreshes no more than once", async () => {
    const p = await tokenProvider({ '/kyc/': ['bearer'] });
    const t = transport(p.url, { authHeader: 'bare' });
    for (let i = 0; i < 3; i++) await expect(kyc(t)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(authHeaders(p.calls('/kyc/'))).toEqual(['tok1', 'tok2', 'tok2', 'tok2']);
    expect(p.tokenRequests()).toBe(2);
  });

  it("fixed 'bearer' sends only Bearer, on KYC too", async () => {
    const p = await tokenProvider({ '/kyc/': ['bearer', 'bare'], '/dataconnector/': ['bearer'] });
    const t = transport(p.url, { authHeader: 'bearer' });
    await kyc(t);
    await inquiry(t);
    expect(authHeaders(p.seen.filter((s) => s.path !== '/oauth2/token'))).toEqual([
      'Bearer tok1',
      'Bearer tok1',
    ]);
    expect(t.learned().authHeader).toEqual({ kyc: 'bearer', liveness: undefined, inquiry: 'bearer' });
  });
});

describe('receipt body format', () => {
  const receipt = { transactionId: 't1', status: 4, invoice: '', datetimerequest: '', datetimepayed: '' };
  const fields = { merchant: 'm', transactionId: 't1' };

  /** A receipt endpoint that reads only `takes`; the other content type gets `refusal`. */
  async function receiptProvider(takes: 'json' | 'form', refusal: (type: string) => Answer) {
    return provider((req) => {
      const type = String(req.headers['content-type']);
      const isForm = type.startsWith('application/x-www-form-urlencoded');
      if (req.headers['x-service-api-key'] !== 'Api-Key key') return { status: 401 };
      if ((takes === 'form') !== isForm) return refusal(type);
      const body = isForm ? Object.fromEntries(new URLSearchParams(req.body)) : JSON.parse(req.body);
      expect(body).toEqual(fields);
      return { status: 200, body: receipt };
    });
  }

  it('auto: JSON refused with 415, a form taken, and the form kept', async () => {
    const p = await receiptProvider('form', () => ({
      status: 415,
      body: { message: 'Unsupported Media Type' },
    }));
    const l = logs();
    const t = transport(p.url, { logger: l.logger });
    expect(await t.postReceipt('/receipts/merchant/cash-out/generate', fields)).toEqual(receipt);
    expect(await t.postReceipt('/receipts/merchant/cash-out/generate', fields)).toEqual(receipt);
    expect(p.seen.map((s) => String(s.headers['content-type']))).toEqual([
      'application/json',
      'application/x-www-form-urlencoded',
      'application/x-www-form-urlencoded',
    ]);
    expect(t.learned().receiptFormat).toBe('form');
    expect(l.info.map((x) => x.obj)).toEqual([{ endpoint: 'receipt', receiptFormat: 'form' }]);
  });

  it.each([
    [
      'a 400 naming the content type',
      { statusCode: 400, message: 'Content-Type must be urlencoded', error: 'Bad Request' },
    ],
    [
      'a 400 calling the sent fields missing',
      {
        statusCode: 400,
        message: ['merchant should not be empty', 'transactionId must be a string'],
        error: 'Bad Request',
      },
    ],
  ])('auto: falls back to a form on %s', async (_name, body) => {
    const p = await receiptProvider('form', () => ({ status: 400, body }));
    const t = transport(p.url);
    expect(await t.postReceipt('/r', fields)).toEqual(receipt);
    expect(t.learned().receiptFormat).toBe('form');
    expect(p.seen).toHaveLength(2);
  });

  it('auto: JSON taken first and kept', async () => {
    const p = await receiptProvider('json', () => ({ status: 415 }));
    const t = transport(p.url);
    await t.postReceipt('/r', fields);
    await t.postReceipt('/r', fields);
    expect(p.seen.map((s) => String(s.headers['content-type']))).toEqual([
      'application/json',
      'application/json',
    ]);
    expect(t.learned().receiptFormat).toBe('json');
  });

  it("fixed 'json' never sends a form: the 415 is the answer", async () => {
    const p = await receiptProvider('form', () => ({ status: 415 }));
    const t = transport(p.url, { receiptFormat: 'json' });
    const err = await t.postReceipt('/r', fields).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).status).toBe(415);
    expect(p.seen).toHaveLength(1);
  });

  it("fixed 'form' sends only a form", async () => {
    const p = await receiptProvider('form', () => ({ status: 415 }));
    const t = transport(p.url, { receiptFormat: 'form' });
    expect(await t.postReceipt('/r', fields)).toEqual(receipt);
    expect(p.seen).toHaveLength(1);
  });
});

describe('token endpoint', () => {
  it('takes expires_in as a string of digits, and caches the token for its lifetime', async () => {
    const p = await tokenProvider({ '/kyc/': ['bare'] }, { expiresIn: '3600' });
    const t = transport(p.url);
    await kyc(t);
    await kyc(t);
    expect(p.tokenRequests()).toBe(1);
  });

  it.each(['3600.5', '-1', '0', 'soon'])(
    'refuses expires_in %j as a contract breach naming it',
    async (value) => {
      const p = await tokenProvider({ '/kyc/': ['bare'] }, { expiresIn: value });
      const err = await kyc(transport(p.url)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ContractError);
      expect((err as ContractError).path).toBe('expires_in');
    },
  );

  it.each([403, 429])(
    'a token rate limit answered %i is RateLimitedError with its Retry-After, and held off',
    async (status) => {
      const p = await provider((req) =>
        req.path === '/oauth2/token'
          ? {
              status,
              body: { statusCode: status, message: 'Too many token requests', error: 'Forbidden' },
              headers: { 'retry-after': '12' },
            }
          : { status: 200, body: {} },
      );
      const t = transport(p.url);
      const err = await kyc(t).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RateLimitedError);
      expect((err as RateLimitedError).retryable).toBe(true);
      expect((err as RateLimitedError).retryAfterMs).toBe(12_000);
      await expect(kyc(t)).rejects.toBeInstanceOf(RateLimitedError);
      expect(p.tokenRequests()).toBe(1);
    },
  );

  it.each([
    [
      '400 invalid_client',
      400,
      { error: 'invalid_client', error_description: 'Client authentication failed' },
    ],
    ['401', 401, { statusCode: 401, message: 'Unauthorized', error: 'Unauthorized' }],
  ])('refused credentials (%s) are UnauthorizedError, said once at warn', async (_name, status, body) => {
    const p = await provider((req) =>
      req.path === '/oauth2/token' ? { status, body } : { status: 200, body: {} },
    );
    const l = logs();
    const t = transport(p.url, { logger: l.logger });
    for (let i = 0; i < 3; i++) {
      const err = await kyc(t).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnauthorizedError);
      expect((err as UnauthorizedError).retryable).toBe(true);
      expect((err as Error).message).toMatch(/refused the client credentials.*PROVIDER_CLIENT_ID/);
    }
    const credentialLines = l.warn.filter((w) => /client credentials/.test(w.msg ?? ''));
    expect(credentialLines).toHaveLength(1);
    expect(JSON.stringify(l.warn)).not.toContain('secret');
  });

  it('another OAuth error is a BadRequestError, not a credentials refusal', async () => {
    const p = await provider(() => ({ status: 400, body: { error: 'unsupported_grant_type' } }));
    const err = await kyc(transport(p.url)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
  });
});

describe('KYC and liveness 400s: a validation error is never an outcome about the person', () => {
  async function answering(status: number, body: unknown) {
    return tokenProvider(
      { '/kyc/': ['bare'], '/kyc-liveness/': ['bare'], '/dataconnector/': ['bearer'] },
      { ok: () => ({ status, body }) },
    );
  }

  it.each([
    [
      [
        'property correlation_id should not exist',
        'correlationId should not be empty',
        'correlationId must be a string',
      ],
      ['correlation_id', 'correlationId'],
    ],
    [['plan must be one of the following values: plan_basic, plan_standard'], ['plan']],
    [['event should not be empty'], ['event']],
    [['redirectUrl must be a URL address'], ['redirectUrl']],
    [['document must be a valid CPF'], ['document']],
    [['correlationId: Invalid input: expected string, received undefined'], ['correlationId']],
  ])('NestJS validation %j is a BadRequestError naming %j', async (message, fields) => {
    const p = await answering(400, { statusCode: 400, message, error: 'Bad Request' });
    const err = await liveness(transport(p.url)).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(DeceasedOrUnderAgeError);
    expect(err).toBeInstanceOf(BadRequestError);
    expect([...(err as BadRequestError).fields].sort()).toEqual([...fields].sort());
    expect((err as BadRequestError).retryable).toBe(false);
  });

  it.each([
    ['CPF invalido: titular falecido ou menor de idade'],
    ['Titular com óbito registrado'],
    ['holder is deceased or under age'],
  ])(
    "the document's deceased-or-under-age body (%j) is DeceasedOrUnderAgeError, on KYC and liveness",
    async (text) => {
      const p = await answering(400, { statusCode: 400, message: [text], error: 'Bad Request' });
      const t = transport(p.url);
      await expect(kyc(t)).rejects.toBeInstanceOf(DeceasedOrUnderAgeError);
      await expect(liveness(t)).rejects.toBeInstanceOf(DeceasedOrUnderAgeError);
    },
  );

  it('an array that says nothing of the person or a field is a plain BadRequestError', async () => {
    const p = await answering(400, {
      statusCode: 400,
      message: ['something went wrong'],
      error: 'Bad Request',
    });
    const err = await kyc(transport(p.url)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).fields).toEqual([]);
  });

  it('422 is a BadRequestError on every endpoint, naming the fields it names', async () => {
    const body = {
      statusCode: 422,
      message: ['value must be a positive number'],
      error: 'Unprocessable Entity',
    };
    const p = await answering(422, body);
    const t = transport(p.url);
    for (const call of [
      () => kyc(t),
      () => liveness(t),
      () => inquiry(t),
      () => t.postWithApiKey('withdraw', '/v2/withdraw/create', '{}'),
    ]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BadRequestError);
      expect((err as BadRequestError).status).toBe(422);
      expect((err as BadRequestError).fields).toEqual(['value']);
    }
  });
});

describe('readErrorMessages', () => {
  it.each([
    [['correlation_id should not exist'], 'validation'],
    [['CPF invalido: titular falecido ou menor de idade'], 'person'],
    [['document holder is deceased'], 'person'],
    [['menor de idade'], 'person'],
    [['document must be a string'], 'validation'],
    // Validation wins over any word about the person in the same answer.
    [['CPF invalido: titular falecido', 'plan should not be empty'], 'validation'],
    [['internal error'], 'other'],
    [[], 'other'],
  ] as const)('%j reads as %s', (message, kind) => {
    expect(readErrorMessages(message).kind).toBe(kind);
  });
});

describe('settings', () => {
  it('PROVIDER_AUTH_HEADER, PROVIDER_RECEIPT_FORMAT and PROVIDER_LIVENESS_ID_FIELD land in config.provider, auto by default', () => {
    expect(loadConfig({}).provider).toMatchObject({
      authHeader: 'auto',
      receiptFormat: 'auto',
      livenessIdField: 'auto',
    });
    expect(
      loadConfig({
        PROVIDER_AUTH_HEADER: 'bearer',
        PROVIDER_RECEIPT_FORMAT: 'form',
        PROVIDER_LIVENESS_ID_FIELD: 'correlationId',
      }).provider,
    ).toMatchObject({ authHeader: 'bearer', receiptFormat: 'form', livenessIdField: 'correlationId' });
  });

  it.each([
    ['PROVIDER_AUTH_HEADER', 'Bearer'],
    ['PROVIDER_RECEIPT_FORMAT', 'xml'],
    ['PROVIDER_LIVENESS_ID_FIELD', 'correlationid'],
  ])('%s=%s is refused, naming the setting', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });
});
