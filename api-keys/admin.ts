import { newKeyId, newSecret, normalizeScopes, type Scope } from '../common/api-key';
import {
  type ApiKeyRow,
  getApiKey,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
  rotateApiKey,
} from '../db/api-keys';
import { type NewOperatorAction, recordAction } from '../db/operator-actions';
import { inTransaction, type Pool } from '../db/pool';
import { DEFAULT_BRAND } from './acting-brand';

// Creating, rotating and revoking API keys, for the operator CLI and the back office alike: each
// change and its row of the audit trail commit together. A secret is returned to show once; the
// audit holds the key's id, name, scopes, brand and prefix, never the secret. A key acts for one
// brand, or, made on purpose with no brand (`brand: null`), for the platform: it then names the
// brand on each request (api-keys/acting-brand.ts).

/** Who acts, as the audit trail names them. */
export type KeyActor = Pick<NewOperatorAction, 'operatorId' | 'operatorEmail' | 'operatorRole'>;

export const keyStatuses = ['active', 'expired', 'revoked'] as const;
export type KeyStatus = (typeof keyStatuses)[number];

export function statusOf(k: Pick<ApiKeyRow, 'revokedAt' | 'expiresAt'>, now = Date.now()): KeyStatus {
  if (k.revokedAt) return 'revoked';
  if (k.expiresAt && Date.parse(k.expiresAt) <= now) return 'expired';
  return 'active';
}

/** The key as the audit trail keeps it (`brand` null: a platform key). */
const auditView = (k: ApiKeyRow) => ({
  status: statusOf(k),
  name: k.name,
  scopes: k.scopes,
  brand: k.brandId,
  prefix: k.prefix,
  expiresAt: k.expiresAt,
});

export interface CreatedKey {
  key: ApiKeyRow;
  /** Shown once, stored nowhere. */
  secret: string;
}

/** The brand a key was to be made for does not exist: nothing was made. */
export class KeyBrandNotFound extends Error {
  constructor(readonly brand: string) {
    super(`no brand ${brand}`);
  }
}

const FOREIGN_KEY_VIOLATION = '23503';

/**
 * Makes a key for `brand` (the default brand when not given), or for the platform when `brand` is
 * null; KeyBrandNotFound for no such brand.
 */
export async function createKey(
  pool: Pool,
  actor: KeyActor,
  k: { name: string; scopes: Scope[]; brand?: string | null; expiresAt: Date | null },
): Promise<CreatedKey> {
  const fresh = newSecret();
  const brand = k.brand === undefined ? DEFAULT_BRAND : k.brand;
  return inTransaction(pool, async (db) => {
    const key = await insertApiKey(db, {
      id: newKeyId(),
      name: k.name,
      scopes: normalizeScopes(k.scopes),
      brandId: brand,
      prefix: fresh.prefix,
      secretHash: fresh.digest,
      createdBy: actor.operatorEmail,
      expiresAt: k.expiresAt,
    }).catch((err: unknown) => {
      if ((err as { code?: string }).code === FOREIGN_KEY_VIOLATION && brand !== null)
        throw new KeyBrandNotFound(brand);
      throw err;
    });
    await recordAction(db, {
      ...actor,
      action: 'api_key.create',
      outcome: 'done',
      caseType: 'api_key',
      caseId: key.id,
      after: auditView(key),
    });
    return { key, secret: fresh.secret };
  });
}

/** A new secret for the key (same id, so it keeps what it owns); undefined for no live such key. */
export async function rotateKey(
  pool: Pool,
  actor: KeyActor,
  id: string,
  overlapMs: number,
): Promise<CreatedKey | undefined> {
  const fresh = newSecret();
  return inTransaction(pool, async (db) => {
    const before = await getApiKey(db, id);
    const key = await rotateApiKey(db, id, { prefix: fresh.prefix, secretHash: fresh.digest }, overlapMs);
    if (!before || !key) return undefined;
    await recordAction(db, {
      ...actor,
      action: 'api_key.rotate',
      outcome: 'done',
      caseType: 'api_key',
      caseId: id,
      before: auditView(before),
      after: { ...auditView(key), previousSecretUntil: key.previousSecretUntil },
    });
    return { key, secret: fresh.secret };
  });
}

/** Revokes the key; undefined when there is no such key or it was revoked already. */
export async function revokeKey(pool: Pool, actor: KeyActor, id: string): Promise<ApiKeyRow | undefined> {
  return inTransaction(pool, async (db) => {
    const before = await getApiKey(db, id);
    const key = await revokeApiKey(db, id);
    if (!before || !key) return undefined;
    await recordAction(db, {
      ...actor,
      action: 'api_key.revoke',
      outcome: 'done',
      caseType: 'api_key',
      caseId: id,
      before: auditView(before),
      after: auditView(key),
    });
    return key;
  });
}

export { listApiKeys as listKeys };
