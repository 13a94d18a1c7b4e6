// Over 400 lines on purpose: the operator's policy versions and changes and a brand's overrides
// are kept side by side, with the same shapes, so that one lock order serves both.
import type pg from 'pg';
import { type Listener, listenOn } from './listen';
import { lockUntilCommit } from './locks';
import type { Pool } from './pool';

// The rules policy's versions and the changes waiting for a second admin (docs/policy.md). The
// policy is stored as written, jsonb; policy/ checks it against its schema on each read.

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** The channel a new version is announced on (the migration's trigger). */
export const POLICY_CHANNEL = 'pixflow_policy';

/** Who wrote the seeded first version. */
export const SEEDED_BY = 'environment';

export interface PolicyVersionRow {
  version: number;
  policy: unknown;
  reason: string;
  changedBy: string;
  approvedBy: string | null;
  createdAt: string;
}

// biome-ignore lint/suspicious/noExplicitAny: a pg row
const versionOf = (r: any): PolicyVersionRow => ({
  version: r.version,
  policy: r.policy,
  reason: r.reason,
  changedBy: r.changed_by,
  approvedBy: r.approved_by,
  createdAt: (r.created_at as Date).toISOString(),
});

const VERSION_COLUMNS = 'version, policy, reason, changed_by, approved_by, created_at';

/** The version in force: the newest. */
export async function latestPolicyVersion(db: Queryable): Promise<PolicyVersionRow | undefined> {
  const { rows } = await db.query(
    `SELECT ${VERSION_COLUMNS} FROM rules_policy ORDER BY version DESC LIMIT 1`,
  );
  return rows[0] ? versionOf(rows[0]) : undefined;
}

export async function getPolicyVersion(
  db: Queryable,
  version: number,
): Promise<PolicyVersionRow | undefined> {
  const { rows } = await db.query(`SELECT ${VERSION_COLUMNS} FROM rules_policy WHERE version = $1`, [
    version,
  ]);
  return rows[0] ? versionOf(rows[0]) : undefined;
}

/** The versions, newest first. */
export async function listPolicyVersions(db: Queryable, limit: number): Promise<PolicyVersionRow[]> {
  const { rows } = await db.query(
    `SELECT ${VERSION_COLUMNS} FROM rules_policy ORDER BY version DESC LIMIT $1`,
    [limit],
  );
  return rows.map(versionOf);
}

/**
 * Writes version 1 unless one exists: any number of processes starting at once write one, and
 * the others keep theirs unwritten. Whether this one was written.
 */
export async function seedPolicyVersion(db: Queryable, policy: unknown, reason: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO rules_policy (version, policy, reason, changed_by) VALUES (1, $1, $2, $3)
     ON CONFLICT (version) DO NOTHING`,
    [JSON.stringify(policy), reason, SEEDED_BY],
  );
  return rowCount === 1;
}

/**
 * Holds the versions for one transaction's change, across processes (reads go on): a second
 * change waits, then sees the version the first wrote. The version in force, as of the lock.
 */
export async function lockPolicyVersions(client: pg.PoolClient): Promise<PolicyVersionRow | undefined> {
  await lockUntilCommit(client, 'pixflow rules_policy change');
  return latestPolicyVersion(client);
}

/** Adds a version (under lockPolicyVersions, the next number); every process is told. */
export async function insertPolicyVersion(
  client: pg.PoolClient,
  v: { version: number; policy: unknown; reason: string; changedBy: string; approvedBy?: string },
): Promise<void> {
  await client.query(
    `INSERT INTO rules_policy (version, policy, reason, changed_by, approved_by) VALUES ($1, $2, $3, $4, $5)`,
    [v.version, JSON.stringify(v.policy), v.reason, v.changedBy, v.approvedBy ?? null],
  );
}

export const policyChangeStatuses = ['pending', 'applied', 'rejected'] as const;
export type PolicyChangeStatus = (typeof policyChangeStatuses)[number];

export interface PolicyChangeRow {
  id: number;
  baseVersion: number;
  policy: unknown;
  reason: string;
  proposedBy: string;
  proposedAt: string;
  status: PolicyChangeStatus;
  decidedBy: string | null;
  decidedAt: string | null;
  version: number | null;
}

// biome-ignore lint/suspicious/noExplicitAny: a pg row
const changeOf = (r: any): PolicyChangeRow => ({
  id: Number(r.id),
  baseVersion: r.base_version,
  policy: r.policy,
  reason: r.reason,
  proposedBy: r.proposed_by,
  proposedAt: (r.proposed_at as Date).toISOString(),
  status: r.status,
  decidedBy: r.decided_by,
  decidedAt: r.decided_at ? (r.decided_at as Date).toISOString() : null,
  version: r.version,
});

const CHANGE_COLUMNS =
  'id, base_version, policy, reason, proposed_by, proposed_at, status, decided_by, decided_at, version';

/** A change that waits for a second admin; its id. */
export async function insertPolicyChange(
  db: Queryable,
  c: { baseVersion: number; policy: unknown; reason: string; proposedBy: string },
): Promise<number> {
  const { rows } = await db.query(
    `INSERT INTO rules_policy_changes (base_version, policy, reason, proposed_by) VALUES ($1, $2, $3, $4)
     RETURNING id`,
    [c.baseVersion, JSON.stringify(c.policy), c.reason, c.proposedBy],
  );
  return Number(rows[0].id);
}

/** One change; `lock` holds it for this transaction's decision. */
export async function getPolicyChange(
  db: Queryable,
  id: number,
  lock = false,
): Promise<PolicyChangeRow | undefined> {
  const { rows } = await db.query(
    `SELECT ${CHANGE_COLUMNS} FROM rules_policy_changes WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
    [id],
  );
  return rows[0] ? changeOf(rows[0]) : undefined;
}

