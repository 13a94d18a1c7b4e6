import { createHmac } from 'node:crypto';
import type { z } from 'zod';
import type { CodecKeys } from '../common/codec';
import type { ApiPixSettings, Config } from '../common/config';
import { openSecret, sealSecret } from '../common/secret-box';
import { DEFAULT_BRAND_ID } from '../contracts/brand';
import {
  apiPixSettingsSchema,
  BRAND_ACCOUNT_CONNECTORS,
  type BrandAccount,
  type BrandAccountConnector,
  brandAccountSecretsSchema,
  identityPaymentsSettingsSchema,
} from '../contracts/brand-account';

// Which account a brand's connectors speak for (docs/brands.md, Connector accounts). A brand's
// own records come first; the default brand, and it alone, falls back to the environment's
// settings for a connector it has no record of, so a single-brand install configures nothing
// new. Any other brand without a record at a connector has no account there: undefined, never
// the default brand's money account. The records are read through `read` (db/brand-accounts.ts
// sealedBrandAccounts), as connectors know no table.

/** What seals a brand's secrets and keys their hashes: the codec's keys and PII_HASH_KEY. */
export interface AccountKeys {
  codecKeys: CodecKeys;
  /** Keys the hash kept of each secret (its uniqueness, and a notification's brand by it). */
  hashKey: string;
}

export const accountKeysOf = (config: Pick<Config, 'codecKeys' | 'PII_HASH_KEY'>): AccountKeys => ({
  codecKeys: config.codecKeys,
  hashKey: config.PII_HASH_KEY,
});

/** The first provider's account, whole: what its connector and its notifications' check need. */
export interface IdentityPaymentsAccountSettings {
  baseUrl: string;
  authUrl: string;
  clientId: string;
  clientSecret: string;
  apiKey: string;
  merchant: string;
  partnerId: string;
  webhookSecret: string;
}

/** An API Pix PSP's account, whole: the connector's settings, and where its webhooks come. */
export interface ApiPixAccountSettings extends ApiPixSettings {
  webhookSecret?: string;
  /** Where the PSP is to post the account's webhooks, path secret included (API_PIX_WEBHOOK_URL). */
  webhookUrl?: string;
}

/** An account and where it was found: the brand's own record, or the environment's variables. */
export interface ResolvedAccount<T> {
  from: 'brand' | 'environment';
  account: T;
}

/** A brand's account at each connector; undefined where it has none, and then nothing of it goes there. */
export interface BrandConnectorSettings {
  brandId: string;
  'identity-payments': ResolvedAccount<IdentityPaymentsAccountSettings> | undefined;
  'api-pix': ResolvedAccount<ApiPixAccountSettings> | undefined;
}

/** An account as stored (db/brand-accounts.ts SealedBrandAccount). */
export interface SealedAccount {
  brandId: string;
  connector: string;
  settings: unknown;
  secretsSealed: string;
  secretHashes: Record<string, string>;
}

/** The environment's settings the default brand falls back to (loadConfig's). */
export type EnvironmentAccounts = Pick<
  Config,
  | 'provider'
  | 'apiPix'
  | 'WEBHOOK_PARTNER_ID'
  | 'WEBHOOK_SECRET'
  | 'API_PIX_WEBHOOK_SECRET'
  | 'API_PIX_WEBHOOK_URL'
>;

export interface AccountSources {
  environment: EnvironmentAccounts;
  keys: AccountKeys;
  /** The brand's accounts as stored; undefined when there is no such brand. */
  read: (brandId: string) => Promise<readonly SealedAccount[] | undefined>;
}

export class NoSuchBrand extends Error {
  constructor(readonly brandId: string) {
    super(`no brand ${brandId}`);
  }
}

/** A stored account that does not read as one (a codec key gone, a row changed by hand). */
export class UnreadableAccount extends Error {}

/**
 * The keyed hash kept of a secret: stable across codec key rotations (PII_HASH_KEY does not
 * rotate), so a notification's path secret finds its brand by it.
 */
export function secretHash(hashKey: string, connector: BrandAccountConnector, name: string, value: string) {
  return createHmac('sha256', hashKey).update(`brand-account:${connector}:${name}:${value}`).digest('hex');
}

/** An account as it is stored: its settings, its secrets sealed, and each secret's keyed hash. */
export function sealBrandAccount(keys: AccountKeys, brandId: string, account: BrandAccount): SealedAccount {
  const secrets = Object.entries(account.secrets).filter((e): e is [string, string] => e[1] !== undefined);
  return {
    brandId,
    connector: account.connector,
    settings: account.settings,
    secretsSealed: sealSecret(keys.codecKeys, JSON.stringify(Object.fromEntries(secrets))),
    secretHashes: Object.fromEntries(
      secrets.map(([name, value]) => [name, secretHash(keys.hashKey, account.connector, name, value)]),
    ),
  };
}

