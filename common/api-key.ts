import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';

// API keys as records: what a key may do (its scopes) and how its secret looks and is kept.
// A secret is 32 random bytes, so its SHA-256 is all that is stored (a slow hash would add
// nothing against guessing 256 bits, and would cost every request); a short non-secret prefix
// lets people tell keys apart.

export const scopeResources = [
  'onboardings',
  'deposits',
  'withdrawals',
  'customers',
  'events',
  'webhooks',
] as const;
type ScopeResource = (typeof scopeResources)[number];

const scopes = scopeResources.flatMap((r) => [`${r}:read`, `${r}:write`] as const);
export type Scope = `${ScopeResource}:${'read' | 'write'}`;

export const scopeSchema = z.enum(scopes as [Scope, ...Scope[]], {
  error: `must be one of ${scopes.join(', ')}`,
});

/** `write` includes `read`: a key that may change a thing may look at it. */
export function grants(held: ReadonlySet<Scope> | readonly Scope[], wanted: Scope): boolean {
  const has = (s: Scope) => (Array.isArray(held) ? held.includes(s) : (held as ReadonlySet<Scope>).has(s));
  if (has(wanted)) return true;
  const [resource, level] = wanted.split(':') as [ScopeResource, string];
  return level === 'read' && has(`${resource}:write`);
}

/** The scopes in their canonical form: sorted, no repeat, no `read` that a `write` already gives. */
export function normalizeScopes(given: readonly Scope[]): Scope[] {
  const set = new Set(given);
  return scopes.filter(
    (s) => set.has(s) && !(s.endsWith(':read') && set.has(s.replace(':read', ':write') as Scope)),
  );
}

/** Every scope: what a bootstrap key from API_KEYS holds. */
export const allScopes: readonly Scope[] = normalizeScopes(scopes);

const SECRET_PREFIX = 'pxk_';
/** `pxk_` and 43 base64url characters (32 bytes). */
const SECRET_FORM = /^pxk_[A-Za-z0-9_-]{43}$/;
/** How much of a secret is shown to tell keys apart: `pxk_` and 8 characters (48 bits, not enough to guess from). */
const SHOWN_LENGTH = SECRET_PREFIX.length + 8;

export const keyDigest = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();

/** Whether a presented key could be a record's secret at all (anything else is not looked up). */
export const isRecordSecret = (presented: string) => SECRET_FORM.test(presented);

export interface NewSecret {
  /** Given to the caller once, never stored. */
  secret: string;
  prefix: string;
  digest: Buffer;
}

export function newSecret(): NewSecret {
  const secret = `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { secret, prefix: secret.slice(0, SHOWN_LENGTH), digest: keyDigest(secret) };
}

/** A key record's id: what owns its webhook endpoints, the same across rotations. */
export const newKeyId = () => `ak_${randomBytes(8).toString('hex')}`;

export const keyIdSchema = z.string().regex(/^ak_[0-9a-f]{16}$/, 'must be a key id, ak_ and 16 hex digits');

export const keyNameSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .refine((v) => !/[\p{Cc}\p{Cs}]/u.test(v), 'must not hold control characters or lone surrogates');

/** A length of time as people type it: 90d, 12h, 30m. */
export const durationSchema = z
  .string()
  .regex(/^\d{1,6}(d|h|m)$/, 'must be a whole number and a unit: 90d, 12h or 30m')
  .transform((v) => Number(v.slice(0, -1)) * { d: 86_400_000, h: 3_600_000, m: 60_000 }[v.slice(-1) as 'd']);