/** The changes waiting for a second admin, oldest first. */
export async function pendingPolicyChanges(db: Queryable): Promise<PolicyChangeRow[]> {
  const { rows } = await db.query(
    `SELECT ${CHANGE_COLUMNS} FROM rules_policy_changes WHERE status = 'pending' ORDER BY proposed_at, id`,
  );
  return rows.map(changeOf);
}

/** The changes that waited, decided or not, newest first. */
export async function listPolicyChanges(db: Queryable, limit: number): Promise<PolicyChangeRow[]> {
  const { rows } = await db.query(
    `SELECT ${CHANGE_COLUMNS} FROM rules_policy_changes ORDER BY id DESC LIMIT $1`,
    [limit],
  );
  return rows.map(changeOf);
}

/** Decides a pending change (held by getPolicyChange's lock); whether it was still pending. */
export async function decidePolicyChange(
  client: pg.PoolClient,
  id: number,
  d: { status: 'applied' | 'rejected'; decidedBy: string; version?: number },
): Promise<boolean> {
  const { rowCount } = await client.query(
    `UPDATE rules_policy_changes SET status = $2, decided_by = $3, decided_at = clock_timestamp(), version = $4
      WHERE id = $1 AND status = 'pending'`,
    [id, d.status, d.decidedBy, d.version ?? null],
  );
  return rowCount === 1;
}

export type PolicyListener = Listener;

/**
 * Calls `onChange` on each new version's notification, on a connection of its own (the pool's
 * settings), and once each time it listens (again), for the versions written while it did not.
 * A lost connection is made again after `retryMs`.
 */
export function listenForPolicy(
  pool: Pool,
  onChange: () => void,
  onLost: (err: unknown) => void,
  retryMs = 1_000,
): PolicyListener {
  return listenOn(pool, POLICY_CHANNEL, onChange, onLost, retryMs);
}

// A brand's overrides over the operator's policy (migration 039): versions per brand, only added,
// and the changes waiting for a second admin.

export interface BrandPolicyVersionRow {
  brand: string;
  version: number;
  overrides: unknown;
  reason: string;
  changedBy: string;
  approvedBy: string | null;
  createdAt: string;
}

// biome-ignore lint/suspicious/noExplicitAny: a pg row
const brandVersionOf = (r: any): BrandPolicyVersionRow => ({
  brand: r.brand_id,
  version: r.version,
  overrides: r.overrides,
  reason: r.reason,
  changedBy: r.changed_by,
  approvedBy: r.approved_by,
  createdAt: (r.created_at as Date).toISOString(),
});

const BRAND_VERSION_COLUMNS = 'brand_id, version, overrides, reason, changed_by, approved_by, created_at';

/** Each brand's version in force: its newest. */
export async function latestBrandPolicyVersions(db: Queryable): Promise<BrandPolicyVersionRow[]> {
  const { rows } = await db.query(
    `SELECT DISTINCT ON (brand_id) ${BRAND_VERSION_COLUMNS} FROM brand_policy_versions
      ORDER BY brand_id, version DESC`,
  );
  return rows.map(brandVersionOf);
}

/** A brand's version in force; none: the brand has the operator's policy. */
export async function latestBrandPolicyVersion(
  db: Queryable,
  brand: string,
): Promise<BrandPolicyVersionRow | undefined> {
  const { rows } = await db.query(
    `SELECT ${BRAND_VERSION_COLUMNS} FROM brand_policy_versions WHERE brand_id = $1
      ORDER BY version DESC LIMIT 1`,
    [brand],
  );
  return rows[0] ? brandVersionOf(rows[0]) : undefined;
}

/** A brand's versions, newest first. */
export async function listBrandPolicyVersions(
  db: Queryable,
  brand: string,
  limit: number,
): Promise<BrandPolicyVersionRow[]> {
  const { rows } = await db.query(
    `SELECT ${BRAND_VERSION_COLUMNS} FROM brand_policy_versions WHERE brand_id = $1
      ORDER BY version DESC LIMIT $2`,
    [brand, limit],
  );
  return rows.map(brandVersionOf);
}

