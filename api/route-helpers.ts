import { createHmac, randomInt } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  type WorkflowHandle,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
import { Problem, validationProblem } from './problem';

/** Parses one part of the request or throws a 400 problem naming each bad field (body.client.cpf). */
export function parse<S extends z.ZodType>(
  schema: S,
  where: 'body' | 'path' | 'query',
  value: unknown,
): z.output<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw validationProblem(where, r.error);
  return r.data;
}

export const notFound = (what: string) => new Problem(404, 'flow-not-found', 'Flow not found', `no ${what}`);

/** Update failures: a validator rejection or a finished flow is the caller's conflict, not ours. */
export function updateFailure(err: unknown): Problem | undefined {
  if (!(err instanceof WorkflowUpdateFailedError)) return undefined;
  const cause = err.cause;
  const message = cause?.message ?? err.message;
  if (cause instanceof ApplicationFailure && cause.type === 'DepositFailed') {
    return new Problem(502, 'deposit-failed', 'The provider did not create the QR code', message);
  }
  return new Problem(409, 'conflict', 'Conflicts with the existing flow', message);
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

/** Canonical JSON: keys sorted at every level, so equal requests hash equal whatever the key order. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
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

/** R$ 1.234,56 from centavos, by string arithmetic on the integer (no floating point). */
export function formatBrl(centavos: number): string {
  const negative = centavos < 0;
  const digits = String(Math.abs(Math.trunc(centavos))).padStart(3, '0');
  const reais = digits.slice(0, -2).replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${negative ? '-' : ''}R$ ${reais},${digits.slice(-2)}`;
}
