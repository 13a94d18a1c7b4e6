import type { RequestHandler, Router } from 'express';
import type { z } from 'zod';
import type { Scope } from '../common/api-key';

// A /v1 route as it describes itself: where it is, what it takes and answers, and the API key
// scopes it needs. Each surface declares its operations beside their handlers; the API mounts
// the handlers, guards the scopes and assembles /openapi.json from the same declarations.

/** Where /v1 routes are mounted: an operation's path is below it. */
export const V1 = '/v1';

export interface Operation {
  /** Its stable name in /openapi.json, and so in generated clients: `createDeposit`. */
  operationId: string;
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Below /v1, as Express matches it: `/deposits/:txid`. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  ok: { status: number; description: string; schema?: z.ZodType; png?: boolean }[];
  /**
   * The error statuses of its own. Every operation also answers 401, 403, 429 and 503, one that
   * takes input 400, and one whose path names something 404 (`errorStatuses`).
   */
  errors?: number[];
  /** What the API key must hold (a write scope includes its read). */
  scopes: readonly Scope[];
}

/** Every error status an operation may answer. */
export function errorStatuses(op: Operation): number[] {
  const takesInput = op.params || op.query || op.body;
  const derived = [...(takesInput ? [400] : []), 401, ...(op.params ? [404] : []), 403, 429, 503];
  return [...new Set([...derived, ...(op.errors ?? [])])].sort((a, b) => a - b);
}

/** Serves the operation on a router mounted at /v1. */
export function route(router: Router, op: Operation, handler: RequestHandler): void {
  router[op.method](op.path, handler);
}

/** `GET /v1/deposits/:txid`: how the scope guard, its error and docs/security.md name a route. */
export const routeName = (op: Pick<Operation, 'method' | 'path'>) =>
  `${op.method.toUpperCase()} ${V1}${op.path}`;
