import { ServiceError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import type { NextFunction, Request, Response } from 'express';
import type { z } from 'zod';

// RFC 9457 problem details with a stable `type` per error, so callers can branch on it.
export const PROBLEM_BASE = 'https://pixflow.dev/problems/';

export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly slug: string,
    readonly title: string,
    readonly detail?: string,
    readonly extra: Record<string, unknown> = {},
    /** Seconds a caller waits before asking again (`Retry-After`), for what passes by itself. */
    readonly retryAfterS?: number,
  ) {
    super(detail ?? title);
  }
}

export interface InvalidParam {
  name: string;
  reason: string;
}

/** Where a value came from, as an invalid field's name starts: `body.client.cpf`, `input.txid`. */
export type RequestPart = 'body' | 'path' | 'query' | 'input';

export function validationProblem(where: RequestPart, error: z.ZodError): Problem {
  const invalid: InvalidParam[] = error.issues.map((i) => ({
    name: [where, ...i.path.map(String)].join('.'),
    reason: i.message,
  }));
  const first = invalid[0];
  return new Problem(
    400,
    'validation-error',
    'Request validation failed',
    first ? `${first.name}: ${first.reason}` : 'invalid request',
    { invalid_params: invalid },
  );
}

export function sendProblem(res: Response, p: Problem, instance?: string) {
  if (p.retryAfterS !== undefined) res.set('retry-after', String(p.retryAfterS));
  res
    .status(p.status)
    .type('application/problem+json')
    .json({
      type: `${PROBLEM_BASE}${p.slug}`,
      title: p.title,
      status: p.status,
      detail: p.detail,
      instance,
      ...p.extra,
    });
}

export const UNAVAILABLE_RETRY_AFTER_S = 5;
const UNAVAILABLE_DETAIL =
  'Temporal, or the worker that runs this flow, cannot answer now (or not in time); what this request started goes on: ask again with the same id';
const GRPC_CANCELLED = 1;
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_FAILED_PRECONDITION = 9;
const GRPC_UNAVAILABLE = 14;

/**
 * Temporal unreachable or past the request's deadline (http/temporal-deadline.ts), or a query no
 * worker answers (none polls the flow's task queue: the server says so, or holds the query until
 * its deadline): nothing the caller did, and gone once the server or the worker is back.
 */
export function isTemporalUnavailable(err: unknown): boolean {
  // An update's call that ran out of time: the update itself may still be applied.
  if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  if (!(err instanceof ServiceError)) return false;
  const code = (err.cause as { code?: number } | undefined)?.code;
  if (code === GRPC_UNAVAILABLE || code === GRPC_DEADLINE_EXCEEDED) return true;
  // The server resets a call still running at its deadline (RST_STREAM CANCEL), which can reach
  // the client before its own deadline fires: grpc-js reports it as CANCELLED. Nothing here
  // cancels a Temporal call itself, so a CANCELLED one ran out of time.
  if (code === GRPC_CANCELLED) return true;
  return code === GRPC_FAILED_PRECONDITION && /no poller/i.test(String((err.cause as Error).message));
}

/** SQLSTATEs of a server going away or not taking connections yet (crash recovery, shutdown, full). */
const PG_UNAVAILABLE = new Set([
  '57P01', // admin_shutdown: a fast shutdown, or a backend terminated
  '57P02', // crash_shutdown: another backend crashed, every one is reset
  '57P03', // cannot_connect_now: starting up, in recovery, shutting down
  '53300', // too_many_connections
]);
/** What a socket to Postgres fails with when the server is down or unreachable. */
const NET_UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
/** node-postgres's own words for a connection lost or never made in time. */
const PG_CONNECTION_LOST =
  /^(Connection terminated( unexpectedly| due to connection timeout)?|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)$/;

/**
 * Postgres restarting, in recovery, full or unreachable: nothing the caller did, and gone once
 * the server is back. A query's own failure (a constraint, a syntax error) is not this.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  // localhost's every address refused: Node gathers them in one AggregateError.
  if (err instanceof AggregateError) return err.errors.length > 0 && err.errors.every(isDatabaseUnavailable);
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    // Class 08: connection exceptions.
    if (PG_UNAVAILABLE.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
    // A socket's own failure, not a fetch's (whose cause this would be): those are other services'.
    if (NET_UNAVAILABLE.has(code) && (err as { syscall?: unknown }).syscall !== undefined) return true;
  }
  return PG_CONNECTION_LOST.test(err.message);
}

/** Temporal, its worker, or Postgres cannot answer now: 503 with Retry-After, never 500. */
export const isUnavailable = (err: unknown): boolean =>
  isTemporalUnavailable(err) || isDatabaseUnavailable(err);

const DATABASE_UNAVAILABLE_DETAIL =
  'the database cannot answer now (restarting or unreachable); what this request started goes on: ask again with the same id';

/** 503 with Retry-After: Temporal, the flow's worker or the database did not answer (in time). */
export function answerUnavailable(req: Request, res: Response, err?: unknown): void {
  res.set('retry-after', String(UNAVAILABLE_RETRY_AFTER_S));
  const detail = isDatabaseUnavailable(err) ? DATABASE_UNAVAILABLE_DETAIL : UNAVAILABLE_DETAIL;
  sendProblem(res, new Problem(503, 'unavailable', 'Try again shortly', detail), req.originalUrl);
}

/**
 * Last error handler: known problems as they are; body-parser errors as 4xx; Temporal or
 * Postgres away as 503 with Retry-After; anything else 500.
 */
export function problemHandler(log: {
  error: (o: object, m: string) => void;
  warn?: (o: object, m: string) => void;
}) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    // Already answered (503 at the request's deadline): what the handler met after it is moot.
    if (res.headersSent) return;
    if (err instanceof Problem) return sendProblem(res, err, req.originalUrl);
    const e = err as { type?: string; status?: number; statusCode?: number; message?: string };
    const status = e.status ?? e.statusCode;
    if (e.type === 'entity.parse.failed') {
      return sendProblem(
        res,
        new Problem(400, 'malformed-json', 'Malformed JSON body', e.message),
        req.originalUrl,
      );
    }
    if (e.type === 'entity.too.large') {
      return sendProblem(res, new Problem(413, 'body-too-large', 'Request body too large'), req.originalUrl);
    }
    if (status && status >= 400 && status < 500) {
      return sendProblem(res, new Problem(status, 'bad-request', 'Bad request', e.message), req.originalUrl);
    }
    if (isTemporalUnavailable(err)) return answerUnavailable(req, res);
    if (isDatabaseUnavailable(err)) {
      // Its code and words only: a query's parameters never reach the log.
      const { code, message } = err as { code?: string; message: string };
      (log.warn ?? log.error).call(
        log,
        { code, message, path: req.path },
        'database unavailable: answered 503',
      );
      return answerUnavailable(req, res, err);
    }
    log.error({ err }, 'unhandled error');
    sendProblem(res, new Problem(500, 'internal', 'Internal error'), req.originalUrl);
  };
}

/**
 * Errors Node answers before Express runs (headers over 16 KiB, malformed HTTP): a
 * problem+json answer too, instead of a bare status line.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: import('node:stream').Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : 400;
  const title = tooLarge ? 'Request headers too large' : 'Malformed HTTP request';
  const body = JSON.stringify({
    type: `${PROBLEM_BASE}${tooLarge ? 'headers-too-large' : 'bad-request'}`,
    title,
    status,
  });
  socket.end(
    `HTTP/1.1 ${status} ${title}\r\ncontent-type: application/problem+json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
