import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import helmet from 'helmet';
import { callerOf } from '../api-keys/authenticate';
import { Problem } from './problem';

// Security headers on every answer, and the per-key rate limit of /v1 (failed authentication has
// its own, per address: failed-auth.ts).

/**
 * helmet's headers with a CSP for what pixflow serves: JSON and PNGs (/docs sets its own, for the
 * reference's script). Nothing may frame it. The UI's codec calls are CORS requests, which
 * Cross-Origin-Resource-Policy does not block.
 */
export function securityHeaders(): RequestHandler {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        imgSrc: ["'self'", 'data:'],
        baseUri: ["'none'"],
        formAction: ["'none'"],
        frameAncestors: ["'none'"],
      },
    },
    strictTransportSecurity: false, // TLS ends in front of the API, which sets it there
    referrerPolicy: { policy: 'no-referrer' },
  });
}

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
