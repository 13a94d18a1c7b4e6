import type pg from 'pg';
import { type BrandActor, BrandNotFound } from './brands';
import { recordAction } from './operator-actions';
import { inTransaction, type Pool } from './pool';

// Each brand's account at a connector (docs/brands.md, Connector accounts): set (created or
// replaced) and removed by admins, each write in the audit trail in the same transaction. The
// secrets arrive sealed, with a keyed hash of each (connectors/accounts.ts seals them and checks
// the values, contracts/brand-account.ts); they leave sealed through sealedBrandAccounts alone,
// the read that builds a brand's connectors. Every other read says which secrets are set, never
// what they are, and so does the audit trail.

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** An account as it is stored: the secrets sealed, and a keyed hash of each by its name. */
export interface SealedBrandAccount {
  brandId: string;
  connector: string;
  settings: Record<string, unknown>;
  secretsSealed: string;
  secretHashes: Record<string, string>;
}

/** An account as shown: its settings and the names of the secrets it has. */
export interface BrandAccountRow {
  brandId: string;
  connector: string;
  settings: Record<string, unknown>;
  secretsSet: string[];
  createdAt: string;
  updatedAt: string;
}

/** Which value another brand's account holds already: the one that routes a notification to a brand. */
export type ClashingField = 'partnerId' | 'webhookSecret' | 'pixKey';

export class BrandAccountClash extends Error {
  constructor(
    readonly connector: string,
    readonly field: ClashingField,
  ) {
    super(`another brand's ${connector} account has this ${field} already`);
  }
}

const CLASH_OF_INDEX: Record<string, ClashingField> = {
  brand_connector_accounts_partner_id: 'partnerId',
  brand_connector_accounts_webhook_secret: 'webhookSecret',
  brand_connector_accounts_pix_key: 'pixKey',
};

// biome-ignore lint/suspicious/noExplicitAny: a pg row
const accountOf = (r: any): BrandAccountRow => ({
  brandId: r.brand_id,
  connector: r.connector,
  settings: r.settings,
  secretsSet: Object.keys(r.secret_hashes),
  createdAt: (r.created_at as Date).toISOString(),
  updatedAt: (r.updated_at as Date).toISOString(),
});

const SHOWN = 'brand_id, connector, settings, secret_hashes, created_at, updated_at';

/** What the audit trail keeps of an account: its settings, and "set" for each secret it has. */
const audited = (connector: string, settings: Record<string, unknown>, hashes: Record<string, string>) => ({
  connector,
  settings,
  secrets: Object.fromEntries(Object.keys(hashes).map((name) => [name, 'set'])),
});

/** Each secret after a change: "set" when new, "changed" or "unchanged" against the one before. */
const secretsAfter = (before: Record<string, string> | undefined, after: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(after).map(([name, hash]) => [
      name,
      before?.[name] === undefined ? 'set' : before[name] === hash ? 'unchanged' : 'changed',
    ]),
  );

const sameJson = (a: unknown, b: unknown) => JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
const sorted = (v: unknown): unknown =>
  v && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(
        Object.entries(v)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([k, x]) => [k, sorted(x)]),
      )
    : v;

/** Holds the brand for the transaction, so writes to its accounts apply one after the other. */
async function lockBrand(client: pg.PoolClient, brandId: string) {
  const { rowCount } = await client.query('SELECT 1 FROM brands WHERE id = $1 FOR UPDATE', [brandId]);
  if (!rowCount) throw new BrandNotFound(brandId);
}

/**
 * Creates the brand's account at `account.connector`, or replaces the one it has, with its
 * `brand.account.set` audit row (settings before and after; each secret "set", "changed" or
 * "unchanged", never a value). BrandNotFound when there is no such brand; BrandAccountClash when
 * another brand's account has its partner id, webhook secret or Pix key; `changed: false`, and
 * nothing written, when the account reads so already.
 */
