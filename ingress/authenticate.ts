import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { partnerIdOf } from '../connectors/identity-payments';
import type { NotificationPoint } from '../db/inbox';
import type { FailedAuthLimit } from '../http/failed-auth';
import { Problem } from '../http/problem';
import { type IngressAccount, type IngressAccounts, pathSecretCheck } from './brand-accounts';
import { NOTIFICATION_POINTS } from './notification';

// Who may post: the secret in the URL (checked before the body is read), which says whose account
// the notification came through (ingress/brand-accounts.ts), and the body's partner id, which must
// be that account's (checked before anything else in the body is looked at, so an unauthenticated
// caller learns nothing about what we would accept).

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
/** Constant time over equal-length digests, whatever the lengths of the inputs. */
const sameSecret = (given: string, expected: string) => timingSafeEqual(digest(given), digest(expected));

export interface IngressAuth {
  /**
   * The URL's secret, then its notification point: 401 (counted against the address), then 404.
   * The account it names is put on the request (accountOf).
   */
  checkUrl: RequestHandler;
  /** A 401 problem unless the body names the account's partner id; undefined when it does. */
  checkPartner(fields: Record<string, unknown>, account: IngressAccount): Problem | undefined;
}

/** The account the request's URL secret named (checkUrl put it there). */
export { accountOf } from './brand-accounts';

export function ingressAuth(accounts: IngressAccounts, failures: FailedAuthLimit): IngressAuth {
  return {
    checkUrl: pathSecretCheck(accounts, failures, (req) => {
      const point = req.params.point;
      return point !== undefined && !NOTIFICATION_POINTS.includes(point as NotificationPoint)
        ? new Problem(404, 'not-found', 'Not found', `no notification point ${JSON.stringify(point)}`)
        : undefined;
    }),
    checkPartner(fields, account) {
      const partner = partnerIdOf(fields);
      return account.partnerId !== undefined && sameSecret(partner, account.partnerId)
        ? undefined
        : new Problem(401, 'unauthorized', 'Unauthorized');
    },
  };
}
