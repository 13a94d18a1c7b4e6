import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { secretHash } from '../connectors/accounts';
import type { BrandAccountConnector } from '../contracts/brand-account';
import { DEFAULT_BRAND } from '../contracts/flow';
import { accountBySecretHash, getBrandAccount } from '../db/brand-accounts';
import type { Pool } from '../db/pool';
import type { FailedAuthLimit } from '../http/failed-auth';
import { Problem } from '../http/problem';
import { withTimeout } from '../http/timeout';

// Which brand's account a notification came through (docs/brands.md, Notifications by account):
// the secret in its URL's path. The environment's secret is the default brand's while the default
// brand has no record at that connector (connectors/accounts.ts, the same fallback its connectors
// take); any other secret is looked up by its keyed hash among the brands' records, so a secret
// is never compared with a stored one in the clear, nor kept. What a lookup finds is trusted for
// `ttlMs`: a changed or removed account reaches the ingress within that bound.

/** The account a notification came through. */
export interface IngressAccount {
  brand: string;
  /** The first provider's partner id the body must name; unset for an API Pix account. */
  partnerId?: string;
  /**
   * The CA an API Pix account's PSP signs its webhook client certificate with; unset, the
   * environment's (API_PIX_WEBHOOK_CLIENT_CA_FILE).
   */
  webhookClientCaFile?: string;
}

export interface IngressAccounts {
  /** The account whose webhook secret this is; undefined when none is (a 401). */
  bySecret(secret: string): Promise<IngressAccount | undefined>;
}

/** How long a lookup is trusted. */
export const INGRESS_ACCOUNTS_TTL_MS = 30_000;
/** At most this many secrets' answers kept (only found ones are: a wrong secret is never kept). */
const MAX_KEPT = 1_000;

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

export function ingressAccounts(opts: {
  pool: Pool;
  connector: BrandAccountConnector;
  /** PII_HASH_KEY: the key of the hashes kept of each brand's secrets; unset, the environment's alone is taken. */
  hashKey?: string;
  /** The environment's account: WEBHOOK_SECRET and WEBHOOK_PARTNER_ID (or API_PIX_WEBHOOK_SECRET). */
  environment?: { secret: string; partnerId?: string };
  ttlMs?: number;
  /** Bound on each lookup; past it the caller gets a 503 and retries, as when the inbox cannot store. */
  timeoutMs?: number;
  now?: () => number;
}): IngressAccounts {
  const ttlMs = opts.ttlMs ?? INGRESS_ACCOUNTS_TTL_MS;
  const bounded = <T>(p: Promise<T>) => withTimeout(p, opts.timeoutMs ?? 5_000, 'brand account lookup');
  const now = opts.now ?? Date.now;
  const envDigest = opts.environment ? digest(opts.environment.secret) : undefined;
  const found = new Map<string, { account: IngressAccount; at: number }>();
  let defaultRecord: { has: boolean; at: number } | undefined;

  const remember = (hash: string, account: IngressAccount) => {
    if (found.size >= MAX_KEPT) found.delete(found.keys().next().value as string);
    found.set(hash, { account, at: now() });
  };

  /** Whether the default brand has a record at this connector: then the environment's is not its. */
  const defaultHasRecord = async () => {
    if (defaultRecord && now() - defaultRecord.at < ttlMs) return defaultRecord.has;
    const record = await bounded(getBrandAccount(opts.pool, DEFAULT_BRAND, opts.connector));
    defaultRecord = { has: record !== undefined, at: now() };
    return defaultRecord.has;
  };

  return {
    async bySecret(secret) {
      // Constant time against the environment's, as before brands; without the hash key no brand's
      // record can be found, so the default brand's cannot replace it either.
      if (
        envDigest &&
        timingSafeEqual(digest(secret), envDigest) &&
        (opts.hashKey === undefined || !(await defaultHasRecord()))
      )
        return {
          brand: DEFAULT_BRAND,
          ...(opts.environment?.partnerId === undefined ? {} : { partnerId: opts.environment.partnerId }),
        };
      if (opts.hashKey === undefined) return undefined;
      const hash = secretHash(opts.hashKey, opts.connector, 'webhookSecret', secret);
      const kept = found.get(hash);
      if (kept && now() - kept.at < ttlMs) return kept.account;
      found.delete(hash);
      const row = await bounded(accountBySecretHash(opts.pool, opts.connector, hash));
      if (!row) return undefined;
      const account: IngressAccount = {
        brand: row.brandId,
        ...(row.partnerId === undefined ? {} : { partnerId: row.partnerId }),
        ...(row.webhookClientCaFile === undefined ? {} : { webhookClientCaFile: row.webhookClientCaFile }),
      };
      remember(hash, account);
      return account;
    },
  };
}

/** The account the request's path secret named (pathSecretCheck put it there). */
export function accountOf(res: Response): IngressAccount {
  const account = res.locals.ingressAccount as IngressAccount | undefined;
  if (!account) throw new Error('accountOf used on a route without the path secret check');
  return account;
}

/**
 * The path's secret, checked before the body is read (an unauthenticated caller costs nothing
 * more), as both listeners check it: the account it names is put on the request (accountOf); no
 * account is a 401 counted against the address; then `further` may refuse the request (the first
 * provider's notification point). Postgres not answering is a 503 the provider retries, as when
 * the inbox cannot store.
 */
export function pathSecretCheck(
  accounts: IngressAccounts,
  failures: FailedAuthLimit,
  further?: (req: Request) => Problem | undefined,
): RequestHandler {
  return (req, res, next) => {
    accounts.bySecret(String(req.params.secret ?? '')).then(
      (account) => {
        if (!account) return failures.fail(req, res, next, new Problem(401, 'unauthorized', 'Unauthorized'));
        const refusal = further?.(req);
        if (refusal) return next(refusal);
        res.locals.ingressAccount = account;
        next();
      },
      () =>
        next(
          new Problem(
            503,
            'accounts-unavailable',
            'Cannot check the notification now; retry later',
            undefined,
            {},
            5,
          ),
        ),
    );
  };
}
