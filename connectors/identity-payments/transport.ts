// One file over 400 lines on purpose: every call's path (auth form, token refresh, timeout,
// span, error mapping) reads top to bottom in one place; the error bodies it reads are in
// wire/errors.ts, the token cache (shared by every connector) in ../token-cache.ts.

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
import { TokenCache } from '../token-cache';
import {
  deceasedOrUnderAgeErrorSchema,
  documentNotFoundErrorSchema,
  kycInvalidDocumentErrorSchema,
  livenessInvalidDocumentErrorSchema,
  oauthErrorSchema,
  readErrorMessages,
  refusedCredentialsErrors,
  restrictDocumentErrorSchema,
} from './wire/errors';
import { type EndpointName, tokenResponseSchema } from './wire/schemas';

// How pixflow talks to the provider, whatever the endpoint: OAuth tokens (cached, one retry with a
// fresh token after a refusal) or the API key, one timeout per call, a span, a log line and a
// metrics event per call, and every non-2xx answer turned into a typed ProviderError. Bodies are
// checked with zod both ways: a request that breaks the contract is never sent, a response that
// breaks it is a ContractError. Where the document leaves the wire open (the Authorization form,
// the receipt's content type), the transport tries the document's side first, falls back to the
// other once, and remembers what the provider took (`learned()`).

