import type { Request } from 'express';
import { insertInbox, insertKept, type NewInboxRow, type Stored } from '../db/inbox';
import type { Pool } from '../db/pool';
import { withTimeout } from '../http/timeout';
import type { ParsedNotification } from './notification';

// The one statement on the request path: the notification goes into the inbox before the
// provider gets its 2xx.

const HEADERS_OF_INTEREST = ['content-type', 'user-agent', 'x-request-id'];

/** The request headers kept with the row, each cut to 500 characters. */
export function headersOfInterest(req: Request): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const h of HEADERS_OF_INTEREST) {
    const v = req.header(h);
    if (v !== undefined) headers[h] = v.slice(0, 500);
  }
  return headers;
}

export interface Received {
  rawBody: string;
  headers: Record<string, string>;
  receivedAt: Date;
}

/**
 * Where the notification went (db/inbox.ts insertInbox). Rejects when Postgres does not answer
 * within `timeoutMs`. A row to deliver now is left to this request's fast path for `leaseMs`
 * before a relay may claim it.
 */
export function storeNotification(
  pool: Pool,
  n: ParsedNotification,
  got: Received,
  opts: { leaseMs: number; timeoutMs: number; coalesceMs: number },
): Promise<Stored> {
  return withTimeout(
    insertInbox(pool, rowOf(n, got, opts.leaseMs), opts.coalesceMs),
    opts.timeoutMs,
    'inbox insert',
  );
}

/** A notification with nothing to signal, stored as delivered at once (`note` says why). */
export function keepNotification(
  pool: Pool,
  n: ParsedNotification,
  got: Received,
  opts: { leaseMs: number; timeoutMs: number },
  note: string,
): Promise<number> {
  return withTimeout(insertKept(pool, rowOf(n, got, opts.leaseMs), note), opts.timeoutMs, 'inbox insert');
}

function rowOf(n: ParsedNotification, got: Received, leaseMs: number): NewInboxRow {
  return {
    dedupeKey: n.dedupeKey,
    point: n.point,
    workflowId: n.workflowId,
    rawBody: got.rawBody,
    headers: got.headers,
    receivedAt: got.receivedAt,
    signalName: n.signalName,
    signalPayload: n.signalPayload,
    nextAttemptAt: new Date(got.receivedAt.getTime() + leaseMs),
  };
}
