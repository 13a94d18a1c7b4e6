import type { Logger } from '../common/logger';
import { findApiKeyBySecret, type KeyBySecret, touchApiKey } from '../db/api-keys';
import { getBrand } from '../db/brands';
import type { Pool } from '../db/pool';

// The key records as the API reads them on every request: from a small in-process cache that
// trusts what it read for `ttlMs` (API_KEY_CACHE_MS), so a revocation or a change of scopes
// reaches every API process within that bound, at the price of one indexed read per key per
// process per `ttlMs`. Expiry and a rotated-out secret's end are checked against the clock on
// every request, cached or not. The brands a platform key names are remembered the same way.

/** Keys remembered at once: past it the oldest is forgotten (wrong keys must not grow memory). */
const MAX_ENTRIES = 10_000;
/** last_used_at is written at most this often per key and process (and Postgres skips a write within it). */
export const LAST_USED_EVERY_MS = 60_000;

interface Entry {
  until: number;
  found: Promise<KeyBySecret | undefined>;
}

export interface KeyDirectory {
  /** The record whose current or previous secret has this SHA-256; undefined for none. */
  find(digest: Buffer): Promise<KeyBySecret | undefined>;
  /** Notes a use: last_used_at is stamped in the background, at most once a minute. */
  used(id: string): void;
  /** Whether a brand with this id exists (what a platform key names). */
  brandExists(id: string): Promise<boolean>;
}

export function keyDirectory(pool: Pool, opts: { ttlMs: number; log: Logger }): KeyDirectory {
  const entries = new Map<string, Entry>();
  const brands = new Map<string, { until: number; exists: Promise<boolean> }>();
  const stamped = new Map<string, number>();
  const remember = <V>(map: Map<string, V>, key: string, value: V) => {
    map.delete(key);
    if (map.size >= MAX_ENTRIES) map.delete(map.keys().next().value as string);
    map.set(key, value);
  };
  return {
    find(digest) {
      const key = digest.toString('hex');
      const now = Date.now();
      const cached = entries.get(key);
      if (cached && cached.until > now) return cached.found;
      const entry: Entry = { until: now + opts.ttlMs, found: findApiKeyBySecret(pool, digest) };
      remember(entries, key, entry);
      // A failed read is not remembered: the next request asks Postgres again.
      entry.found.catch(() => {
        if (entries.get(key) === entry) entries.delete(key);
      });
      return entry.found;
    },
    brandExists(id) {
      const now = Date.now();
      const cached = brands.get(id);
      if (cached && cached.until > now) return cached.exists;
      const entry = { until: now + opts.ttlMs, exists: getBrand(pool, id).then(Boolean) };
      remember(brands, id, entry);
      entry.exists.catch(() => {
        if (brands.get(id) === entry) brands.delete(id);
      });
      return entry.exists;
    },
    used(id) {
      const now = Date.now();
      if (now - (stamped.get(id) ?? 0) < LAST_USED_EVERY_MS) return;
      remember(stamped, id, now);
      // Off the request's path: the answer never waits for this write.
      touchApiKey(pool, id).catch((err: unknown) =>
        opts.log.warn({ err: String(err), keyId: id }, 'api key last use not recorded'),
      );
    },
  };
}
