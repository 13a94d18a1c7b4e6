import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { partnerIdOf } from '../connectors/identity-payments';
import type { NotificationPoint } from '../db/inbox';
import type { FailedAuthLimit } from '../http/failed-auth';
import { Problem } from '../http/problem';
import { NOTIFICATION_POINTS } from './notification';

// Who may post: the secret in the URL (checked before the body is read) and the body's
// partner id (checked before anything else in the body is looked at, so an unauthenticated
// caller learns nothing about what we would accept).

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
/** Constant time over equal-length digests, whatever the lengths of the inputs. */
const sameSecret = (given: string, expected: Buffer) => timingSafeEqual(digest(given), expected);

export interface IngressAuth {
  /** The URL's secret, then its notification point: 401 (counted against the address), then 404. */
  checkUrl: RequestHandler;
  /** A 401 problem unless the body names our partner id; undefined when it does. */
  checkPartner(fields: Record<string, unknown>): Problem | undefined;
}

export function ingressAuth(
  config: { WEBHOOK_SECRET: string; WEBHOOK_PARTNER_ID: string },
  failures: FailedAuthLimit,
): IngressAuth {
  const secretDigest = digest(config.WEBHOOK_SECRET);
  const partnerDigest = digest(config.WEBHOOK_PARTNER_ID);
  return {
    checkUrl(req, res, next) {
      // Before the body is read: an unauthenticated caller costs us nothing more.
      if (!sameSecret(String(req.params.secret ?? ''), secretDigest)) {
        return failures.fail(req, res, next, new Problem(401, 'unauthorized', 'Unauthorized'));
      }
      const point = req.params.point;
      if (point !== undefined && !NOTIFICATION_POINTS.includes(point as NotificationPoint)) {
        return next(
          new Problem(404, 'not-found', 'Not found', `no notification point ${JSON.stringify(point)}`),
        );
      }
      next();
    },
    checkPartner(fields) {
      const partner = partnerIdOf(fields);
      return sameSecret(partner, partnerDigest)
        ? undefined
        : new Problem(401, 'unauthorized', 'Unauthorized');
    },
  };
}
