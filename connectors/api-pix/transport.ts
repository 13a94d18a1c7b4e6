import https from 'node:https';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { z } from 'zod';
import { BadRequestError, ContractError, ProviderUnavailableError, RateLimitedError } from '../errors';
import { TokenCache } from '../token-cache';
import { type ErrorAnswer, mapApiPixError, mapTokenError } from './wire/errors';
import { API_PIX_SCOPES, type EndpointName, tokenResponseSchema } from './wire/schemas';

// How pixflow talks to an API Pix PSP, whatever the endpoint: HTTPS with mutual TLS (pixflow's
// client certificate; the PSP's CA alone trusted when given), an OAuth2 client-credentials token taken over
// the same TLS (reused until shortly before it expires, one request at a time, asked once more
// after a 401 or 403), one timeout per call, a span, a log line and a metrics event per call, and
// every non-2xx answer turned into a typed ProviderError (wire/errors.ts). Bodies are checked with
// zod both ways: a request that breaks the spec is never sent, an answer that breaks it is a
// ContractError naming the field. The client secret, the token and the key are never logged.

/** Anything pino-like. Logged: endpoint, status, duration; never a body, a token or a key. */
export interface ApiPixLogger {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface ApiPixCallEvent {
  endpoint: EndpointName;
  status: number;
  durationMs: number;
  outcome: 'ok' | 'error' | 'timeout' | 'connection_error';
}

export interface ApiPixTransportOptions {
  /** The PSP's API base, e.g. `https://pix.example.com/api/v2`. */
  baseUrl: string;
  /** The OAuth2 token endpoint. */
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** pixflow's client certificate and its key (PEM). */
  cert: string;
  key: string;
  /** The CA that signed the PSP's server (PEM), the only one trusted; absent, the public roots. */
  ca?: string;
  timeoutMs: number;
  logger?: ApiPixLogger;
  /** Called after every HTTP call (metrics): endpoint, HTTP status (0 when none came back), duration. */
  onCall?: (call: ApiPixCallEvent) => void;
  now?: () => number;
  /** Refresh the token this long before it expires. Default 60 s. */
  tokenSafetyMarginMs?: number;
}

type RawResponse = ErrorAnswer;

const noopLogger: ApiPixLogger = { debug() {}, warn() {} };

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

function parseBody(text: string): unknown {
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

/** A parser of what crosses the wire at `endpoint`: the parsed value, or what `refuse` makes of the first issue. */
function contractParser(
  refuse: (endpoint: EndpointName, path: string, text: string, value: unknown) => Error,
) {
  return <S extends z.ZodType>(schema: S, value: unknown, endpoint: EndpointName): z.infer<S> => {
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    const path = issue?.path.map(String).join('.') || '(body)';
    throw refuse(endpoint, path, `${path}: ${issue?.message ?? 'invalid'}`, value);
  };
}

/** An answer that breaks the spec is a ContractError naming the field. */
export const parseAnswer = contractParser(
  (endpoint, path, text, body) =>
    new ContractError(`api-pix ${endpoint} answer: ${text}`, { path, endpoint, body }),
);

/** A request that breaks the spec is refused here and never sent. */
export const checkRequest = contractParser(
  (endpoint, _path, text) =>
    new BadRequestError(`api-pix ${endpoint} request not sent: ${text}`, { endpoint }),
);

interface Exchange {
  method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * One HTTPS exchange over the mutual-TLS agent, within the timeout (connection, TLS, answer and
 * body all count); no answer is a ProviderUnavailableError.
 */
function createSend(options: ApiPixTransportOptions, agent: https.Agent) {
  const logger = options.logger ?? noopLogger;
  return async function send(endpoint: EndpointName, exchange: Exchange): Promise<RawResponse> {
    const started = Date.now();
    const signal = AbortSignal.timeout(options.timeoutMs);
    try {
      const res = await new Promise<RawResponse>((resolve, reject) => {
        const req = https.request(
          exchange.url,
          { method: exchange.method, headers: exchange.headers, agent, signal },
          (answer) => {
            const chunks: Buffer[] = [];
            answer.on('data', (chunk: Buffer) => chunks.push(chunk));
            answer.on('error', reject);
            answer.on('end', () => {
              const header = answer.headers['retry-after'];
              resolve({
                status: answer.statusCode ?? 0,
                body: parseBody(Buffer.concat(chunks).toString('utf8')),
                retryAfter: typeof header === 'string' ? header : null,
              });
            });
          },
        );
        req.on('error', reject);
        req.end(exchange.body);
      });
      const durationMs = Date.now() - started;
      logger.debug({ endpoint, status: res.status, ms: durationMs }, 'api-pix call');
      const ok = res.status >= 200 && res.status < 300;
      options.onCall?.({ endpoint, status: res.status, durationMs, outcome: ok ? 'ok' : 'error' });
      return res;
    } catch (err) {
      const timedOut = isTimeout(err) || signal.aborted;
      const durationMs = Date.now() - started;
      logger.warn({ endpoint, ms: durationMs, timedOut }, 'api-pix call failed');
      options.onCall?.({
        endpoint,
        status: 0,
        durationMs,
        outcome: timedOut ? 'timeout' : 'connection_error',
      });
      throw new ProviderUnavailableError(
        timedOut
          ? `api-pix ${endpoint}: no answer within ${options.timeoutMs} ms`
          : // A TLS refusal (no certificate, one of another CA) lands here too: its code says which.
            `api-pix ${endpoint}: connection failed: ${(err as { code?: string })?.code ?? (err as Error)?.message ?? String(err)}`,
        { endpoint, cause: err },
      );
    }
  };
}

type Send = ReturnType<typeof createSend>;

/** One span per HTTP call (`api-pix <endpoint>`); the URL is not recorded (it names txids and keys). */
function traced(send: Send): Send {
  return (endpoint, exchange) =>
    trace.getTracer('pixflow-provider').startActiveSpan(
      `api-pix ${endpoint}`,
      {
        kind: SpanKind.CLIENT,
        attributes: { 'provider.endpoint': endpoint, 'http.request.method': exchange.method },
      },
      async (span) => {
        try {
          const res = await send(endpoint, exchange);
          span.setAttribute('http.response.status_code', res.status);
          if (res.status >= 400)
            span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${res.status}` });
          return res;
        } catch (err) {
          span.recordException(err as Error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
          throw err;
        } finally {
          span.end();
        }
      },
    );
}

/** RFC 6749 §2.3.1: the client id and secret are form-encoded before they are joined and base64'd. */
function basicAuth(clientId: string, clientSecret: string): string {
  const encode = (v: string) => encodeURIComponent(v).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(clientSecret)}`).toString('base64')}`;
}

function createTokens(options: ApiPixTransportOptions, send: Send): TokenCache {
  const now = options.now ?? Date.now;
  const logger = options.logger ?? noopLogger;
  return new TokenCache({
    now: options.now,
    safetyMarginMs: options.tokenSafetyMarginMs,
    holdOffMs: (err) => (err instanceof RateLimitedError ? err.retryAfterMs : undefined),
    fetchToken: async () => {
      const res = await send('token', {
        method: 'POST',
        url: options.tokenUrl,
        headers: {
          authorization: basicAuth(options.clientId, options.clientSecret),
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          scope: API_PIX_SCOPES.join(' '),
        }).toString(),
      });
      if (res.status < 200 || res.status >= 300) {
        const error = mapTokenError(res, now());
        logger.warn({ endpoint: 'token', status: res.status, code: error.code }, 'api-pix token refused');
        throw error;
      }
      const token = parseAnswer(tokenResponseSchema, res.body, 'token');
      return { accessToken: token.access_token, expiresInSeconds: token.expires_in };
    },
  });
}

export function createApiPixTransport(options: ApiPixTransportOptions) {
  const baseUrl = trimSlash(options.baseUrl);
  const now = options.now ?? Date.now;
  const logger = options.logger ?? noopLogger;
  // keepAlive: one TLS handshake serves many calls; the certificate and CA bind every socket.
  const agent = new https.Agent({
    cert: options.cert,
    key: options.key,
    ...(options.ca === undefined ? {} : { ca: options.ca }),
    keepAlive: true,
    rejectUnauthorized: true,
  });
  const send = traced(createSend(options, agent));
  const tokens = createTokens(options, send);

  /** The body of a 2xx answer; anything else thrown as its typed error. */
  function expectOk(endpoint: EndpointName, res: RawResponse): unknown {
    if (res.status >= 200 && res.status < 300) return res.body;
    const error = mapApiPixError(endpoint, res, now());
    logger.warn({ endpoint, status: res.status, code: error.code }, 'api-pix error');
    throw error;
  }

  /**
   * One call with the token. A 401 or 403 asks for a fresh token once (the PSP may have revoked
   * or rescoped it); a fresh token refused before anything took it is kept, so a refusal that is
   * not about the token never turns into a token request per retry.
   */
  async function call(
    endpoint: EndpointName,
    method: Exchange['method'],
    path: string,
    payload?: unknown,
  ): Promise<{ status: number; body: unknown }> {
    const attempt = async (token: string) =>
      send(endpoint, {
        method,
        url: `${baseUrl}${path}`,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
      });
    const refused = (res: RawResponse) => res.status === 401 || res.status === 403;
    const token = await tokens.get();
    let res = await attempt(token);
    if (!refused(res) && res.status < 500) tokens.accepted(token);
    if (refused(res) && tokens.refused(token)) {
      const fresh = await tokens.get();
      res = await attempt(fresh);
      if (!refused(res) && res.status < 500) tokens.accepted(fresh);
    }
    return { status: res.status, body: expectOk(endpoint, res) };
  }

  return {
    tokens,
    call,
    /** Closes the kept-alive TLS connections. */
    close(): void {
      agent.destroy();
    },
  };
}

export type ApiPixTransport = ReturnType<typeof createApiPixTransport>;
