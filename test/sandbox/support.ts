import { type RunningSandbox, type StartSandboxOptions, startSandbox } from '../../sandbox/app';

// The sandbox in-process on port 0 (as test/contract/support.ts starts it), spoken to in raw HTTP:
// these tests check the bytes each dialect answers, which no client should smooth over.

export type Side = 'doc' | 'other';

export interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: a wire body, checked field by field by the tests
  body: any;
}

async function answer(res: Response): Promise<Answer> {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: res.status, headers: res.headers, body };
}

const CREDENTIALS = 'client_id=sandbox-client&client_secret=sandbox-secret&grant_type=client_credentials';
const API_KEY_HEADER = 'Api-Key sandbox-api-key';
const MERCHANT = 'sandbox-merchant';

export const person = {
  externalId: 'user-1',
  cpf: '63401825771',
  email: 'ana@example.com',
  name: 'Ana Costa',
};

/** A raw-HTTP speaker of the provider's endpoints and the sandbox's controls. */
export function speaker(url: string) {
  const json = (body: unknown) => JSON.stringify(body);
  const call = async (method: string, path: string, headers: Record<string, string>, body?: string) =>
    answer(await fetch(`${url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) }));
  const tokenRequest = (form = CREDENTIALS) =>
    call('POST', '/oauth2/token', { 'content-type': 'application/x-www-form-urlencoded' }, form);
  return {
    url,
    tokenRequest,
    /** A fresh access token. */
    async token(): Promise<string> {
      const r = await tokenRequest();
      if (r.status !== 200) throw new Error(`token: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.access_token as string;
    },
    kyc: (cpf: string, authorization: string, plan = 'plan_basic') =>
      call('POST', `/kyc/${cpf}`, { 'content-type': 'application/json', authorization }, json({ plan })),
    liveness: (cpf: string, authorization: string, body: Record<string, unknown>) =>
      call(
        'POST',
        `/kyc-liveness/${cpf}`,
        { 'content-type': 'application/json', authorization },
        json({ plan: 'plan_basic', event: 'onboarding', ...body }),
      ),
    inquiry: (kind: 'deposit' | 'withdraw', id: string, authorization: string) =>
      call('GET', `/dataconnector/transaction/${id}/type/${kind}`, {
        'content-type': 'application/json',
        authorization,
      }),
    deposit: (txid: string, value: number) =>
      call(
        'POST',
        '/v2/deposit/create',
        { 'content-type': 'application/json', 'x-service-api-key': API_KEY_HEADER },
        json({ merchant: MERCHANT, client: person, value, txid }),
      ),
    withdraw: (transactionId: string, value: number) =>
      call(
        'POST',
        '/v2/withdraw/create',
        { 'content-type': 'application/json', 'x-service-api-key': API_KEY_HEADER },
        json({
          merchant: MERCHANT,
          client: person,
          pixKey: person.cpf,
          pixType: 'CPF',
          value,
          transactionId,
        }),
      ),
    receipt: (transactionId: string, as: 'json' | 'form') =>
      as === 'json'
        ? call(
            'POST',
            '/receipts/merchant/cash-out/generate',
            { 'content-type': 'application/json', 'x-service-api-key': API_KEY_HEADER },
            json({ merchant: MERCHANT, transactionId }),
          )
        : call(
            'POST',
            '/receipts/merchant/cash-out/generate',
            { 'content-type': 'application/x-www-form-urlencoded', 'x-service-api-key': API_KEY_HEADER },
            new URLSearchParams({ merchant: MERCHANT, transactionId }).toString(),
          ),
    control: (path: string, body?: unknown, method = 'POST') =>
      call(
        method,
        path,
        body === undefined ? {} : { 'content-type': 'application/json' },
        body === undefined ? undefined : json(body),
      ),
    /** Puts a whole dialect in place on the running sandbox. */
    async dialect(dialect: { default?: Side; points?: Record<string, Side> }): Promise<void> {
      const r = await call('PUT', '/sandbox/dialect', { 'content-type': 'application/json' }, json(dialect));
      if (r.status !== 200) throw new Error(`dialect: ${r.status} ${JSON.stringify(r.body)}`);
    },
  };
}

export type Speaker = ReturnType<typeof speaker>;

export async function startDialectSandbox(options: StartSandboxOptions = {}): Promise<RunningSandbox> {
  return startSandbox({ port: 0, host: '127.0.0.1', ...options });
}
