import type pg from 'pg';

// The brands that know each person (migration customer_brands; docs/brands.md, "People a brand
// knows"). The person's verification, limits and accounts are shared by the brands
// (docs/rules.md, "A person across brands"); a brand sees the person, and moves their money,
// only once it has met them by starting an onboarding for them. Keyed by the CPF's hash.

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** The brand meets the person: idempotent, the first meeting's time kept. */
export async function meetCustomer(db: Queryable, cpfHash: string, brandId: string): Promise<void> {
  await db.query(
    'INSERT INTO customer_brands (cpf_hash, brand_id) VALUES ($1, $2) ON CONFLICT (cpf_hash, brand_id) DO NOTHING',
    [cpfHash, brandId],
  );
}

/** Whether the brand has met the person. */
export async function knowsCustomer(db: Queryable, cpfHash: string, brandId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM customer_brands WHERE cpf_hash = $1 AND brand_id = $2', [
    cpfHash,
    brandId,
  ]);
  return rows.length > 0;
}

/** The brands that know the person, in id order (none for a person no brand met). */
export async function brandsKnowing(db: Queryable, cpfHash: string): Promise<string[]> {
  const { rows } = await db.query<{ brand_id: string }>(
    'SELECT brand_id FROM customer_brands WHERE cpf_hash = $1 ORDER BY brand_id',
    [cpfHash],
  );
  return rows.map((r) => r.brand_id);
}

/**
 * SQL that holds when the brand (`brandParam`, a text parameter) knows the person whose hash is in
 * `cpfColumn`, for a list filtered by the acting brand.
 */
export const knownByBrandSql = (brandParam: string, cpfColumn: string) =>
  `EXISTS (SELECT 1 FROM customer_brands cb WHERE cb.cpf_hash = ${cpfColumn} AND cb.brand_id = ${brandParam})`;