/** Where zod found a stored account wrong, by field (never a value: some are secrets). */
const wrongFields = (issues: readonly { path: PropertyKey[] }[]) =>
  issues.map((i) => i.path.map(String).join('.')).join(', ');

/** A stored account opened and checked again, as its connector takes it. */
function openAccount(keys: AccountKeys, stored: SealedAccount) {
  const where = `brand ${stored.brandId}'s ${stored.connector} account`;
  let opened: string;
  try {
    opened = openSecret(keys.codecKeys, stored.secretsSealed);
  } catch (err) {
    throw new UnreadableAccount(`${where}: its secrets cannot be opened (${(err as Error).message})`);
  }
  let plain: unknown;
  try {
    plain = JSON.parse(opened);
  } catch {
    // JSON.parse's message quotes the text, which is secret.
    throw new UnreadableAccount(`${where}: its secrets are not the JSON pixflow seals`);
  }
  const read = <S, T>(settings: z.ZodType<S>, secrets: z.ZodType<T>): S & T => {
    const s = settings.safeParse(stored.settings);
    if (!s.success)
      throw new UnreadableAccount(`${where}: settings ${wrongFields(s.error.issues)} are wrong`);
    const p = secrets.safeParse(plain);
    if (!p.success) throw new UnreadableAccount(`${where}: secrets ${wrongFields(p.error.issues)} are wrong`);
    return { ...s.data, ...p.data };
  };
  if (stored.connector === 'identity-payments')
    return {
      connector: 'identity-payments' as const,
      account: read(identityPaymentsSettingsSchema, brandAccountSecretsSchema['identity-payments']),
    };
  const { webhookOrigin, ...pix } = read(apiPixSettingsSchema, brandAccountSecretsSchema['api-pix']);
  return {
    connector: 'api-pix' as const,
    account: {
      ...pix,
      ...(webhookOrigin && pix.webhookSecret
        ? { webhookUrl: `${webhookOrigin.replace(/\/$/, '')}/webhooks/api-pix/${pix.webhookSecret}` }
        : {}),
    },
  };
}

/** The accounts the environment's variables describe: the default brand's, unless it has records. */
export function environmentAccounts(e: EnvironmentAccounts) {
  const { provider } = e;
  return {
    'identity-payments': {
      baseUrl: provider.baseUrl,
      authUrl: provider.authUrl,
      clientId: provider.clientId,
      clientSecret: provider.clientSecret,
      apiKey: provider.apiKey,
      merchant: provider.merchant,
      partnerId: e.WEBHOOK_PARTNER_ID,
      webhookSecret: e.WEBHOOK_SECRET,
    } satisfies IdentityPaymentsAccountSettings,
    'api-pix': e.apiPix
      ? ({
          ...e.apiPix,
          ...(e.API_PIX_WEBHOOK_SECRET ? { webhookSecret: e.API_PIX_WEBHOOK_SECRET } : {}),
          ...(e.API_PIX_WEBHOOK_URL ? { webhookUrl: e.API_PIX_WEBHOOK_URL } : {}),
        } satisfies ApiPixAccountSettings)
      : undefined,
  };
}

/**
 * The accounts `brandId`'s connectors are to speak for: its own record at each connector; for
 * the default brand alone, the environment's where it has none. NoSuchBrand when there is no
 * such brand; UnreadableAccount when a record does not open (its codec key is no longer
 * configured) or no longer reads as an account.
 */
export async function connectorSettingsFor(
  brandId: string,
  sources: AccountSources,
): Promise<BrandConnectorSettings> {
  const stored = await sources.read(brandId);
  if (!stored) throw new NoSuchBrand(brandId);
  const fallback = brandId === DEFAULT_BRAND_ID ? environmentAccounts(sources.environment) : undefined;
  const own: {
    'identity-payments'?: IdentityPaymentsAccountSettings;
    'api-pix'?: ApiPixAccountSettings;
  } = {};
  for (const record of stored) {
    if (!(BRAND_ACCOUNT_CONNECTORS as readonly string[]).includes(record.connector)) continue;
    const opened = openAccount(sources.keys, record);
    if (opened.connector === 'identity-payments') own['identity-payments'] = opened.account;
    else own['api-pix'] = opened.account;
  }
  const resolve = <T>(mine: T | undefined, environment: T | undefined): ResolvedAccount<T> | undefined =>
    mine
      ? { from: 'brand', account: mine }
      : environment
        ? { from: 'environment', account: environment }
        : undefined;
  return {
    brandId,
    'identity-payments': resolve(own['identity-payments'], fallback?.['identity-payments']),
    'api-pix': resolve(own['api-pix'], fallback?.['api-pix']),
  };
}
