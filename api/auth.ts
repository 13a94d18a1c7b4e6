import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { Problem } from './problem';

// API keys are kept only as SHA-256 digests and compared in constant time.
const digest = (key: string) => createHash('sha256').update(key, 'utf8').digest();

/**
 * Who the caller is, for what an API key owns (its webhook endpoints): a digest of the key, never
 * the key. Set by apiKeyAuth on every authenticated request.
 */
const ownerOf = (keyDigest: Buffer) => `key_${keyDigest.subarray(0, 12).toString('hex')}`;

export function callerOf(res: { locals: Record<string, unknown> }): string {
  const owner = res.locals.apiKeyOwner;
  if (typeof owner !== 'string') throw new Error('callerOf used on a route without apiKeyAuth');
  return owner;
}

export function apiKeyAuth(keys: string[]): RequestHandler {
  const digests = keys.map(digest);
  return (req, res, next) => {
    const header = req.header('authorization') ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header);
    if (!match?.[1]) {
      return next(
        new Problem(401, 'unauthorized', 'Missing API key', 'send Authorization: Bearer <api key>'),
      );
    }
    const given = digest(match[1].trim());
    // Compare against every key so timing does not reveal which one (or whether any) matched.
    let ok = false;
    for (const d of digests) ok = timingSafeEqual(d, given) || ok;
    if (!ok) return next(new Problem(401, 'unauthorized', 'Invalid API key'));
    res.locals.apiKeyOwner = ownerOf(given);
    next();
  };
}
