import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  ContractError,
  createProviderClient,
  DeceasedOrUnderAgeError,
  DocumentNotFoundError,
  DuplicateTransactionError,
  InvalidDocumentError,
  NotFoundError,
  type ProviderClientOptions,
  ProviderUnavailableError,
  RateLimitedError,
  RestrictedDocumentError,
  UnauthorizedError,
} from '../helpers/identity-payments-wire';

type Call = { url: string; init: RequestInit };
type Reply = { status: number; body?: unknown; headers?: Record<string, string> } | (() => Promise<Response>);

const TOKEN_REPLY = { status: 200, body: { access_token: 'tok', expires_in: 3600, token_type: 'Bearer' } };

/** A fake fetch that answers the token endpoint and then pops replies for other URLs in order. */
function fakeFetch(replies: Reply[]) {
  const calls: Call[] = [];
  let tokens = 0;
  const fn = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    calls.push({ url, init: init ?? {} });
    if (url.endsWith('/oauth2/token')) {
      tokens += 1;
      return new Response(JSON.stringify({ ...TOKEN_REPLY.body, access_token: `tok${tokens}` }), {
        status: 200,
      });
    }
    const r = replies.shift();
    if (!r) throw new Error('no reply left');
    if (typeof r === 'function') return r();
    return new Response(r.body === undefined ? '' : JSON.stringify(r.body), {
      status: r.status,
      headers: r.headers,
    });
  }) as typeof fetch;
  return {
    fn,
    calls,
    get tokens() {
      return tokens;
    },
  };
}

function client(f: typeof fetch, over: Partial<ProviderClientOptions> = {}) {
  return createProviderClient({
    baseUrl: 'http://p.test/',
    authUrl: 'http://auth.test',
    clientId: 'id',
    clientSecret: 'secret',
    apiKey: 'key',
    merchant: 'm',
    timeoutMs: 200,
    fetch: f,
    ...over,
  });
}

const at = '2024-01-01T00:00:00Z';

