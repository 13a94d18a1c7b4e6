import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { Problem } from '../http/problem';
import { callerOf } from './authenticate';

// The per-key rate limit of /v1 (failed authentication has its own, per address:
// http/failed-auth.ts).

/**
 * Requests per minute per API key, behind apiKeyAuth: one bucket per key's identity (a record's
 * id, whichever of its secrets is used during a rotation); past it a 429 problem with
 * Retry-After and RateLimit headers.
 */
export function apiRateLimit(perMinute: number): RequestHandler {
  if (perMinute <= 0) return (_req, _res, next) => next();
  return rateLimit({
    windowMs: 60_000,
    limit: perMinute,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: (_req, res) => `key:${callerOf(res)}`,
    handler: (_req, _res, next) =>
      next(
        new Problem(
          429,
          'rate-limited',
          'Too many requests',
          `more than ${perMinute} requests a minute with this API key; retry after the Retry-After seconds`,
        ),
      ),
  });
}
