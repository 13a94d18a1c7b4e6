import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import helmet from 'helmet';
import { Problem } from './problem';

// Security headers on every answer, and the per-key rate limit of /v1.

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

/** The bucket of a request: the SHA-256 of the presented key (never the key), or the caller's address. */
function bucketOf(req: Parameters<RequestHandler>[0]): string {
  const key = /^Bearer\s+(.+)$/i.exec(req.header('authorization') ?? '')?.[1]?.trim();
  if (key) return `key:${createHash('sha256').update(key, 'utf8').digest('hex')}`;
  return `addr:${ipKeyGenerator(req.socket.remoteAddress ?? '')}`;
}

/** Requests per minute per API key; past it a 429 problem with Retry-After and RateLimit headers. */
export function apiRateLimit(perMinute: number): RequestHandler {
  if (perMinute <= 0) return (_req, _res, next) => next();
  return rateLimit({
    windowMs: 60_000,
    limit: perMinute,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: bucketOf,
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
