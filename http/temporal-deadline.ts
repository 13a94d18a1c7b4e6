import type { Client } from '@temporalio/client';
import type { Request, RequestHandler, Response } from 'express';
import { withTimeout } from './timeout';

// Every wait on Temporal has an end: a server that stops answering (frozen, partitioned, a
// worker gone) costs a caller the bound, not as long as the server takes.

/**
 * Runs `fn` with a gRPC deadline `ms` from now on every Temporal call made inside it (the SDK
 * carries it through AsyncLocalStorage), and rejects after `ms` whatever `fn` still waits on: a
 * lazy connection still dialling, or the SDK's back-off between retries, which no deadline ends.
 */
export function withTemporalDeadline<T>(temporal: Client, ms: number, fn: () => Promise<T>): Promise<T> {
  const call = temporal.connection.withDeadline(Date.now() + ms, fn);
  call.catch(() => {});
  return withTimeout(call, ms, 'temporal call');
}

/**
 * Middleware: the rest of the request's handling runs under `withTemporalDeadline`. Calls still
 * waiting at the deadline fail (DEADLINE_EXCEEDED, which the error handlers answer 503); should
 * anything else still hold the answer, `answer` gives the caller the 503 itself. What the request
 * set going in Temporal goes on: asked again with the same id, the caller gets its outcome.
 * Mounted after anything that reads the body or a session: their callbacks would leave the
 * deadline's context behind.
 */
export function temporalDeadline(
  temporal: Client,
  ms: number,
  answer: (req: Request, res: Response) => void,
): RequestHandler {
  return (req, res, next) => {
    const answered = new Promise<void>((resolve) => res.once('close', resolve));
    withTemporalDeadline(temporal, ms, () => {
      next();
      return answered;
    }).catch(() => {
      if (!res.headersSent) answer(req, res);
    });
  };
}
