import { timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { allScopes, isRecordSecret, keyDigest, type Scope } from '../common/api-key';
import type { KeyBySecret } from '../db/api-keys';
import type { FailedAuthLimit } from '../http/failed-auth';
import { Problem } from '../http/problem';
import { actingBrand, BRAND_HEADER, DEFAULT_BRAND, unknownBrand } from './acting-brand';
import type { KeyDirectory } from './directory';

// Who calls /v1: an API key, presented as `Authorization: Bearer <key>`. A key is a record
// (db/api-keys.ts: name, scopes, expiry, revocation) or one of API_KEYS, the bootstrap keys,
// which hold every scope. Only SHA-256 digests are kept and compared. Every request acts for one
// brand (api-keys/acting-brand.ts): its key's, or for a platform key the one it names.

/** The caller, on res.locals of every authenticated request. */
export interface Principal {
  /** What owns the caller's webhook endpoints and events: a record's id (kept across rotations), or for an API_KEYS key `key_` and a digest prefix. */
  id: string;
  scopes: ReadonlySet<Scope>;
  /** The brand the key acts for; null for a platform key, which names one on each request. */
  brand: string | null;
}

/** A bootstrap key's identity: a digest of the key, never the key. */
const bootstrapOwner = (digest: Buffer) => `key_${digest.subarray(0, 12).toString('hex')}`;

export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw new Error('principalOf used on a route without apiKeyAuth');
  return principal;
}

/** Who the caller is, for what an API key owns (its webhook endpoints, its own events). */
export const callerOf = (res: Response): string => principalOf(res).id;

/** The brand this authenticated request acts for: what a route reads and filters by. */
export function brandOf(res: Response): string {
  const brand = res.locals.brand as string | undefined;
  if (!brand) throw new Error('brandOf used on a route without apiKeyAuth');
  return brand;
}

const unauthorized = (title: string, detail?: string) => new Problem(401, 'unauthorized', title, detail);

const presentedKey = (req: Request) =>
  /^Bearer\s+(.+)$/i.exec(req.header('authorization') ?? '')?.[1]?.trim();

/** Why a record may not authenticate now, or undefined when it may. */
function refusalOf(k: KeyBySecret, now: number): Problem | undefined {
  if (k.revokedAt) return unauthorized('API key revoked', 'this API key was revoked');
  if (k.expiresAt && Date.parse(k.expiresAt) <= now)
    return unauthorized('API key expired', 'this API key has expired');
  if (k.previous && !(k.previousSecretUntil && Date.parse(k.previousSecretUntil) > now)) {
    return unauthorized('Invalid API key');
  }
  return undefined;
}

/** A presented key's check: who it is, or the 401 that refuses it (counted as a failed authentication). */
export type KeyCheck = { principal: Principal } | { refusal: Problem };

/**
 * Checks a presented key, wherever it was presented (the API's Authorization header, a Nexus
 * operation's header): a bootstrap key of API_KEYS, or a usable record. Throws a 503 Problem when
 * the records cannot be read now, which is no failed authentication.
 */
export function keyChecker(deps: {
  bootstrapKeys: string[];
  directory: KeyDirectory;
}): (presented: string | undefined) => Promise<KeyCheck> {
  const bootstrap = deps.bootstrapKeys.map(keyDigest);
  const everyScope: ReadonlySet<Scope> = new Set(allScopes);
  return async (presented) => {
    if (!presented)
      return { refusal: unauthorized('Missing API key', 'send Authorization: Bearer <api key>') };
    const given = keyDigest(presented);
    // Compare against every bootstrap key so timing does not reveal which one (or whether any) matched.
    let isBootstrap = false;
    for (const d of bootstrap) isBootstrap = timingSafeEqual(d, given) || isBootstrap;
    // A bootstrap key acts for the default brand, as every key made before brands existed.
    if (isBootstrap)
      return { principal: { id: bootstrapOwner(given), scopes: everyScope, brand: DEFAULT_BRAND } };
    let record: KeyBySecret | undefined;
    try {
      record = isRecordSecret(presented) ? await deps.directory.find(given) : undefined;
    } catch {
      throw new Problem(503, 'unavailable', 'Try again shortly', 'the API key cannot be checked now');
    }
    if (!record) return { refusal: unauthorized('Invalid API key') };
    const refusal = refusalOf(record, Date.now());
    if (refusal) return { refusal };
    deps.directory.used(record.id);
    return {
      principal: { id: record.id, scopes: new Set(record.scopes as Scope[]), brand: record.brandId },
    };
  };
}

export function apiKeyAuth(deps: {
  bootstrapKeys: string[];
  directory: KeyDirectory;
  failures: FailedAuthLimit;
}): RequestHandler {
  const check = keyChecker(deps);
  return async (req, res, next) => {
    let checked: KeyCheck;
    try {
      checked = await check(presentedKey(req));
    } catch (err) {
      res.set('retry-after', '5');
      return next(err);
    }
    if ('refusal' in checked) return deps.failures.fail(req, res, next, checked.refusal);
    // A key that authenticated but names a brand it may not act for is no failed authentication.
    const resolved = actingBrand(checked.principal.brand, req.header(BRAND_HEADER));
    if ('refusal' in resolved) return next(resolved.refusal);
    let brand: string;
    if ('lookUp' in resolved) {
      let exists: boolean;
      try {
        exists = await deps.directory.brandExists(resolved.lookUp);
      } catch {
        return next(
          new Problem(503, 'unavailable', 'Try again shortly', 'the brand cannot be checked now', {}, 5),
        );
      }
      if (!exists) return next(unknownBrand(resolved.lookUp));
      brand = resolved.lookUp;
    } else {
      brand = resolved.brand;
    }
    res.locals.principal = checked.principal satisfies Principal;
    res.locals.brand = brand;
    // Not secret: the access-log line names the brand the request acted for.
    req.log = req.log?.child({ brand });
    next();
  };
}
