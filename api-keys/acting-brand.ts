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

/**
 * Refuses, 409 `brand-not-ready`, to start a deposit or a withdrawal for any brand but the
 * default, before anything is started, at every door that starts one (the API, the Nexus
 * service). Another brand's flows would run on its own connector accounts, but parts that find a
 * flow by its txid alone (the back office, a withdrawal's receipt record) still take it for the
 * default brand's (docs/brands.md, "Not built yet"). Once they know the brand, the one line that
 * throws goes.
 */
export function refuseMoneyForBrandsNotReady(brand: string): void {
  if (brand !== DEFAULT_BRAND) throw brandNotReady(brand);
}

const brandNotReady = (brand: string) =>
  new Problem(
    409,
    'brand-not-ready',
    'The brand cannot move money yet',
    `brand ${JSON.stringify(brand)}: deposits and withdrawals run only for the default brand for now; nothing was started`,
    { brand },
  );
