import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { z } from 'zod';
import {
  BadRequestError,
  ContractError,
  DeceasedOrUnderAgeError,
  DocumentNotFoundError,
  DuplicateTransactionError,
  InvalidDocumentError,
  NotFoundError,
  type ProviderError,
  ProviderUnavailableError,
  parseRetryAfter,
  RateLimitedError,
  RestrictedDocumentError,
  UnauthorizedError,
} from './errors';
import { centavosToValue, jsonWithDecimalValue, valueToCentavosOrThrow } from './money';
import {
  type DepositClient,
  type DepositCreateResult,
  deceasedOrUnderAgeErrorSchema,
  depositCreateRequestSchema,
  depositCreateResultSchema,
  documentNotFoundErrorSchema,
  type EndpointName,
  type InquiryRecord,
  inquiryRecordSchema,
  type KycRecordFor,
  kycInvalidDocumentErrorSchema,
  kycRecordSchema,
  type LivenessResponse,
  livenessInvalidDocumentErrorSchema,
  livenessRequestSchema,
  livenessResponseSchema,
  type PixType,
  type Plan,
  type ReceiptResult,
  receiptResultSchema,
  restrictDocumentErrorSchema,
  tokenResponseSchema,
  type WithdrawClient,
  type WithdrawCreateResult,
  withdrawCreateRequestSchema,
  withdrawCreateResultSchema,
} from './schemas';
import { TokenCache } from './token-cache';

/** Anything pino-like. The client logs endpoint, status and duration; never documents, tokens or keys. */
export interface ProviderLogger {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface ProviderCallEvent {
  endpoint: EndpointName;
  status: number;
  durationMs: number;
  outcome: 'ok' | 'error' | 'timeout' | 'connection_error';
}

export interface ProviderClientOptions {
  baseUrl: string;
  authUrl: string;
  clientId: string;
  clientSecret: string;
  apiKey: string;
  merchant: string;
  timeoutMs: number;
  fetch?: typeof fetch;
  logger?: ProviderLogger;
  now?: () => number;
  /** Called after every HTTP call (metrics): endpoint, HTTP status (0 when none came back), duration. */
  onCall?: (call: ProviderCallEvent) => void;
  /** Refresh the token this long before it expires. Default 60 s. */
  tokenSafetyMarginMs?: number;
}

export interface StartLivenessInput {
  correlationId: string;
  plan: Plan;
  event: string;
  redirectUrl?: string;
}

export interface CreateDepositInput {
  merchant?: string;
  client: DepositClient;
  amountCentavos: number;
  txid: string;
}

export interface CreateWithdrawalInput {
  merchant?: string;
  client: WithdrawClient;
  pixKey: string;
  pixType?: PixType;
  amountCentavos: number;
  transactionId: string;
}

export type DepositCreated = DepositCreateResult & { amountCentavos: number };
export type WithdrawalCreated = WithdrawCreateResult & { amountCentavos: number | undefined };
/** Inquiry record plus integer centavos and `paidAt` normalised from payedAt/paidAt ('' when unpaid). */
export type Transaction = InquiryRecord & { amountCentavos: number; paidAt: string };

interface RawResponse {
  status: number;
  body: unknown;
  headers: Headers;
}

const noopLogger: ProviderLogger = { debug() {}, warn() {} };

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

function messageOf(body: unknown): string {
  if (body && typeof body === 'object' && 'message' in body) {
    const m = (body as { message: unknown }).message;
    if (typeof m === 'string') return m;
    if (Array.isArray(m)) return m.map(String).join('; ');
  }
  if (typeof body === 'string' && body.length > 0) return body.slice(0, 200);
  return '';
}

/** Maps a non-2xx answer to a typed error. Exported for unit tests. */
export function mapHttpError(
  endpoint: EndpointName,
  res: RawResponse,
  now: number = Date.now(),
): ProviderError {
  const { status, body } = res;
  const details = { status, body, endpoint };
  const text = messageOf(body);
  const msg = (what: string) => `provider ${endpoint}: ${what}${text ? `: ${text}` : ''}`;
  if (status === 400 && (endpoint === 'kyc' || endpoint === 'liveness')) {
    if (restrictDocumentErrorSchema.safeParse(body).success) {
      return new RestrictedDocumentError(msg('document on the restrictive list'), details);
    }
    if (
      kycInvalidDocumentErrorSchema.safeParse(body).success ||
      livenessInvalidDocumentErrorSchema.safeParse(body).success
    ) {
      return new InvalidDocumentError(msg('invalid document'), details);
    }
    if (deceasedOrUnderAgeErrorSchema.safeParse(body).success) {
      return new DeceasedOrUnderAgeError(msg('deceased holder or under age'), details);
    }
    if (documentNotFoundErrorSchema.safeParse(body).success) {
      return new DocumentNotFoundError(msg('document not found'), details);
    }
  }
  if (status === 401) return new UnauthorizedError(msg('unauthorized'), details);
  if (status === 404) return new NotFoundError(msg('not found'), details);
  if (status === 409) return new DuplicateTransactionError(msg('duplicate transaction'), details);
  if (status === 429) {
    return new RateLimitedError(msg('rate limited'), {
      ...details,
      retryAfterMs: parseRetryAfter(res.headers.get('retry-after'), now),
    });
  }
  if (status === 408 || status >= 500) return new ProviderUnavailableError(msg(`HTTP ${status}`), details);
  return new BadRequestError(msg(`HTTP ${status}`), details);
}

function parseOrThrow<S extends z.ZodType>(schema: S, body: unknown, endpoint: EndpointName): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue?.path.map(String).join('.') || '(body)';
  throw new ContractError(`provider ${endpoint} response: ${path}: ${issue?.message ?? 'invalid'}`, {
    path,
    endpoint,
    body,
  });
}

