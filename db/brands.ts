import type pg from 'pg';
import { recordAction } from './operator-actions';
import { inTransaction, type Pool } from './pool';

// The brands (docs/brands.md): read, created and changed by admins, each change in the audit
// trail in the same transaction as the row it changed. The callers check the values (the
// schemas in contracts/brand.ts); the table's checks hold them too.

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

export interface BrandRow {
  id: string;
  name: string;
  legalName: string | null;
  cnpj: string | null;
  authorization: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The fields a brand is created with (its id aside) or an update sets. */
export interface BrandFields {
  name?: string;
  legalName?: string;
  cnpj?: string;
  authorization?: string;
}

/** Who creates or changes a brand, as the audit trail names them. */
export interface BrandActor {
  operatorId: number | null;
  operatorEmail: string;
  operatorRole: string | null;
}

export class BrandExists extends Error {
  constructor(readonly id: string) {
    super(`a brand ${id} exists already`);
  }
}

export class BrandNotFound extends Error {
  constructor(readonly id: string) {
    super(`no brand ${id}`);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: a pg row
const brandOf = (r: any): BrandRow => ({
  id: r.id,
  name: r.name,
  legalName: r.legal_name,
  cnpj: r.cnpj,
  authorization: r.authorization,
  createdAt: (r.created_at as Date).toISOString(),
  updatedAt: (r.updated_at as Date).toISOString(),
});

/** What the audit trail keeps of a brand: its fields, not its timestamps. */
const audited = (b: BrandRow) => ({
  id: b.id,
  name: b.name,
  legalName: b.legalName,
  cnpj: b.cnpj,
  authorization: b.authorization,
});

const COLUMNS = 'id, name, legal_name, cnpj, "authorization", created_at, updated_at';

/** Every brand, by id. */
export async function listBrands(db: Queryable): Promise<BrandRow[]> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM brands ORDER BY id`);
  return rows.map(brandOf);
}

export async function getBrand(db: Queryable, id: string): Promise<BrandRow | undefined> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM brands WHERE id = $1`, [id]);
  return rows[0] ? brandOf(rows[0]) : undefined;
}

/** Creates a brand and its `brand.create` audit row; BrandExists when its id is taken. */
export async function createBrand(
  pool: Pool,
  actor: BrandActor,
  brand: BrandFields & { id: string; name: string },
): Promise<BrandRow> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query(
      `INSERT INTO brands (id, name, legal_name, cnpj, "authorization") VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (id) DO NOTHING RETURNING ${COLUMNS}`,
      [brand.id, brand.name, brand.legalName ?? null, brand.cnpj ?? null, brand.authorization ?? null],
    );
    if (!rows[0]) throw new BrandExists(brand.id);
    const created = brandOf(rows[0]);
    await recordAction(client, {
      ...actor,
      action: 'brand.create',
      outcome: 'done',
      caseType: 'brand',
      caseId: created.id,
      after: audited(created),
    });
    return created;
  });
}

/**
 * Sets the fields `patch` names (the id never changes) and writes the `brand.update` audit row
 * with the brand before and after. The row is held for the transaction, so two updates at once
 * apply one after the other, each audited against what the other left. BrandNotFound when there
 * is no such brand; `changed: false`, and nothing written, when the patch changes nothing.
 */
export async function updateBrand(
  pool: Pool,
  actor: BrandActor,
  id: string,
  patch: BrandFields,
): Promise<{ brand: BrandRow; changed: boolean }> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query(`SELECT ${COLUMNS} FROM brands WHERE id = $1 FOR UPDATE`, [id]);
    if (!rows[0]) throw new BrandNotFound(id);
    const before = brandOf(rows[0]);
    const next = {
      name: patch.name ?? before.name,
      legalName: patch.legalName ?? before.legalName,
      cnpj: patch.cnpj ?? before.cnpj,
      authorization: patch.authorization ?? before.authorization,
    };
    const same = Object.entries(next).every(([k, v]) => before[k as keyof typeof next] === v);
    if (same) return { brand: before, changed: false };
    const { rows: updated } = await client.query(
      `UPDATE brands SET name = $2, legal_name = $3, cnpj = $4, "authorization" = $5, updated_at = clock_timestamp()
        WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, next.name, next.legalName, next.cnpj, next.authorization],
    );
    const after = brandOf(updated[0]);
    await recordAction(client, {
      ...actor,
      action: 'brand.update',
      outcome: 'done',
      caseType: 'brand',
      caseId: id,
      before: audited(before),
      after: audited(after),
    });
    return { brand: after, changed: true };
  });
}
