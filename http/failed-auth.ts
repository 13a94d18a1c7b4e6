import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, MemoryStore, rateLimit } from 'express-rate-limit';
import { AUTH_FAILURE_DEFAULTS } from '../common/config';
import { Problem } from './problem';

// Failed authentication, limited per client address however the guesses are spread (over API
// keys on /v1, over secret paths on the ingress): past the budget every request from the address
// is refused 429 until its window ends, a right credential too, so a guess that happens to be
// right teaches nothing. The count is express-rate-limit's, in this process's memory.

export type AuthSurface = 'api' | 'ingress';

export interface FailedAuthMetrics {
  countAuthFailure(surface: AuthSurface): void;
  countAuthLimited(surface: AuthSurface): void;
}

export interface FailedAuthLimit {
  /** First of all: 429 while this address has spent its budget of failures. */
  refuseWhileLimited: RequestHandler;
  /** One failed authentication: counted, then `refusal` (its 401), or a 429 past the budget. */
  fail(req: Request, res: Response, next: NextFunction, refusal: Problem): void;
}

/** The client's address as TRUST_PROXY says to read it (IPv6 by its /56, as one client has many). */
const addressOf = (req: Request) => ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? '');

export function failedAuthLimit(opts: {
  surface: AuthSurface;
  limit?: number;
  windowMs?: number;
  metrics?: FailedAuthMetrics;
}): FailedAuthLimit {
  const limit = opts.limit ?? AUTH_FAILURE_DEFAULTS.limit;
  const windowMs = opts.windowMs ?? AUTH_FAILURE_DEFAULTS.windowMs;
  const tooMany = (res: Response, resetTime: Date | undefined) => {
    opts.metrics?.countAuthLimited(opts.surface);
    const seconds = Math.max(
      1,
      Math.ceil(((resetTime?.getTime() ?? Date.now() + windowMs) - Date.now()) / 1000),
    );
    res.set('retry-after', String(seconds));
    return new Problem(
      429,
      'too-many-failed-authentications',
      'Too many failed authentications',
      `more than ${limit} failed authentications from this address in ${Math.round(windowMs / 1000)} s; every request from it waits until the Retry-After seconds have passed`,
    );
  };
  const store = new MemoryStore();
  // Counts only the requests handed to it, which are the failures; not in the request path of
  // a success, so a client's concurrent good requests never count.
  const counter = rateLimit({
    windowMs,
    limit,
    store,
    keyGenerator: addressOf,
    standardHeaders: false,
    legacyHeaders: false,
    requestPropertyName: 'failedAuthentications',
    handler: (req, res, next) =>
      next(
        tooMany(
          res,
          (req as { failedAuthentications?: { resetTime?: Date } }).failedAuthentications?.resetTime,
        ),
      ),
  });
  return {
    async refuseWhileLimited(req, res, next) {
      const spent = await store.get(addressOf(req));
      if (spent && spent.totalHits >= limit) return next(tooMany(res, spent.resetTime));
      next();
    },
    fail(req, res, next, refusal) {
      opts.metrics?.countAuthFailure(opts.surface);
      void counter(req, res, (err?: unknown) => next(err ?? refusal));
    },
  };
}
