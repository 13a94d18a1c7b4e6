import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { Problem } from './problem';

// API keys are kept only as SHA-256 digests and compared in constant time.
const digest = (key: string) => createHash('sha256').update(key, 'utf8').digest();

export function apiKeyAuth(keys: string[]): RequestHandler {
  const digests = keys.map(digest);
  return (req, _res, next) => {
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
    next();
  };
}