/** One of a brand's versions. */
export async function getBrandPolicyVersion(
  db: Queryable,
  brand: string,
  version: number,
): Promise<BrandPolicyVersionRow | undefined> {
  const { rows } = await db.query(
    `SELECT ${BRAND_VERSION_COLUMNS} FROM brand_policy_versions WHERE brand_id = $1 AND version = $2`,
    [brand, version],
  );
  return rows[0] ? brandVersionOf(rows[0]) : undefined;
}

/** Whether the brand exists. */
export async function brandExists(db: Queryable, brand: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM brands WHERE id = $1', [brand]);
  return rowCount === 1;
}

/**
 * Holds a brand's versions for one transaction's change, across processes: a second change of
 * that brand waits, then sees the version the first wrote. The brand's version in force.
 */
export async function lockBrandPolicyVersions(
  client: pg.PoolClient,
  brand: string,
): Promise<BrandPolicyVersionRow | undefined> {
  await lockUntilCommit(client, `pixflow brand_policy change ${brand}`);
  return latestBrandPolicyVersion(client, brand);
}

/** Adds a brand's version (under lockBrandPolicyVersions, its next number); every process is told. */
export async function insertBrandPolicyVersion(
  client: pg.PoolClient,
  v: {
    brand: string;
    version: number;
    overrides: unknown;
    reason: string;
    changedBy: string;
    approvedBy?: string;
  },
): Promise<void> {
  await client.query(
    `INSERT INTO brand_policy_versions (brand_id, version, overrides, reason, changed_by, approved_by)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [v.brand, v.version, JSON.stringify(v.overrides), v.reason, v.changedBy, v.approvedBy ?? null],
  );
}

export interface BrandPolicyChangeRow {
  id: number;
  brand: string;
  baseVersion: number;
  baseOperatorVersion: number;
  overrides: unknown;
  reason: string;
  proposedBy: string;
  proposedAt: string;
  status: PolicyChangeStatus;
  decidedBy: string | null;
  decidedAt: string | null;
  version: number | null;
}

// biome-ignore lint/suspicious/noExplicitAny: a pg row
const brandChangeOf = (r: any): BrandPolicyChangeRow => ({
  id: Number(r.id),
  brand: r.brand_id,
  baseVersion: r.base_version,
  baseOperatorVersion: r.base_operator_version,
  overrides: r.overrides,
  reason: r.reason,
  proposedBy: r.proposed_by,
  proposedAt: (r.proposed_at as Date).toISOString(),
  status: r.status,
  decidedBy: r.decided_by,
  decidedAt: r.decided_at ? (r.decided_at as Date).toISOString() : null,
  version: r.version,
});

const BRAND_CHANGE_COLUMNS =
  'id, brand_id, base_version, base_operator_version, overrides, reason, proposed_by, proposed_at, status, decided_by, decided_at, version';

/** A brand's change that waits for a second admin; its id. */
export async function insertBrandPolicyChange(
  db: Queryable,
  c: {
    brand: string;
    baseVersion: number;
    baseOperatorVersion: number;
    overrides: unknown;
    reason: string;
    proposedBy: string;
  },
): Promise<number> {
  const { rows } = await db.query(
    `INSERT INTO brand_policy_changes (brand_id, base_version, base_operator_version, overrides, reason, proposed_by)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
    [c.brand, c.baseVersion, c.baseOperatorVersion, JSON.stringify(c.overrides), c.reason, c.proposedBy],
  );
  return Number(rows[0].id);
}

/** One brand's change; `lock` holds it for this transaction's decision. */
export async function getBrandPolicyChange(
  db: Queryable,
  id: number,
  lock = false,
): Promise<BrandPolicyChangeRow | undefined> {
  const { rows } = await db.query(
    `SELECT ${BRAND_CHANGE_COLUMNS} FROM brand_policy_changes WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
    [id],
  );
  return rows[0] ? brandChangeOf(rows[0]) : undefined;
}

/** A brand's changes waiting for a second admin, oldest first. */
export async function pendingBrandPolicyChanges(
  db: Queryable,
  brand: string,
): Promise<BrandPolicyChangeRow[]> {
  const { rows } = await db.query(
    `SELECT ${BRAND_CHANGE_COLUMNS} FROM brand_policy_changes WHERE brand_id = $1 AND status = 'pending'
      ORDER BY proposed_at, id`,
    [brand],
  );
  return rows.map(brandChangeOf);
}

/** Decides a brand's pending change (held by getBrandPolicyChange's lock); whether it was pending. */
export async function decideBrandPolicyChange(
  client: pg.PoolClient,
  id: number,
  d: { status: 'applied' | 'rejected'; decidedBy: string; version?: number },
): Promise<boolean> {
  const { rowCount } = await client.query(
    `UPDATE brand_policy_changes SET status = $2, decided_by = $3, decided_at = clock_timestamp(), version = $4
      WHERE id = $1 AND status = 'pending'`,
    [id, d.status, d.decidedBy, d.version ?? null],
  );
  return rowCount === 1;
}