export async function setBrandAccount(
  pool: Pool,
  actor: BrandActor,
  account: SealedBrandAccount,
): Promise<{ account: BrandAccountRow; created: boolean; changed: boolean }> {
  return inTransaction(pool, async (client) => {
    await lockBrand(client, account.brandId);
    const { rows: found } = await client.query(
      `SELECT ${SHOWN} FROM brand_connector_accounts WHERE brand_id = $1 AND connector = $2`,
      [account.brandId, account.connector],
    );
    const before = found[0] as
      | { settings: Record<string, unknown>; secret_hashes: Record<string, string> }
      | undefined;
    if (
      before &&
      sameJson(before.settings, account.settings) &&
      sameJson(before.secret_hashes, account.secretHashes)
    )
      return { account: accountOf(found[0]), created: false, changed: false };
    let rows: unknown[];
    try {
      ({ rows } = await client.query(
        `INSERT INTO brand_connector_accounts (brand_id, connector, settings, secrets_sealed, secret_hashes)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (brand_id, connector) DO UPDATE
           SET settings = EXCLUDED.settings, secrets_sealed = EXCLUDED.secrets_sealed,
               secret_hashes = EXCLUDED.secret_hashes, updated_at = clock_timestamp()
         RETURNING ${SHOWN}`,
        [account.brandId, account.connector, account.settings, account.secretsSealed, account.secretHashes],
      ));
    } catch (err) {
      const clash = CLASH_OF_INDEX[(err as { constraint?: string }).constraint ?? ''];
      if ((err as { code?: string }).code === '23505' && clash)
        throw new BrandAccountClash(account.connector, clash);
      throw err;
    }
    const after = accountOf(rows[0]);
    await recordAction(client, {
      ...actor,
      action: 'brand.account.set',
      outcome: 'done',
      caseType: 'brand',
      caseId: account.brandId,
      before: before ? audited(account.connector, before.settings, before.secret_hashes) : null,
      after: {
        connector: account.connector,
        settings: account.settings,
        secrets: secretsAfter(before?.secret_hashes, account.secretHashes),
      },
    });
    return { account: after, created: !before, changed: true };
  });
}

/** The brand's account at `connector`, without its secrets; undefined when it has none. */
export async function getBrandAccount(
  db: Queryable,
  brandId: string,
  connector: string,
): Promise<BrandAccountRow | undefined> {
  const { rows } = await db.query(
    `SELECT ${SHOWN} FROM brand_connector_accounts WHERE brand_id = $1 AND connector = $2`,
    [brandId, connector],
  );
  return rows[0] ? accountOf(rows[0]) : undefined;
}

/** Every account (of one brand, when named), by brand and connector, without their secrets. */
export async function listBrandAccounts(db: Queryable, brandId?: string): Promise<BrandAccountRow[]> {
  const { rows } = await db.query(
    `SELECT ${SHOWN} FROM brand_connector_accounts WHERE $1::text IS NULL OR brand_id = $1
      ORDER BY brand_id, connector`,
    [brandId ?? null],
  );
  return rows.map(accountOf);
}

/**
 * Removes the brand's account at `connector` with its `brand.account.remove` audit row (what it
 * was, secrets as "set"). BrandNotFound when there is no such brand; false, and nothing written,
 * when it has no such account.
 */
export async function removeBrandAccount(
  pool: Pool,
  actor: BrandActor,
  brandId: string,
  connector: string,
): Promise<boolean> {
  return inTransaction(pool, async (client) => {
    await lockBrand(client, brandId);
    const { rows } = await client.query(
      `DELETE FROM brand_connector_accounts WHERE brand_id = $1 AND connector = $2
       RETURNING settings, secret_hashes`,
      [brandId, connector],
    );
    if (!rows[0]) return false;
    await recordAction(client, {
      ...actor,
      action: 'brand.account.remove',
      outcome: 'done',
      caseType: 'brand',
      caseId: brandId,
      before: audited(connector, rows[0].settings, rows[0].secret_hashes),
      after: null,
    });
    return true;
  });
}

/**
 * The brand's accounts with their secrets sealed: what builds its connectors, and nothing else
 * reads. Undefined when there is no such brand; an empty list when it has no account.
 */
