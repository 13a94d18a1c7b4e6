import { createHmac, randomInt } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  type WorkflowHandle,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
import { canonicalJson } from '../common/canonical-json';
import { DEPOSIT_FAILED } from '../contracts/deposit';
import { Problem, validationProblem } from '../http/problem';

// NUL is refused by Postgres text and jsonb, and a lone surrogate is not Unicode (UTF-8 cannot
// carry it): no field may hold either, whatever its schema allows.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const illFormed = (s: string) => s.includes('\u0000') || LONE_SURROGATE.test(s);

/** The path of the first string in `value` that holds NUL or a lone surrogate (iterative: any depth). */
export function illFormedTextPath(value: unknown): string[] | undefined {
  const stack: { v: unknown; path: string[] }[] = [{ v: value, path: [] }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    if (typeof item.v === 'string') {
      if (illFormed(item.v)) return item.path;
    } else if (item.v && typeof item.v === 'object') {
      const entries = Object.entries(item.v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, v] = entries[i] as [string, unknown];
        stack.push({ v, path: [...item.path, k] });
      }
    }
  }
  return undefined;
}

/**
 * Parses one part of the request or throws a 400 problem naming each bad field (body.client.cpf).
 * The text check reads what the schema kept: properties it does not know are dropped unread, as
 * the API's document says (it allows them), whatever they hold.
 */
export function parse<S extends z.ZodType>(
  schema: S,
  where: 'body' | 'path' | 'query',
  value: unknown,
): z.output<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw validationProblem(where, r.error);
  const bad = illFormedTextPath(r.data);
  if (bad) {
    const name = [where, ...bad].join('.');
    const reason = 'must be well-formed text without NUL characters';
    throw new Problem(400, 'validation-error', 'Request validation failed', `${name}: ${reason}`, {
      invalid_params: [{ name, reason }],
    });
  }
  return r.data;
}

export const notFound = (what: string) => new Problem(404, 'flow-not-found', 'Flow not found', `no ${what}`);

/** 409: the request differs from the one that created the flow. */
export const conflict = (reason: string) =>
  new Problem(409, 'conflict', 'Conflicts with the existing flow', reason);

/**
 * 422: the provider refused to create the deposit (a business error: its txid taken, a merchant
 * it does not know, data it will not take). Nothing was created and the same request would be
 * refused again, so it is the caller's to change, not a gateway failure to retry.
 */
export const depositRefused = (reason: string | undefined) =>
  new Problem(422, 'deposit-failed', 'The provider refused the deposit', reason);

/** Update failures: a validator rejection or a finished flow is the caller's conflict, not ours. */
export function updateFailure(err: unknown): Problem | undefined {
  if (!(err instanceof WorkflowUpdateFailedError)) return undefined;
  const cause = err.cause;
  const message = cause?.message ?? err.message;
  if (cause instanceof ApplicationFailure && cause.type === DEPOSIT_FAILED) return depositRefused(message);
  return conflict(message);
}

export function isNotFound(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError;
}

export function isAlreadyStarted(err: unknown): boolean {
  return err instanceof WorkflowExecutionAlreadyStartedError;
}

/** Whether a workflow with this id exists at all (running or closed). */
export async function exists(handle: WorkflowHandle): Promise<boolean> {
  try {
    await handle.describe();
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/** Keyed hash of a request (it holds a CPF): comparable, kept in the memo, not reversible. */
export function requestHash(v: unknown, key: string): string {
  return createHmac('sha256', key).update(canonicalJson(v)).digest('hex');
}

/** 32 random digits: a valid txid (digits only, at most 33). */
export function newTxid(): string {
  let s = '';
  for (let i = 0; i < 32; i++) s += String(randomInt(10));
  return s;
}

/** The routes' flow summaries show amounts as the sandbox console does: one formatter for both. */
export { formatBrl } from '../provider/money';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * The PNG bytes of a QR code as a flow keeps it (a `data:image/png;base64,` URL, or bare base64
 * of a PNG), or undefined when it is not one: the PNG routes serve only what is a PNG.
 */
export function pngBytes(image: string | undefined): Buffer | undefined {
  if (!image) return undefined;
  const bytes = Buffer.from(image.replace(/^data:image\/png;base64,/, ''), 'base64');
  return bytes.subarray(0, 8).equals(PNG_SIGNATURE) ? bytes : undefined;
}
