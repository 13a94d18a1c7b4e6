import { z } from 'zod';
import { envSchema } from '../common/config';

// A brand's account at a connector (docs/brands.md, Connector accounts): what the environment's
// PROVIDER_* / WEBHOOK_* and API_PIX_* variables say for the whole install, said for one brand.
// Each field takes the rule its variable takes in common/config.ts, so a value the environment
// refuses is refused here too. Settings are shown and audited; secrets are sealed at rest and
// never shown. Zod schemas for the boundaries that take one (the operator CLI today); the types
// are inferred from them.

/** The connectors a brand may hold an account at, by the name each connector goes by. */
export const BRAND_ACCOUNT_CONNECTORS = ['identity-payments', 'api-pix'] as const;
export type BrandAccountConnector = (typeof BRAND_ACCOUNT_CONNECTORS)[number];

export const brandAccountConnectorSchema = z.enum(BRAND_ACCOUNT_CONNECTORS, {
  error: `must be ${BRAND_ACCOUNT_CONNECTORS.join(' or ')}`,
});

const env = envSchema.shape;

/**
 * A webhook URL's secret path segment (WEBHOOK_SECRET, API_PIX_WEBHOOK_SECRET): their rule, and
 * characters a URL path carries as they are, since the provider posts to it as written.
 */
const pathSecret = (rule: z.ZodString) =>
  rule.regex(
    /^[A-Za-z0-9._~-]+$/,
    "must be letters, digits, '.', '_', '~' or '-' (it is a URL path segment)",
  );

/** The first provider's account: where it answers and who the brand is there. */
export const identityPaymentsSettingsSchema = z.object({
  baseUrl: env.PROVIDER_BASE_URL.unwrap(),
  authUrl: env.PROVIDER_AUTH_URL.unwrap(),
  clientId: env.PROVIDER_CLIENT_ID.unwrap(),
  merchant: env.PROVIDER_MERCHANT.unwrap(),
  /** The partner id the provider sends back in each notification: which brand it is for. */
  partnerId: env.WEBHOOK_PARTNER_ID.unwrap(),
});

export const identityPaymentsSecretsSchema = z.object({
  clientSecret: env.PROVIDER_CLIENT_SECRET.unwrap(),
  apiKey: env.PROVIDER_API_KEY.unwrap(),
  /** The secret path segment of the brand's notification URL, `/webhooks/provider/<secret>`. */
  webhookSecret: pathSecret(env.WEBHOOK_SECRET.unwrap()),
});

/** The origin the PSP reaches the API Pix listener at, with nothing after it. */
const listenerOrigin = env.API_PIX_WEBHOOK_URL.unwrap().refine((v) => {
  const u = new URL(v);
  return (u.pathname === '/' || u.pathname === '') && !u.search && !u.hash;
}, 'must be the listener\'s origin alone (https://host:port): pixflow adds "/webhooks/api-pix/<webhook secret>"');

/** An account at a PSP speaking the API Pix: its PEM files are read where the connector is built. */
export const apiPixSettingsSchema = z.object({
  baseUrl: env.API_PIX_BASE_URL.unwrap(),
  tokenUrl: env.API_PIX_TOKEN_URL.unwrap().optional(),
  clientId: env.API_PIX_CLIENT_ID.unwrap(),
  pixKey: env.API_PIX_PIX_KEY.unwrap(),
  certFile: env.API_PIX_CERT_FILE.unwrap(),
  keyFile: env.API_PIX_KEY_FILE.unwrap(),
  caFile: env.API_PIX_CA_FILE.unwrap().optional(),
  expirySeconds: env.API_PIX_EXPIRY_SECONDS.unwrap().optional(),
  /**
   * The listener's public origin: with the webhook secret, the URL the worker registers at the
   * PSP for the Pix key (API_PIX_WEBHOOK_URL's part, without the secret it would show).
   */
  webhookOrigin: listenerOrigin.optional(),
  /**
   * The CA that signs this PSP's webhook client certificate (PEM file path), when it is not the
   * environment's API_PIX_WEBHOOK_CLIENT_CA_FILE: the listener lets it in, and takes this
   * account's callbacks only from certificates it signed.
   */
  webhookClientCaFile: env.API_PIX_WEBHOOK_CLIENT_CA_FILE.unwrap().optional(),
});

export const apiPixSecretsSchema = z.object({
  clientSecret: env.API_PIX_CLIENT_SECRET.unwrap(),
  /** The secret path segment the PSP posts the brand's webhooks under, `/webhooks/api-pix/<secret>`. */
  webhookSecret: pathSecret(env.API_PIX_WEBHOOK_SECRET.unwrap()).optional(),
});

export const identityPaymentsAccountSchema = z.object({
  connector: z.literal('identity-payments'),
  settings: identityPaymentsSettingsSchema,
  secrets: identityPaymentsSecretsSchema,
});

export const apiPixAccountSchema = z
  .object({
    connector: z.literal('api-pix'),
    settings: apiPixSettingsSchema,
    secrets: apiPixSecretsSchema,
  })
  .refine((a) => !a.settings.webhookOrigin || a.secrets.webhookSecret, {
    path: ['secrets', 'webhookSecret'],
    error: 'is needed with the webhook origin: the URL registered at the PSP ends with it',
  });

/** A brand's account at one connector, as an admin sets it: the whole of it, secrets included. */
export const brandAccountSchema = z.discriminatedUnion(
  'connector',
  [identityPaymentsAccountSchema, apiPixAccountSchema],
  { error: `must be ${BRAND_ACCOUNT_CONNECTORS.join(' or ')}` },
);
export type BrandAccount = z.infer<typeof brandAccountSchema>;
export type IdentityPaymentsAccount = z.infer<typeof identityPaymentsAccountSchema>;
export type ApiPixAccount = z.infer<typeof apiPixAccountSchema>;

/** The secrets' names per connector, in the order they are shown. */
export const BRAND_ACCOUNT_SECRETS = {
  'identity-payments': Object.keys(identityPaymentsSecretsSchema.shape) as (keyof z.infer<
    typeof identityPaymentsSecretsSchema
  >)[],
  'api-pix': Object.keys(apiPixSecretsSchema.shape) as (keyof z.infer<typeof apiPixSecretsSchema>)[],
} as const;

/** The secrets of a connector's account, checked as they come back unsealed. */
export const brandAccountSecretsSchema = {
  'identity-payments': identityPaymentsSecretsSchema,
  'api-pix': apiPixSecretsSchema,
} as const;

/**
 * An account as it is read for showing: its settings, and which of its secrets are set (never
 * their values).
 */
export const storedBrandAccountSchema = z.discriminatedUnion('connector', [
  z.object({
    brandId: z.string(),
    connector: z.literal('identity-payments'),
    settings: identityPaymentsSettingsSchema,
    secretsSet: z.array(z.enum(BRAND_ACCOUNT_SECRETS['identity-payments'])),
    createdAt: z.string(),
    updatedAt: z.string(),
  }),
  z.object({
    brandId: z.string(),
    connector: z.literal('api-pix'),
    settings: apiPixSettingsSchema,
    secretsSet: z.array(z.enum(BRAND_ACCOUNT_SECRETS['api-pix'])),
    createdAt: z.string(),
    updatedAt: z.string(),
  }),
]);
export type StoredBrandAccount = z.infer<typeof storedBrandAccountSchema>;
