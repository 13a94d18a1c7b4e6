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
  type ProviderErrorDetails,
  ProviderUnavailableError,
  parseRetryAfter,
  RateLimitedError,
  RestrictedDocumentError,
  UnauthorizedError,
} from '../errors';
import { TokenCache } from './token-cache';
import {
  deceasedOrUnderAgeErrorSchema,
  documentNotFoundErrorSchema,
  kycInvalidDocumentErrorSchema,
  livenessInvalidDocumentErrorSchema,
  restrictDocumentErrorSchema,
} from './wire/errors';
import { type EndpointName, tokenResponseSchema } from './wire/schemas';

// How pixflow talks to the provider, whatever the endpoint: OAuth tokens (cached, one retry after a
// 401) or the API key, one timeout per call, a span, a log line and a metrics event per call, and
// every non-2xx answer turned into a typed ProviderError. Bodies are checked with zod both ways: a
// request that breaks the contract is never sent, a response that breaks it is a ContractError.

/** Anything pino-like. The client logs endpoint, status and duration; never documents, tokens or keys. */
interface ProviderLogger {
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

/** KYC and liveness answer 400 with one of the contract's document error bodies; others are plain 400s. */
function documentError(
  endpoint: EndpointName,
  body: unknown,
  message: (what: string) => string,
  details: ProviderErrorDetails,
): ProviderError | undefined {
  if (endpoint !== 'kyc' && endpoint !== 'liveness') return undefined;
  if (restrictDocumentErrorSchema.safeParse(body).success) {
    return new RestrictedDocumentError(message('document on the restrictive list'), details);
  }
  if (
    kycInvalidDocumentErrorSchema.safeParse(body).success ||
    livenessInvalidDocumentErrorSchema.safeParse(body).success
  ) {
    return new InvalidDocumentError(message('invalid document'), details);
  }
  if (deceasedOrUnderAgeErrorSchema.safeParse(body).success) {
    return new DeceasedOrUnderAgeError(message('deceased holder or under age'), details);
  }
  if (documentNotFoundErrorSchema.safeParse(body).success) {
    return new DocumentNotFoundError(message('document not found'), details);
  }
  return undefined;
}

/** Maps a non-2xx answer to a typed error. */
function mapHttpError(endpoint: EndpointName, res: RawResponse, now: number): ProviderError {
  const { status, body } = res;
  const details = { status, body, endpoint };
  const text = messageOf(body);
  const msg = (what: string) => `provider ${endpoint}: ${what}${text ? `: ${text}` : ''}`;
  if (status === 400) {
    const error = documentError(endpoint, body, msg, details);
    if (error) return error;
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

/**
 * A parser of what crosses the contract at `endpoint`: it returns the parsed value, or throws
 * what `refuse` makes of the first zod issue (its dotted path and text).
 */
function contractParser(
  refuse: (endpoint: EndpointName, issue: { path: string; text: string }, value: unknown) => ProviderError,
) {
  return <S extends z.ZodType>(schema: S, value: unknown, endpoint: EndpointName): z.infer<S> => {
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    const path = issue?.path.map(String).join('.') || '(body)';
    throw refuse(endpoint, { path, text: `${path}: ${issue?.message ?? 'invalid'}` }, value);
  };
}

/** A response that breaks the contract is a ContractError naming the field. */
export const parseResponse = contractParser(
  (endpoint, { path, text }, body) =>
    new ContractError(`provider ${endpoint} response: ${text}`, { path, endpoint, body }),
);

/** A request that breaks the contract is refused here (BadRequestError) and never sent. */
export const checkRequest = contractParser(
  (endpoint, { text }) => new BadRequestError(`provider ${endpoint} request not sent: ${text}`, { endpoint }),
);

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text.length === 0) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function isTimeout(err: unknown): boolean {
  const name = (err as { name?: string } | null)?.name;
  return name === 'TimeoutError' || name === 'AbortError';
}

/** One HTTP exchange with a timeout, logged and reported to `onCall`; no answer is a ProviderUnavailableError. */
function createExchange(options: ProviderClientOptions) {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const logger = options.logger ?? noopLogger;
  return async function exchange(
    endpoint: EndpointName,
    url: string,
    init: RequestInit,
  ): Promise<RawResponse> {
    const started = Date.now();
    try {
      const res = await fetchImpl(url, { ...init, signal: AbortSignal.timeout(options.timeoutMs) });
      const body = await readBody(res);
      const durationMs = Date.now() - started;
      logger.debug({ endpoint, status: res.status, ms: durationMs }, 'provider call');
      options.onCall?.({ endpoint, status: res.status, durationMs, outcome: res.ok ? 'ok' : 'error' });
      return { status: res.status, body, headers: res.headers };
    } catch (err) {
      const timedOut = isTimeout(err);
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
  };
}

type Exchange = ReturnType<typeof createExchange>;

/**
 * One span per HTTP call (`provider <endpoint>`), a child of the activity's span. Without a
 * registered OpenTelemetry SDK the API is a no-op. The URL is never recorded: it can hold a CPF.
 */
function traced(exchange: Exchange): Exchange {
  return (endpoint, url, init) =>
    trace.getTracer('pixflow-provider').startActiveSpan(
      `provider ${endpoint}`,
      {
        kind: SpanKind.CLIENT,
        attributes: { 'provider.endpoint': endpoint, 'http.request.method': init.method ?? 'GET' },
      },
      async (span) => {
        try {
          const res = await exchange(endpoint, url, init);
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

type ExpectOk = (endpoint: EndpointName, res: RawResponse) => unknown;

/** The body of a 2xx answer; anything else is thrown as its typed error (and logged). */
function createExpectOk(options: ProviderClientOptions): ExpectOk {
  const logger = options.logger ?? noopLogger;
  const now = options.now ?? Date.now;
  return (endpoint, res) => {
    if (res.status >= 200 && res.status < 300) return res.body;
    const error = mapHttpError(endpoint, res, now());
    logger.warn({ endpoint, status: res.status, code: error.code }, 'provider error');
    throw error;
  };
}

function createTokenCache(options: ProviderClientOptions, send: Exchange, expectOk: ExpectOk): TokenCache {
  const authUrl = trimSlash(options.authUrl);
  return new TokenCache({
    now: options.now,
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
      const body = expectOk('token', res);
      const token = parseResponse(tokenResponseSchema, body, 'token');
      return { accessToken: token.access_token, expiresInSeconds: token.expires_in };
    },
  });
}

export function createTransport(options: ProviderClientOptions) {
  const baseUrl = trimSlash(options.baseUrl);
  const send = traced(createExchange(options));
  const expectOk = createExpectOk(options);
  const tokens = createTokenCache(options, send, expectOk);

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

  return {
    tokens,

    /** POSTs JSON with the OAuth token (bare, as the contract's KYC and liveness examples send it). */
    postWithToken(endpoint: EndpointName, path: string, payload: string): Promise<unknown> {
      return withToken(endpoint, (token) =>
        send(endpoint, `${baseUrl}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', authorization: token },
          body: payload,
        }),
      );
    },

    /** GETs with `Authorization: Bearer <token>`. */
    getWithToken(endpoint: EndpointName, path: string): Promise<unknown> {
      return withToken(endpoint, (token) =>
        send(endpoint, `${baseUrl}${path}`, {
          method: 'GET',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'application/json',
          },
        }),
      );
    },

    /** POSTs JSON with `x-service-api-key`; no token involved. */
    async postWithApiKey(endpoint: EndpointName, path: string, payload: string): Promise<unknown> {
      const res = await send(endpoint, `${baseUrl}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'x-service-api-key': `Api-Key ${options.apiKey}`,
        },
        body: payload,
      });
      return expectOk(endpoint, res);
    },
  };
}

export type ProviderTransport = ReturnType<typeof createTransport>;