export async function sealedBrandAccounts(
  db: Queryable,
  brandId: string,
): Promise<SealedBrandAccount[] | undefined> {
  const { rows } = await db.query(
    `SELECT b.id AS brand_id, a.connector, a.settings, a.secrets_sealed, a.secret_hashes
       FROM brands b LEFT JOIN brand_connector_accounts a ON a.brand_id = b.id
      WHERE b.id = $1 ORDER BY a.connector`,
    [brandId],
  );
  if (!rows.length) return undefined;
  return rows
    .filter((r) => r.connector !== null)
    .map((r) => ({
      brandId: r.brand_id,
      connector: r.connector,
      settings: r.settings,
      secretsSealed: r.secrets_sealed,
      secretHashes: r.secret_hashes,
    }));
}

/** The account a notification's path secret belongs to: its brand, and the first provider's partner id. */
export interface AccountOfSecret {
  brandId: string;
  partnerId: string | undefined;
  /** An API Pix account's webhook client CA file, when it names one. */
  webhookClientCaFile: string | undefined;
}

/**
 * The account at `connector` whose webhook secret has this keyed hash (connectors/accounts.ts
 * secretHash), by the unique index on it; undefined when no brand's has.
 */
export async function accountBySecretHash(
  db: Queryable,
  connector: string,
  hash: string,
): Promise<AccountOfSecret | undefined> {
  const { rows } = await db.query<{ brand_id: string; partner: string | null; client_ca: string | null }>(
    `SELECT brand_id, settings ->> 'partnerId' AS partner, settings ->> 'webhookClientCaFile' AS client_ca
       FROM brand_connector_accounts
      WHERE connector = $1 AND secret_hashes ? 'webhookSecret' AND secret_hashes ->> 'webhookSecret' = $2`,
    [connector, hash],
  );
  const r = rows[0];
  return r
    ? {
        brandId: r.brand_id,
        partnerId: r.partner ?? undefined,
        webhookClientCaFile: r.client_ca ?? undefined,
      }
    : undefined;
}

/**
 * Each API Pix account's webhook client CA file, by brand: what the API Pix listener trusts
 * beside the environment's client CA.
 */
export async function apiPixWebhookClientCaFiles(
  db: Queryable,
): Promise<{ brandId: string; file: string }[]> {
  const { rows } = await db.query<{ brand_id: string; file: string }>(
    `SELECT brand_id, settings ->> 'webhookClientCaFile' AS file FROM brand_connector_accounts
      WHERE connector = 'api-pix' AND settings ? 'webhookClientCaFile' ORDER BY brand_id`,
  );
  return rows.map((r) => ({ brandId: r.brand_id, file: r.file }));
}

/** Which money flows a brand has the connector accounts for (the API's door asks before starting one). */
export interface MoneyAccounts {
  /** An account at a collecting connector (either one): somewhere to charge. */
  deposit: boolean;
  /** An account at the first provider, the one that pays out. */
  withdrawal: boolean;
}

/**
 * What money flows `brandId` may start on its own accounts. The default brand may always (its
 * connectors fall back to the environment's, connectors/accounts.ts); another brand needs its own
 * record at a connector that does the flow; undefined when there is no such brand.
 */
export async function moneyAccountsOf(db: Queryable, brandId: string): Promise<MoneyAccounts | undefined> {
  // 'default' is the default brand's id, as migration 031 made it.
  const { rows } = await db.query<{ is_default: boolean; connector: string | null }>(
    `SELECT b.id = 'default' AS is_default, a.connector
       FROM brands b LEFT JOIN brand_connector_accounts a ON a.brand_id = b.id
      WHERE b.id = $1`,
    [brandId],
  );
  if (!rows.length) return undefined;
  if (rows[0]?.is_default) return { deposit: true, withdrawal: true };
  const has = new Set(rows.map((r) => r.connector));
  return {
    deposit: has.has('identity-payments') || has.has('api-pix'),
    withdrawal: has.has('identity-payments'),
  };
}