function checkRequest<S extends z.ZodType>(schema: S, value: unknown, endpoint: EndpointName): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue?.path.map(String).join('.') || '(body)';
  throw new BadRequestError(
    `provider ${endpoint} request not sent: ${path}: ${issue?.message ?? 'invalid'}`,
    {
      endpoint,
    },
  );
}

export function createProviderClient(options: ProviderClientOptions) {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const logger = options.logger ?? noopLogger;
  const now = options.now ?? Date.now;
  const baseUrl = trimSlash(options.baseUrl);
  const authUrl = trimSlash(options.authUrl);

  /**
   * One span per HTTP call (`provider <endpoint>`), a child of the activity's span. Without a
   * registered OpenTelemetry SDK the API is a no-op. The URL is never recorded: it can hold a CPF.
   */
  function send(endpoint: EndpointName, url: string, init: RequestInit): Promise<RawResponse> {
    return trace.getTracer('pixflow-provider').startActiveSpan(
      `provider ${endpoint}`,
      {
        kind: SpanKind.CLIENT,
        attributes: { 'provider.endpoint': endpoint, 'http.request.method': init.method ?? 'GET' },
      },
      async (span) => {
        try {
          const res = await sendUntraced(endpoint, url, init);
          span.setAttribute('http.response.status_code', res.status);
          if (res.status >= 400)
            span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${res.status}` });
          return res;
        } catch (err) {
          // Our own error (endpoint and cause kind), not the raw fetch error.
          span.recordException(err as Error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
          throw err;
        } finally {
          span.end();
        }
      },
    );
  }

  async function sendUntraced(endpoint: EndpointName, url: string, init: RequestInit): Promise<RawResponse> {
    const started = Date.now();
    try {
      const res = await fetchImpl(url, { ...init, signal: AbortSignal.timeout(options.timeoutMs) });
      const text = await res.text();
      let body: unknown = text;
      if (text.length > 0) {
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
      }
      const durationMs = Date.now() - started;
      logger.debug({ endpoint, status: res.status, ms: durationMs }, 'provider call');
      options.onCall?.({ endpoint, status: res.status, durationMs, outcome: res.ok ? 'ok' : 'error' });
      return { status: res.status, body, headers: res.headers };
    } catch (err) {
      const name = (err as { name?: string } | null)?.name;
      const timedOut = name === 'TimeoutError' || name === 'AbortError';
      logger.warn({ endpoint, ms: Date.now() - started, timedOut }, 'provider call failed');
      options.onCall?.({
        endpoint,
        status: 0,
        durationMs: Date.now() - started,
        outcome: timedOut ? 'timeout' : 'connection_error',
      });
      throw new ProviderUnavailableError(
        timedOut
          ? `provider ${endpoint}: no answer within ${options.timeoutMs} ms`
          : `provider ${endpoint}: connection failed: ${(err as Error)?.message ?? String(err)}`,
        { endpoint, cause: err },
      );
    }
  }

  async function expectOk(endpoint: EndpointName, res: RawResponse): Promise<unknown> {
    if (res.status >= 200 && res.status < 300) return res.body;
    const error = mapHttpError(endpoint, res, now());
    logger.warn({ endpoint, status: res.status, code: error.code }, 'provider error');
    throw error;
  }

  const tokens = new TokenCache({
    now,
    safetyMarginMs: options.tokenSafetyMarginMs,
    fetchToken: async () => {
      const form = new URLSearchParams({
        client_id: options.clientId,
        client_secret: options.clientSecret,
        grant_type: 'client_credentials',
      });
      const res = await send('token', `${authUrl}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
      });
      const body = await expectOk('token', res);
      const token = parseOrThrow(tokenResponseSchema, body, 'token');
      return { accessToken: token.access_token, expiresInSeconds: token.expires_in };
    },
  });

  /** Runs an OAuth call; a 401 invalidates that token and retries exactly once with a fresh one. */
  async function withToken(endpoint: EndpointName, call: (token: string) => Promise<RawResponse>) {
    const token = await tokens.get();
    let res = await call(token);
    if (res.status === 401) {
      tokens.invalidate(token);
      res = await call(await tokens.get());
    }
    return expectOk(endpoint, res);
  }

  function jsonPost(token: string, body: string): RequestInit {
    return {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: token },
      body,
    };
  }

  function apiKeyPost(body: string): RequestInit {
    return {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'x-service-api-key': `Api-Key ${options.apiKey}`,
      },
      body,
    };
  }

  async function inquiry(kind: 'deposit' | 'withdraw', id: string): Promise<Transaction> {
    const url = `${baseUrl}/dataconnector/transaction/${encodeURIComponent(id)}/type/${kind}`;
    const body = await withToken('inquiry', (token) =>
      send('inquiry', url, {
        method: 'GET',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json',
        },
      }),
    );
    const record = parseOrThrow(inquiryRecordSchema, body, 'inquiry');
    if (record.type_transaction !== kind) {
      throw new ContractError(`provider inquiry: expected type_transaction ${kind}`, {
        path: 'type_transaction',
        endpoint: 'inquiry',
        body,
      });
    }
    return {
      ...record,
      amountCentavos: valueToCentavosOrThrow(record.value, 'value'),
      paidAt: record.payedAt || record.paidAt || '',
    };
  }

  return {
    /** Token requests issued by this client so far. */
    get tokenRequests(): number {
      return tokens.tokenRequests;
    },

    /** Drops the cached token (the next call fetches a new one). */
    invalidateToken(): void {
      tokens.invalidate();
    },

    async kyc<P extends Plan>(document: string, plan: P): Promise<KycRecordFor<P>> {
      const url = `${baseUrl}/kyc/${encodeURIComponent(document)}`;
      const payload = JSON.stringify({ plan });
      const body = await withToken('kyc', (token) => send('kyc', url, jsonPost(token, payload)));
      return parseOrThrow(kycRecordSchema(plan), body, 'kyc') as KycRecordFor<P>;
    },

    async startLiveness(document: string, input: StartLivenessInput): Promise<LivenessResponse> {
      const request = checkRequest(
        livenessRequestSchema,
        {
          correlation_id: input.correlationId,
          plan: input.plan,
          event: input.event,
          ...(input.redirectUrl === undefined ? {} : { redirectUrl: input.redirectUrl }),
        },
        'liveness',
      );
      const url = `${baseUrl}/kyc-liveness/${encodeURIComponent(document)}`;
      const payload = JSON.stringify(request);
      const body = await withToken('liveness', (token) => send('liveness', url, jsonPost(token, payload)));
      return parseOrThrow(livenessResponseSchema, body, 'liveness');
    },

    async createDeposit(input: CreateDepositInput): Promise<DepositCreated> {
      const request = checkRequest(
        depositCreateRequestSchema,
        {
          merchant: input.merchant ?? options.merchant,
          client: input.client,
          value: centavosToValue(input.amountCentavos),
          txid: input.txid,
        },
        'deposit',
      );
      const { value: _value, ...rest } = request;
      const res = await send('deposit', `${baseUrl}/v2/deposit/create`, {
        ...apiKeyPost(jsonWithDecimalValue(rest, input.amountCentavos)),
      });
      const body = await expectOk('deposit', res);
      const result = parseOrThrow(depositCreateResultSchema, body, 'deposit');
      return { ...result, amountCentavos: valueToCentavosOrThrow(result.value, 'value') };
    },

    async createWithdrawal(input: CreateWithdrawalInput): Promise<WithdrawalCreated> {
      const request = checkRequest(
        withdrawCreateRequestSchema,
        {
          merchant: input.merchant ?? options.merchant,
          client: input.client,
          pixKey: input.pixKey,
          ...(input.pixType === undefined ? {} : { pixType: input.pixType }),
          value: centavosToValue(input.amountCentavos),
          transactionId: input.transactionId,
        },
        'withdraw',
      );
      const { value: _value, ...rest } = request;
      const res = await send(
        'withdraw',
        `${baseUrl}/v2/withdraw/create`,
        apiKeyPost(jsonWithDecimalValue(rest, input.amountCentavos)),
      );
      const body = await expectOk('withdraw', res);
      const result = parseOrThrow(withdrawCreateResultSchema, body, 'withdraw');
      return {
        ...result,
        amountCentavos:
          result.value === undefined ? undefined : valueToCentavosOrThrow(result.value, 'value'),
      };
    },

    getDeposit(txid: string): Promise<Transaction> {
      return inquiry('deposit', txid);
    },

    getWithdrawal(transactionId: string): Promise<Transaction> {
      return inquiry('withdraw', transactionId);
    },

    async getReceipt(transactionId: string, merchant?: string): Promise<ReceiptResult> {
      const payload = JSON.stringify({ merchant: merchant ?? options.merchant, transactionId });
      const res = await send(
        'receipt',
        `${baseUrl}/receipts/merchant/cash-out/generate`,
        apiKeyPost(payload),
      );
      const body = await expectOk('receipt', res);
      return parseOrThrow(receiptResultSchema, body, 'receipt');
    },
  };
}

export type ProviderClient = ReturnType<typeof createProviderClient>;
