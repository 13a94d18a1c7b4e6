import type pg from 'pg';
import { isoSql } from './events';

// API key records (migrations 1732000000016 and 033, the brand a key acts for). Secrets arrive as
// their SHA-256 only; what leaves never holds one.

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

export interface ApiKeyRow {
  id: string;
  name: string;
  scopes: string[];
  /** The brand the key acts for; null for a platform key, which names one on each request. */
  brandId: string | null;
  prefix: string;
  createdAt: string;
  createdBy: string;
  rotatedAt: string | null;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  previousSecretUntil: string | null;
}

const columns = `id, name, scopes, brand_id, prefix, created_by, ${isoSql('created_at')} AS created_at,
  ${isoSql('rotated_at')} AS rotated_at, ${isoSql('last_used_at')} AS last_used_at,
  ${isoSql('expires_at')} AS expires_at, ${isoSql('revoked_at')} AS revoked_at,
  ${isoSql('previous_secret_until')} AS previous_secret_until`;

function keyOf(r: Record<string, unknown>): ApiKeyRow {
  return {
    id: r.id as string,
    name: r.name as string,
    scopes: r.scopes as string[],
    brandId: (r.brand_id as string | null) ?? null,
    prefix: r.prefix as string,
    createdAt: r.created_at as string,
    createdBy: r.created_by as string,
    rotatedAt: (r.rotated_at as string | null) ?? null,
    lastUsedAt: (r.last_used_at as string | null) ?? null,
    expiresAt: (r.expires_at as string | null) ?? null,
    revokedAt: (r.revoked_at as string | null) ?? null,
    previousSecretUntil: (r.previous_secret_until as string | null) ?? null,
  };
}

export interface NewApiKey {
  id: string;
  name: string;
  scopes: string[];
  /** Null only for a platform key, made on purpose. */
  brandId: string | null;
  prefix: string;
  secretHash: Buffer;
  createdBy: string;
  expiresAt: Date | null;
}

export async function insertApiKey(db: Queryable, k: NewApiKey): Promise<ApiKeyRow> {
  const { rows } = await db.query(
    `INSERT INTO api_keys (id, name, scopes, brand_id, prefix, secret_hash, created_by, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${columns}`,
    [k.id, k.name, k.scopes, k.brandId, k.prefix, k.secretHash, k.createdBy, k.expiresAt],
  );
  return keyOf(rows[0]);
}

export async function listApiKeys(db: Queryable): Promise<ApiKeyRow[]> {
  const { rows } = await db.query(`SELECT ${columns} FROM api_keys ORDER BY created_at, id`);
  return rows.map(keyOf);
}

export async function getApiKey(db: Queryable, id: string): Promise<ApiKeyRow | undefined> {
  const { rows } = await db.query(`SELECT ${columns} FROM api_keys WHERE id = $1`, [id]);
  return rows[0] ? keyOf(rows[0]) : undefined;
}

/** The key a secret's hash belongs to, as its current secret or as a rotated-out one. */
export interface KeyBySecret extends ApiKeyRow {
  /** Whether the hash is the previous secret's (it works until previousSecretUntil). */
  previous: boolean;
}

export async function findApiKeyBySecret(
  db: Queryable,
  secretHash: Buffer,
): Promise<KeyBySecret | undefined> {
  const { rows } = await db.query(
    `SELECT ${columns}, secret_hash <> $1 AS previous FROM api_keys
      WHERE secret_hash = $1 OR previous_secret_hash = $1`,
    [secretHash],
  );
  return rows[0] ? { ...keyOf(rows[0]), previous: rows[0].previous as boolean } : undefined;
}

/**
 * A new secret for a live key; the one it replaces keeps working for `overlapMs` (none when 0).
 * Undefined when there is no such key, or it is revoked.
 */
export async function rotateApiKey(
  db: Queryable,
  id: string,
  next: { prefix: string; secretHash: Buffer },
  overlapMs: number,
): Promise<ApiKeyRow | undefined> {
  const { rows } = await db.query(
    `UPDATE api_keys
        SET previous_secret_hash = CASE WHEN $4::bigint > 0 THEN secret_hash END,
            previous_secret_until = CASE WHEN $4::bigint > 0 THEN now() + $4::bigint * interval '1 millisecond' END,
            secret_hash = $2, prefix = $3, rotated_at = now()
      WHERE id = $1 AND revoked_at IS NULL RETURNING ${columns}`,
    [id, next.secretHash, next.prefix, overlapMs],
  );
  return rows[0] ? keyOf(rows[0]) : undefined;
}

/** Revokes a key that is not revoked yet; undefined when there is none such. */
export async function revokeApiKey(db: Queryable, id: string): Promise<ApiKeyRow | undefined> {
  const { rows } = await db.query(
    `UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING ${columns}`,
    [id],
  );
  return rows[0] ? keyOf(rows[0]) : undefined;
}

/** Stamps the key as used; a no-op within a minute of the last stamp (from any process). */
export async function touchApiKey(db: Queryable, id: string): Promise<void> {
  await db.query(
    `UPDATE api_keys SET last_used_at = now()
      WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
    [id],
  );
}

/** Whether any key record could still authenticate (not revoked, not expired). */
export async function anyUsableApiKey(db: Queryable): Promise<boolean> {
  const { rows } = await db.query(
    'SELECT 1 FROM api_keys WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now()) LIMIT 1',
  );
  return rows.length > 0;
}