describe('provider client error mapping', () => {
  it.each([
    [
      { statusCode: 400, message: 'x', error: 'INVALID_DOCUMENT', document: '1', response_at: at },
      InvalidDocumentError,
    ],
    [
      {
        document: '1',
        message: 'x',
        code: 'INVALID_DOCUMENT',
        response_at: at,
        response_token_validation: 'v',
      },
      InvalidDocumentError,
    ],
    [{ document: '1', statusCode: 400, message: 'x', error: 'RESTRICT_DOCUMENT' }, RestrictedDocumentError],
    [
      {
        statusCode: 400,
        message: ['CPF invalido: titular falecido ou menor de idade'],
        error: 'Bad Request',
      },
      DeceasedOrUnderAgeError,
    ],
    // The same shape with words about neither the person nor a field: a refusal, not an outcome.
    [{ statusCode: 400, message: ['x'], error: 'Bad Request' }, BadRequestError],
    [
      { statusCode: 400, message: 'x', error: 'Bad Request', document: '1', response_at: at },
      DocumentNotFoundError,
    ],
    [{ statusCode: 400, message: 'x', error: 'Other' }, BadRequestError],
  ])('maps a KYC 400 %j', async (body, Cls) => {
    const f = fakeFetch([{ status: 400, body }]);
    const err = await client(f.fn)
      .kyc('1', 'plan_basic')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Cls);
    expect(err).toMatchObject({ retryable: false, status: 400 });
  });

  it('maps status codes to typed errors with retryability', async () => {
    const cases: [number, unknown, Record<string, string>, unknown, boolean][] = [
      [404, { message: 'nope' }, {}, NotFoundError, false],
      [409, { message: 'dup' }, {}, DuplicateTransactionError, false],
      [429, {}, { 'retry-after': '7' }, RateLimitedError, true],
      [503, {}, {}, ProviderUnavailableError, true],
      [422, {}, {}, BadRequestError, false],
    ];
    for (const [status, body, headers, Cls, retryable] of cases) {
      const f = fakeFetch([{ status, body, headers }]);
      const err = await client(f.fn)
        .getDeposit('1')
        .catch((e: unknown) => e);
      expect(err, String(status)).toBeInstanceOf(Cls);
      expect((err as { retryable: boolean }).retryable).toBe(retryable);
      if (status === 429) expect((err as RateLimitedError).retryAfterMs).toBe(7000);
    }
  });

  it('with a fixed Authorization form, refreshes the token once and retries once after a 401', async () => {
    const record = {
      txid: '1',
      e2eId: '',
      type_transaction: 'deposit',
      external_id_client: 'e',
      name_client: 'n',
      cpf_client: 'c',
      email_client: 'm',
      value: 1.5,
      status: 'completed',
      createdAt: at,
      paidAt: at,
    };
    const f = fakeFetch([
      { status: 401, body: {} },
      { status: 200, body: record },
    ]);
    const c = client(f.fn, { authHeader: 'bearer' });
    const tx = await c.getDeposit('1');
    expect(tx).toMatchObject({ amountCentavos: 150, paidAt: at });
    expect(f.tokens).toBe(2);
    const auths = f.calls
      .filter((x) => x.url.includes('dataconnector'))
      .map((x) => (x.init.headers as Record<string, string>).authorization);
    expect(auths).toEqual(['Bearer tok1', 'Bearer tok2']);

    const g = fakeFetch([
      { status: 401, body: {} },
      { status: 401, body: {} },
    ]);
    await expect(client(g.fn, { authHeader: 'bearer' }).getDeposit('1')).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    expect(g.tokens).toBe(2);
  });

  it('turns timeouts and connection errors into ProviderUnavailableError', async () => {
    const hang = fakeFetch([() => new Promise<Response>(() => {})]);
    // a fetch that honours the abort signal
    const abortable = (async (input: string | URL | Request, init?: RequestInit) => {
      if (String(input).endsWith('/oauth2/token')) return hang.fn(input, init);
      return new Promise<Response>((_, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
      });
    }) as typeof fetch;
    const err = await client(abortable, { timeoutMs: 50 })
      .getWithdrawal('x')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect((err as Error).message).toMatch(/no answer within 50 ms/);

    const refused = (async () => {
      throw new TypeError('fetch failed');
    }) as typeof fetch;
    const err2 = await client(refused)
      .createDeposit({
        client: { externalId: 'e', cpf: 'c', email: 'm', name: 'n' },
        amountCentavos: 1,
        txid: '1',
      })
      .catch((e: unknown) => e);
    expect(err2).toBeInstanceOf(ProviderUnavailableError);
    expect((err2 as ProviderUnavailableError).retryable).toBe(true);
  });

  it('names the missing field in a ContractError', async () => {
    // A token answer without its token: what every call stands on breaks the contract.
    const noToken = (async () =>
      new Response(JSON.stringify({ expires_in: 3600, token_type: 'Bearer' }), {
        status: 200,
      })) as typeof fetch;
    const err = await client(noToken)
      .kyc('1', 'plan_basic')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContractError);
    expect((err as ContractError).path).toBe('access_token');
    expect((err as ContractError).retryable).toBe(false);
  });

  it('sends the exact decimal and the api key, and refuses bad input before calling', async () => {
    const result = {
      e2eId: '',
      pixImage: 'data:',
      pixPayload: 'p',
      status: 'processing',
      value: 10.5,
      bank: 'b',
      client: 'c',
      expiry: at,
      merchant: 'm',
      txid: '12',
      responseStatus: 201,
    };
    const f = fakeFetch([{ status: 200, body: result }]);
    const c = client(f.fn);
    const created = await c.createDeposit({
      client: { externalId: 'e', cpf: 'c', email: 'm', name: 'n' },
      amountCentavos: 1050,
      txid: '12',
    });
    expect(created.amountCentavos).toBe(1050);
    const sent = f.calls[0]!;
    expect(sent.init.body).toContain('"value":10.50');
    expect((sent.init.headers as Record<string, string>)['x-service-api-key']).toBe('Api-Key key');
    expect(f.tokens).toBe(0);

    await expect(
      c.createDeposit({
        client: { externalId: 'e', cpf: 'c', email: 'm', name: 'n' },
        amountCentavos: 1,
        txid: '12a',
      }),
    ).rejects.toBeInstanceOf(BadRequestError);
    expect(f.calls).toHaveLength(1);
  });
});
