import type { RequestHandler, Router } from 'express';
import type { z } from 'zod';
import type { Scope } from '../common/api-key';

// A /v1 route as it describes itself: where it is, what it takes and answers, and the API key
// scopes it needs. Each surface declares its operations beside their handlers; the API mounts
// the handlers, guards the scopes and assembles /openapi.json from the same declarations.

/** Where /v1 routes are mounted: an operation's path is below it. */
export const V1 = '/v1';

export interface Operation {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Below /v1, as Express matches it: `/deposits/:txid`. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  ok: { status: number; description: string; schema?: z.ZodType; png?: boolean }[];
  /** The error statuses of its own; every operation also answers 403, 429 and 503. */
  errors: number[];
  /** What the API key must hold (a write scope includes its read). */
  scopes: readonly Scope[];
}

/** Serves the operation on a router mounted at /v1. */
export function route(router: Router, op: Operation, handler: RequestHandler): void {
  router[op.method](op.path, handler);
}

/** `GET /v1/deposits/:txid`: how the scope guard, its error and docs/security.md name a route. */
export const routeName = (op: Pick<Operation, 'method' | 'path'>) =>
  `${op.method.toUpperCase()} ${V1}${op.path}`;
