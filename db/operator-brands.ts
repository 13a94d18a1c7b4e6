import type pg from 'pg';
import { recordAction } from './operator-actions';
import { inTransaction, type Pool } from './pool';

// The brands each back-office operator sees and decides (migration operator_brands; docs/brands.md,
// "Operators and their brands"). An admin sees every brand whatever is granted; anyone else sees
// the deposits and withdrawals of the brands granted to them, and what every brand shares (people,
// their onboardings and biometric identifications). Granting and revoking are an admin's, each a
// row of the audit trail in the same transaction.

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** The brands an operator may see: every one (an admin), or these. */
export type GrantedBrands = 'all' | readonly string[];

/** The SQL parameter the filters take: null for every brand. */
export const brandsParam = (g: GrantedBrands): string[] | null => (g === 'all' ? null : [...g]);

/**
 * Whether a flows row (alias `f`) is one an operator of these brands (`p`, a `text[]` parameter,
 * null for every brand) may see: a deposit or withdrawal of theirs, or what every brand shares.
 */
export const flowVisibleSql = (p: string, alias = 'f') =>
  `(${p}::text[] IS NULL OR ${alias}.type NOT IN ('deposit', 'withdrawal') OR ${alias}.brand_id = ANY(${p}::text[]))`;

/** The same for a row naming a flow by its workflow id (an alert, a reversal). */
export const flowIdVisibleSql = (p: string, column: string) =>
  `(${p}::text[] IS NULL OR pixflow_flow_brand(${column}) IS NULL OR pixflow_flow_brand(${column}) = ANY(${p}::text[]))`;

/** Whether a flow of this type and brand is one these grants see. */
export function maySeeFlow(g: GrantedBrands, flow: { type: string; brandId: string }): boolean {
  if (g === 'all' || (flow.type !== 'deposit' && flow.type !== 'withdrawal')) return true;
  return g.includes(flow.brandId);
}

/** The brands granted to an operator, by id, in id order. */
export async function grantedBrands(db: Queryable, operatorId: number): Promise<string[]> {
  const { rows } = await db.query<{ brand_id: string }>(
    'SELECT brand_id FROM operator_brands WHERE operator_id = $1 ORDER BY brand_id',
    [operatorId],
  );
  return rows.map((r) => r.brand_id);
}

/** Every operator with the brands granted to them, by address. */
export async function listOperatorGrants(
  db: Queryable,
): Promise<
  Array<{ id: number; email: string; name: string; role: string; disabled: boolean; brands: string[] }>
> {
  const { rows } = await db.query(
    `SELECT o.id, o.email, o.name, o.role, o.disabled_at IS NOT NULL AS disabled,
            coalesce(array_agg(g.brand_id ORDER BY g.brand_id) FILTER (WHERE g.brand_id IS NOT NULL), '{}') AS brands
       FROM operators o LEFT JOIN operator_brands g ON g.operator_id = o.id
      GROUP BY o.id ORDER BY o.email`,
  );
  return rows.map((r) => ({
    id: Number(r.id),
    email: r.email,
    name: r.name,
    role: r.role,
    disabled: r.disabled,
    brands: r.brands,
  }));
}

/** Who grants or revokes, as the audit trail names them. */
export interface GrantActor {
  operatorId: number | null;
  operatorEmail: string;
  operatorRole: string | null;
}

export class GrantTargetNotFound extends Error {
  constructor(readonly what: 'operator' | 'brand') {
    super(what === 'operator' ? 'no such operator' : 'no such brand');
  }
}

/**
 * Grants or revokes one brand to the operator of this address, with its audit row
 * (`operator.brand.grant` / `operator.brand.revoke`, the operator's brands before and after) in the
 * same transaction; the operator's row is held, so two changes apply one after the other.
 * `changed: false`, and nothing written, when it was already so. GrantTargetNotFound when the
 * operator or the brand does not exist.
 */
export async function changeGrant(
  pool: Pool,
  actor: GrantActor,
  change: { email: string; brand: string; grant: boolean },
): Promise<{ changed: boolean; brands: string[] }> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<{ id: string; email: string }>(
      'SELECT id, email FROM operators WHERE email = lower($1) FOR UPDATE',
      [change.email],
    );
    const target = rows[0];
    if (!target) throw new GrantTargetNotFound('operator');
    const brand = await client.query('SELECT 1 FROM brands WHERE id = $1', [change.brand]);
    if (!brand.rowCount) throw new GrantTargetNotFound('brand');
    const id = Number(target.id);
    const before = await grantedBrands(client, id);
    const { rowCount } = change.grant
      ? await client.query(
          'INSERT INTO operator_brands (operator_id, brand_id) VALUES ($1, $2) ON CONFLICT DO NOTHING',
          [id, change.brand],
        )
      : await client.query('DELETE FROM operator_brands WHERE operator_id = $1 AND brand_id = $2', [
          id,
          change.brand,
        ]);
    if (!rowCount) return { changed: false, brands: before };
    const after = await grantedBrands(client, id);
    await recordAction(client, {
      ...actor,
      action: change.grant ? 'operator.brand.grant' : 'operator.brand.revoke',
      outcome: 'done',
      caseType: 'operator',
      caseId: target.email,
      before: { brands: before },
      after: { brand: change.brand, brands: after },
    });
    return { changed: true, brands: after };
  });
}
