import type { NotificationPoint } from '../db/inbox';
import { Problem } from '../http/problem';
import { illFormedTextPath } from '../http/request-input';
import { type ParsedNotification, parseNotification } from './notification';

// From the raw text of a request to a notification: first only far enough to read its partner id
// (parseBody), then, once the caller is authenticated, all of it (parseStorable).

const malformed = (detail: string) => new Problem(400, 'malformed-json', 'Malformed JSON body', detail);

/** The body as a JSON object, or a 400 problem. */
export function parseBody(raw: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw malformed('the body is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw malformed('the body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

/** A notification the inbox can store and its workflow can take, or a 400 problem. */
export function parseStorable(
  raw: string,
  fields: Record<string, unknown>,
  pathPoint: NotificationPoint | undefined,
  receivedAt: Date,
  piiHashKey: string,
  /** The brand whose account the notification came through; unset: the default brand. */
  brand?: string,
): ParsedNotification {
  // Postgres text and jsonb refuse NUL and lone surrogates: such a body could never be stored,
  // and a 503 would have the provider retry it forever.
  const bad = raw.includes('\u0000') ? [] : illFormedTextPath(fields);
  if (bad) {
    const name = ['body', ...bad].join('.');
    throw new Problem(
      400,
      'validation-error',
      'Request validation failed',
      `${name}: must be well-formed text without NUL characters`,
    );
  }
  return parseNotification(pathPoint, fields, receivedAt, piiHashKey, brand);
}
