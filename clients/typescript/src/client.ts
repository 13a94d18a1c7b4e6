import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths } from './generated/schema';
import { problemOf } from './problem';
import { type RetryOptions, retrying, type Send } from './retry';

// pixflow's API as openapi-fetch calls it from the generated paths, with what a generator cannot
// know: the API key, idempotency keys made before the first attempt, retries where pixflow asks
// for them, and every error answer thrown as a PixflowProblem.

export type PixflowClient = Client<paths>;

export interface PixflowClientOptions {
  /** Where pixflow's API answers: `https://pixflow.example.com` (each path starts with /v1). */
  baseUrl: string;
  /** The API key, sent as `Authorization: Bearer`. */
  apiKey: string;
  /**
   * The brand every call acts for, sent as `Pixflow-Brand`: what a platform key must name (a
   * brand's own key may leave it out). One call can name another with
   * `params: { header: { 'Pixflow-Brand': 'bet-rio' } }`.
   */
  brand?: string;
  retry?: RetryOptions;
  /** What sends each request (default: the global fetch). */
  fetch?: Send;
}

/** 32 random digits: a deposit's txid is digits only, at most 33. */
function newTxid(): string {
  return Array.from(crypto.getRandomValues(new Uint32Array(32)), (n) => n % 10).join('');
}

/**
 * The POSTs whose body names the flow they start. Without a key pixflow makes one, and a request
 * sent again after a lost answer would start a second deposit or payout; with one made here, every
 * attempt is the same request and pixflow answers it with the same flow.
 */
const IDEMPOTENCY_KEYS: Record<string, { field: string; newKey: () => string }> = {
  '/v1/deposits': { field: 'txid', newKey: newTxid },
  '/v1/withdrawals': { field: 'transactionId', newKey: () => crypto.randomUUID() },
};

const idempotencyKeys: Middleware = {
  async onRequest({ request, schemaPath }) {
    const key = request.method === 'POST' ? IDEMPOTENCY_KEYS[schemaPath] : undefined;
    if (!key) return undefined;
    const body = (await request.clone().json()) as Record<string, unknown>;
    if (body[key.field] !== undefined) return undefined;
    return new Request(request, { body: JSON.stringify({ ...body, [key.field]: key.newKey() }) });
  },
};

const problems: Middleware = {
  async onResponse({ response }) {
    if (!response.ok) throw await problemOf(response);
    return undefined;
  },
};

/**
 * A client of pixflow's API: `await client.POST('/v1/deposits', { body })` and the other paths of
 * the document, typed from it. Each call answers `{ data, response }` or throws a PixflowProblem.
 */
export function createPixflowClient(options: PixflowClientOptions): PixflowClient {
  const send = options.fetch ?? ((request: Request) => fetch(request));
  const client = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: {
      authorization: `Bearer ${options.apiKey}`,
      ...(options.brand === undefined ? {} : { 'pixflow-brand': options.brand }),
    },
    fetch: retrying(send, options.retry),
  });
  client.use(idempotencyKeys, problems);
  return client;
}

/**
 * A call's answer body: `const deposit = await dataOf(client.POST('/v1/deposits', { body }))`.
 * An error answer has already thrown, so there is always the success's body (undefined for a 204).
 */
export async function dataOf<T>(call: Promise<{ data?: T; response: Response }>): Promise<T> {
  return (await call).data as T;
}