/** Anything pino-like. The client logs endpoint, status and duration; never documents, tokens or keys. */
interface ProviderLogger {
  debug(obj: object, msg?: string): void;
  info?(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** The Authorization header's form: the bare token (KYC and liveness samples) or `Bearer <token>` (inquiries). */
export type AuthHeaderForm = 'bare' | 'bearer';
/** The receipt request's body: JSON or application/x-www-form-urlencoded. */
export type ReceiptFormat = 'json' | 'form';

export const authHeaderSettings = ['auto', 'bare', 'bearer'] as const;
export type AuthHeaderSetting = (typeof authHeaderSettings)[number];
export const receiptFormatSettings = ['auto', 'json', 'form'] as const;
export type ReceiptFormatSetting = (typeof receiptFormatSettings)[number];

/** What the transport learned of the provider's open points (undefined: not seen yet). */
export interface LearnedWire {
  authHeader: { kyc?: AuthHeaderForm; liveness?: AuthHeaderForm; inquiry?: AuthHeaderForm };
  receiptFormat?: ReceiptFormat;
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
  /**
   * The Authorization form of the token endpoints. 'auto' (default): the document's form first
   * (bare for KYC and liveness, Bearer for inquiries), the other once on a 401 or 403, and the one
   * that worked kept per endpoint. 'bare' or 'bearer': only that form.
   */
  authHeader?: AuthHeaderSetting;
  /**
   * The receipt request's body. 'auto' (default): JSON first, a form once when the provider
   * refuses the content type (415, or a 400 that says so), and the one that worked kept.
   */
  receiptFormat?: ReceiptFormatSetting;
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

/** The body's `message` as the provider sent it (text or texts), if it has one. */
function messagesOf(body: unknown): string | string[] | undefined {
  if (body && typeof body === 'object' && 'message' in body) {
    const m = (body as { message: unknown }).message;
    if (typeof m === 'string') return m;
    if (Array.isArray(m)) return m.map(String);
  }
  if (body && typeof body === 'object' && 'error_description' in body) {
    const d = (body as { error_description: unknown }).error_description;
    if (typeof d === 'string') return d;
  }
  if (typeof body === 'string' && body.length > 0) return body.slice(0, 200);
  return undefined;
}

function messageOf(body: unknown): string {
  const m = messagesOf(body);
  return Array.isArray(m) ? m.join('; ') : (m ?? '');
}

/** The request fields a refusal's message names (empty when it names none, or reads otherwise). */
function refusedFields(body: unknown, known?: readonly string[]): string[] {
  const m = messagesOf(body);
  if (m === undefined) return [];
  const reading = readErrorMessages(m, known);
  return reading.kind === 'validation' ? reading.fields : [];
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
  const messageArray = deceasedOrUnderAgeErrorSchema.safeParse(body);
  if (messageArray.success) {
    // Also the shape of a NestJS request-validation error: only words about the person count.
    const reading = readErrorMessages(messageArray.data.message);
    if (reading.kind === 'person') {
      return new DeceasedOrUnderAgeError(message('deceased holder or under age'), details);
    }
    const fields = reading.kind === 'validation' ? reading.fields : [];
    return new BadRequestError(message('request refused'), { ...details, fields });
  }
  if (documentNotFoundErrorSchema.safeParse(body).success) {
    return new DocumentNotFoundError(message('document not found'), details);
  }
  return undefined;
}

const credentialsRefused =
  'the provider refused the client credentials: an operator must fix PROVIDER_CLIENT_ID / PROVIDER_CLIENT_SECRET';

/** The token endpoint's answers the document leaves unshown: bad credentials and its rate limit. */
function tokenError(res: RawResponse, details: ProviderErrorDetails, now: number): ProviderError | undefined {
  const { status, body } = res;
  const oauth = oauthErrorSchema.safeParse(body);
  if (
    status === 401 ||
    (status < 500 && oauth.success && refusedCredentialsErrors.includes(oauth.data.error))
  ) {
    return new UnauthorizedError(`provider token: ${credentialsRefused} (HTTP ${status})`, details);
  }
  // A token rate limit answered 403 instead of 429: wait as told, then ask again.
  if (status === 403 || status === 429) {
    return new RateLimitedError(`provider token: rate limited (HTTP ${status})`, {
      ...details,
      retryAfterMs: parseRetryAfter(res.headers.get('retry-after'), now),
    });
  }
  return undefined;
}

/** Maps a non-2xx answer to a typed error. */
function mapHttpError(endpoint: EndpointName, res: RawResponse, now: number): ProviderError {
  const { status, body } = res;
  const details = { status, body, endpoint };
  const text = messageOf(body);
  const msg = (what: string) => `provider ${endpoint}: ${what}${text ? `: ${text}` : ''}`;
  if (endpoint === 'token') {
    const error = tokenError(res, details, now);
    if (error) return error;
  }
  if (status === 400) {
    const error = documentError(endpoint, body, msg, details);
    if (error) return error;
  }
  if (status === 401) return new UnauthorizedError(msg('unauthorized'), details);
  // A charge or a payout refused (an unknown merchant, a key without the right): nothing was
  // done, which the payout's own look-up confirms before it counts as refused.
  if (status === 403 && (endpoint === 'deposit' || endpoint === 'withdraw')) {
    return new BadRequestError(msg(`HTTP ${status}`), { ...details, fields: refusedFields(body) });
  }
  // Elsewhere the credentials were taken but refused here (an address not released): retried.
  if (status === 403) return new UnauthorizedError(msg('forbidden'), details);
  if (status === 404) return new NotFoundError(msg('not found'), details);
  if (status === 409) return new DuplicateTransactionError(msg('duplicate transaction'), details);
  if (status === 429) {
    return new RateLimitedError(msg('rate limited'), {
      ...details,
      retryAfterMs: parseRetryAfter(res.headers.get('retry-after'), now),
    });
  }
  if (status === 408 || status >= 500) return new ProviderUnavailableError(msg(`HTTP ${status}`), details);
  // 400 and 422 alike: a refusal of the request, never of the person or the payment.
  return new BadRequestError(msg(`HTTP ${status}`), { ...details, fields: refusedFields(body) });
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
  const logger = options.logger ?? noopLogger;
  // Said once until a token is issued again: every retry would otherwise repeat it.
  let credentialsWarned = false;
  return new TokenCache({
    now: options.now,
    safetyMarginMs: options.tokenSafetyMarginMs,
    // A token rate limit: no token request until its Retry-After has passed.
    holdOffMs: (err) => (err instanceof RateLimitedError ? err.retryAfterMs : undefined),
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
      let body: unknown;
      try {
        body = expectOk('token', res);
      } catch (err) {
        if (err instanceof UnauthorizedError && !credentialsWarned) {
          credentialsWarned = true;
          logger.warn({ endpoint: 'token', status: res.status }, credentialsRefused);
        }
        throw err;
      }
      const token = parseResponse(tokenResponseSchema, body, 'token');
      credentialsWarned = false;
      return { accessToken: token.access_token, expiresInSeconds: token.expires_in };
    },
  });
}

/** The document's Authorization form per endpoint: the inquiries' Bearer, the KYC and liveness samples' bare token. */
function documentedAuthForm(endpoint: EndpointName): AuthHeaderForm {
  return endpoint === 'kyc' || endpoint === 'liveness' ? 'bare' : 'bearer';
}

const otherAuthForm = (form: AuthHeaderForm): AuthHeaderForm => (form === 'bare' ? 'bearer' : 'bare');
const otherReceiptFormat = (format: ReceiptFormat): ReceiptFormat => (format === 'json' ? 'form' : 'json');

/** An answer that shows the provider took the request as sent (its credentials, its body). */
function readByProvider(status: number): boolean {
  return status < 500 && ![401, 403, 408, 415, 429].includes(status);
}

const contentTypeWords =
  /content[\s-]?type|media[\s-]?type|unsupported|urlencoded|application\/(json|x-www-form)|not (valid )?json|unreadable|malformed|unexpected token|(could|can)not parse|failed to parse|parse error|body is (empty|missing|required)|empty body/i;

/**
 * The provider refused the body's content type: 415, or a 400 that says so, or one that calls the
 * very fields that were sent missing or empty (the body was not read at all).
 */
function refusesContentType(res: RawResponse, sent: readonly string[]): boolean {
  if (res.status === 415) return true;
  if (res.status !== 400) return false;
  const m = messagesOf(res.body);
  if (m === undefined) return false;
  if ((Array.isArray(m) ? m : [m]).some((item) => contentTypeWords.test(item))) return true;
  const reading = readErrorMessages(m, sent);
  return reading.kind === 'validation' && reading.fields.some((field) => sent.includes(field));
}

function encodeBody(format: ReceiptFormat, fields: Record<string, string>): { type: string; body: string } {
  return format === 'json'
    ? { type: 'application/json', body: JSON.stringify(fields) }
    : { type: 'application/x-www-form-urlencoded', body: new URLSearchParams(fields).toString() };
}

/**
 * OAuth calls. In 'auto', a 401 or 403 tries the other Authorization form once with the same
 * token, and the form that worked is kept for the endpoint. When every form is refused, the token
 * is replaced once and the call made again; a token fresh from such a replacement that is refused
 * before anything took it is kept (TokenCache.refused), so a refusal that is not about the token
 * never turns into a token request per retry.
 */
function createTokenCalls(options: ProviderClientOptions, tokens: TokenCache, expectOk: ExpectOk) {
  const logger = options.logger ?? noopLogger;
  const setting = options.authHeader ?? 'auto';
  const forms = new Map<EndpointName, AuthHeaderForm>();

  function remember(endpoint: EndpointName, form: AuthHeaderForm): void {
    if (forms.get(endpoint) === form) return;
    forms.set(endpoint, form);
    const header = form === 'bare' ? 'Authorization: <token>' : 'Authorization: Bearer <token>';
    logger.info?.({ endpoint, authHeader: form }, `provider ${endpoint} takes ${header}`);
  }

  async function withToken(endpoint: EndpointName, call: (authorization: string) => Promise<RawResponse>) {
    const auto = setting === 'auto';
    const first: AuthHeaderForm = auto ? (forms.get(endpoint) ?? documentedAuthForm(endpoint)) : setting;
    const tried = auto ? [first, otherAuthForm(first)] : [first];
    const refused = (res: RawResponse) => res.status === 401 || (auto && res.status === 403);

    const attempt = async (token: string): Promise<RawResponse> => {
      let res: RawResponse | undefined;
      for (const form of tried) {
        res = await call(form === 'bare' ? token : `Bearer ${token}`);
        if (!refused(res)) {
          if (readByProvider(res.status)) {
            tokens.accepted(token);
            remember(endpoint, form);
          }
          return res;
        }
      }
      return res as RawResponse;
    };

    const token = await tokens.get();
    let res = await attempt(token);
    if (refused(res) && tokens.refused(token)) res = await attempt(await tokens.get());
    return expectOk(endpoint, res);
  }

  return {
    withToken,
    learned: (): LearnedWire['authHeader'] => ({
      kyc: forms.get('kyc'),
      liveness: forms.get('liveness'),
      inquiry: forms.get('inquiry'),
    }),
  };
}

/**
 * The receipt request, as JSON or as a form (the document shows both). In 'auto': the format that
 * worked before (JSON at first), the other once when the provider refuses the content type, and
 * the one that worked kept.
 */
function createReceiptCall(options: ProviderClientOptions, send: Exchange, expectOk: ExpectOk) {
  const logger = options.logger ?? noopLogger;
  const setting = options.receiptFormat ?? 'auto';
  const baseUrl = trimSlash(options.baseUrl);
  let learned: ReceiptFormat | undefined;

  function remember(format: ReceiptFormat): void {
    if (learned === format) return;
    learned = format;
    logger.info?.({ endpoint: 'receipt', receiptFormat: format }, `provider receipt takes a ${format} body`);
  }

  async function postReceipt(path: string, fields: Record<string, string>): Promise<unknown> {
    const first: ReceiptFormat = setting === 'auto' ? (learned ?? 'json') : setting;
    const formats = setting === 'auto' ? [first, otherReceiptFormat(first)] : [first];
    const sent = Object.keys(fields);
    let refusal: RawResponse | undefined;
    for (const format of formats) {
      const { type, body } = encodeBody(format, fields);
      const res = await send('receipt', `${baseUrl}${path}`, {
        method: 'POST',
        headers: {
          'content-type': type,
          accept: 'application/json',
          'x-service-api-key': `Api-Key ${options.apiKey}`,
        },
        body,
      });
      if (!refusesContentType(res, sent)) {
        if (readByProvider(res.status)) remember(format);
        return expectOk('receipt', res);
      }
      refusal ??= res;
    }
    // Every format refused: the first answer says why the usual one was.
    return expectOk('receipt', refusal as RawResponse);
  }

  return { postReceipt, learned: () => learned };
}

export function createTransport(options: ProviderClientOptions) {
  const baseUrl = trimSlash(options.baseUrl);
  const send = traced(createExchange(options));
  const expectOk = createExpectOk(options);
  const tokens = createTokenCache(options, send, expectOk);
  const { withToken, learned: learnedAuth } = createTokenCalls(options, tokens, expectOk);
  const receipts = createReceiptCall(options, send, expectOk);

  return {
    tokens,

    /** What the transport learned of the provider where the document leaves the wire open. */
    learned(): LearnedWire {
      return { authHeader: learnedAuth(), receiptFormat: receipts.learned() };
    },

    /** POSTs JSON with the OAuth token (bare first, as the contract's KYC and liveness examples send it). */
    postWithToken(endpoint: EndpointName, path: string, payload: string): Promise<unknown> {
      return withToken(endpoint, (authorization) =>
        send(endpoint, `${baseUrl}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', authorization },
          body: payload,
        }),
      );
    },

    /** GETs with the OAuth token (`Bearer <token>` first, as the contract's inquiries send it). */
    getWithToken(endpoint: EndpointName, path: string): Promise<unknown> {
      return withToken(endpoint, (authorization) =>
        send(endpoint, `${baseUrl}${path}`, {
          method: 'GET',
          headers: { authorization, 'content-type': 'application/json', accept: 'application/json' },
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

    /** POSTs the receipt request with `x-service-api-key`, in the body format the provider takes. */
    postReceipt: receipts.postReceipt,
  };
}

export type ProviderTransport = ReturnType<typeof createTransport>;
