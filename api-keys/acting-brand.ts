import { getBrandAccount, type MoneyAccounts, moneyAccountsOf } from '../db/brand-accounts';
import type { Pool } from '../db/pool';
import { Problem } from '../http/problem';

// The brand a request acts for (docs/brands.md): a brand key acts for its own brand; a platform
// key (no brand of its own) names one on every request in the Pixflow-Brand header, as a Stripe
// platform names the connected account in Stripe-Account. The rules are here, apart from where
// the key came in (the API's header, later a Nexus operation's), so each door applies the same.

/**
 * The brand every install has (contracts/brand.ts): what a key made before brands existed, a key
 * made without naming one, and a bootstrap key of API_KEYS act for.
 */
export const DEFAULT_BRAND = 'default';

/** The header a request names its brand in. */
export const BRAND_HEADER = 'Pixflow-Brand';

/**
 * The form of a brand id, as the brands table checks it (contracts/brand.ts, which API keys do not
 * import; a unit test holds the two equal): anything else is refused before any lookup.
 */
export const BRAND_ID_FORM = /^[a-z][a-z0-9-]{1,39}$/;

const brandProblem = (status: number, slug: string, title: string, reason: string) =>
  new Problem(status, slug, title, `${BRAND_HEADER}: ${reason}`, {
    invalid_params: [{ name: `header.${BRAND_HEADER}`, reason }],
  });

/** A brand id that is not a brand: a 400, never a 5xx, and the same whether the id was well formed or not. */
export const unknownBrand = (named: string) =>
  brandProblem(400, 'unknown-brand', 'Unknown brand', `no brand ${JSON.stringify(named)}`);

/**
 * What a request may act for, from the key's own brand (null: a platform key) and the header's
 * value as sent (undefined when absent): the brand, a brand still to be looked up (a platform
 * key's, which must exist), or the problem that refuses the request. A brand key never learns
 * whether another brand exists: naming any brand but its own is the same 403.
 */
export function actingBrand(
  keyBrand: string | null,
  header: string | undefined,
): { brand: string } | { lookUp: string } | { refusal: Problem } {
  const named = header?.trim();
  if (named !== undefined && !BRAND_ID_FORM.test(named)) {
    return {
      refusal: brandProblem(
        400,
        'validation-error',
        'Request validation failed',
        'must be a brand id, 2 to 40 lower-case letters, digits or hyphens, starting with a letter',
      ),
    };
  }
  if (keyBrand !== null) {
    if (named === undefined || named === keyBrand) return { brand: keyBrand };
    return {
      refusal: brandProblem(
        403,
        'brand-not-allowed',
        'Brand not allowed',
        `this API key acts for its own brand only, ${JSON.stringify(keyBrand)}`,
      ),
    };
  }
  if (named === undefined) {
    return {
      refusal: brandProblem(
        400,
        'brand-required',
        'Brand required',
        'a platform key names the brand it acts for in this header on every request',
      ),
    };
  }
  return { lookUp: named };
}

/** The money flows a brand may start, each needing the brand's own account at a connector that does it. */
export type MoneyFlow = 'deposit' | 'withdrawal';

const WHAT_IT_NEEDS: Record<MoneyFlow, string> = {
  deposit: 'an account at a connector that collects (identity-payments or api-pix)',
  withdrawal: 'an identity-payments account, which pays out',
};

/**
 * 409: the brand has no connector account the flow needs, so nothing was started. Its flow would
 * fail at the provider's first call (activities/brand-connectors.ts), and the default brand's
 * account must never stand in.
 */
export const brandWithoutAccount = (brand: string, flow: MoneyFlow) =>
  new Problem(
    409,
    'brand-without-account',
    'The brand has no account for this',
    `brand ${JSON.stringify(brand)}: a ${flow} needs ${WHAT_IT_NEEDS[flow]} (npm run operator -- brand account set); nothing was started`,
    { brand },
  );

/** What the doors that start money flows (the API, the Nexus service) read of a brand's accounts. */
export interface BrandMoneyDoor {
  /**
   * Throws 409 `brand-without-account` when `brand` has no account for `flow`, before anything
   * starts; the default brand always passes (its connectors fall back to the environment's).
   * A 503 when the accounts cannot be read now.
   */
  refuseWithoutAccount(brand: string, flow: MoneyFlow): Promise<void>;
  /**
   * The merchant the brand's identity-payments account names (what its flows record,
   * starters/requests.ts merchantOfFlow); undefined when it has none or it cannot be read now.
   */
  merchantOf(brand: string): Promise<string | undefined>;
}

/** Brands remembered at once: past it the oldest is forgotten. */
const MAX_BRANDS = 1_000;

/**
 * The door's reads, each trusted for `ttlMs` (API_KEY_CACHE_MS, as the acting brand is), so an
 * account given or removed reaches every process within that bound; a failed read is not kept.
 */
export function brandMoneyDoor(db: Pick<Pool, 'query'>, { ttlMs }: { ttlMs: number }): BrandMoneyDoor {
  const cached = <V>(read: (brand: string) => Promise<V>) => {
    const entries = new Map<string, { until: number; value: Promise<V> }>();
    return (brand: string): Promise<V> => {
      const now = Date.now();
      const hit = entries.get(brand);
      if (hit && hit.until > now) return hit.value;
      const entry = { until: now + ttlMs, value: read(brand) };
      entries.delete(brand);
      if (entries.size >= MAX_BRANDS) entries.delete(entries.keys().next().value as string);
      entries.set(brand, entry);
      entry.value.catch(() => {
        if (entries.get(brand) === entry) entries.delete(brand);
      });
      return entry.value;
    };
  };
  const accounts = cached((brand) => moneyAccountsOf(db, brand));
  const merchant = cached(async (brand) => {
    const merchantSetting = (await getBrandAccount(db, brand, 'identity-payments'))?.settings.merchant;
    return typeof merchantSetting === 'string' ? merchantSetting : undefined;
  });
  return {
    async refuseWithoutAccount(brand, flow) {
      if (brand === DEFAULT_BRAND) return;
      let has: MoneyAccounts | undefined;
      try {
        has = await accounts(brand);
      } catch {
        throw new Problem(
          503,
          'unavailable',
          'Try again shortly',
          "the brand's accounts cannot be read now",
          {},
          5,
        );
      }
      if (!has?.[flow]) throw brandWithoutAccount(brand, flow);
    },
    // A merchant that cannot be read is recorded as the brand's id (merchantOfFlow), never a 5xx.
    merchantOf: (brand) => merchant(brand).catch(() => undefined),
  };
}
