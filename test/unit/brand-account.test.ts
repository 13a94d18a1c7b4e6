import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { brandAccountSchema, storedBrandAccountSchema } from '../../contracts/brand-account';

// A brand's connector account as an admin sets it: each field under the rule its environment
// variable takes, the secrets beside the settings, the two connectors told apart.

const fresh = () => randomBytes(18).toString('base64url');

const identityPayments = () => ({
  connector: 'identity-payments',
  settings: {
    baseUrl: 'https://api.provider.example',
    authUrl: 'https://auth.provider.example',
    clientId: 'bet-rio-client',
    merchant: 'bet-rio',
    partnerId: 'bet-rio-partner',
  },
  secrets: { clientSecret: fresh(), apiKey: fresh(), webhookSecret: fresh() },
});

const apiPix = () => ({
  connector: 'api-pix',
  settings: {
    baseUrl: 'https://pix.psp.example/api/v2',
    clientId: 'bet-rio',
    pixKey: '3d94a38b-f344-460e-b6c9-489469b2fb03',
    certFile: '/run/secrets/bet-rio-cert.pem',
    keyFile: '/run/secrets/bet-rio-key.pem',
  },
  secrets: { clientSecret: fresh() },
});

/** Each problem as `path: message`. */
const problems = (value: unknown) => {
  const r = brandAccountSchema.safeParse(value);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe("a brand's connector account", () => {
  it("takes the first provider's account whole", () => {
    const account = identityPayments();
    expect(brandAccountSchema.parse(account)).toEqual(account);
  });

  it('takes an API Pix account, its optional settings left out or given', () => {
    expect(brandAccountSchema.parse(apiPix())).toMatchObject({ connector: 'api-pix' });
    const full = apiPix();
    const parsed = brandAccountSchema.parse({
      ...full,
      settings: {
        ...full.settings,
        tokenUrl: 'https://auth.psp.example/oauth/token',
        caFile: '/run/secrets/psp-ca.pem',
        expirySeconds: '600',
        webhookOrigin: 'https://pix-hooks.bet-rio.example:8443',
      },
      secrets: { ...full.secrets, webhookSecret: fresh() },
    });
    // As the environment's API_PIX_EXPIRY_SECONDS, a number written as text is taken.
    expect(parsed.settings).toMatchObject({ expirySeconds: 600, caFile: '/run/secrets/psp-ca.pem' });
  });

  it("refuses what the environment's variables refuse, naming the field", () => {
    const ip = identityPayments();
    expect(problems({ ...ip, settings: { ...ip.settings, baseUrl: 'ftp://x.example' } })).toEqual([
      'settings.baseUrl: must be an http:// or https:// URL',
    ]);
    const pix = apiPix();
    // API Pix speaks over mutual TLS: https only, as API_PIX_BASE_URL.
    expect(problems({ ...pix, settings: { ...pix.settings, baseUrl: 'http://pix.psp.example' } })).toEqual([
      'settings.baseUrl: must be an https:// URL',
    ]);
    expect(
      problems({ ...pix, settings: { ...pix.settings, expirySeconds: '30' } }).map((p) => p.split(':')[0]),
    ).toEqual(['settings.expirySeconds']);
    expect(problems({ ...ip, secrets: { ...ip.secrets, webhookSecret: 'short' } })).toEqual([
      'secrets.webhookSecret: must be at least 16 characters',
    ]);
  });

  it('refuses a webhook secret a URL path would not carry as written', () => {
    const ip = identityPayments();
    expect(
      problems({ ...ip, secrets: { ...ip.secrets, webhookSecret: 'sixteen chars/with a slash' } }),
    ).toEqual([
      "secrets.webhookSecret: must be letters, digits, '.', '_', '~' or '-' (it is a URL path segment)",
    ]);
  });

  it('refuses a missing setting or secret by its name', () => {
    const { partnerId: _, ...settings } = identityPayments().settings;
    const { apiKey: __, ...secrets } = identityPayments().secrets;
    expect(
      problems({ connector: 'identity-payments', settings, secrets }).map((p) => p.split(':')[0]),
    ).toEqual(['settings.partnerId', 'secrets.apiKey']);
  });

  it('takes the webhook origin alone, with its secret, never a URL that would show the secret', () => {
    const pix = apiPix();
    const withOrigin = (webhookOrigin: string, webhookSecret?: string) =>
      problems({
        ...pix,
        settings: { ...pix.settings, webhookOrigin },
        secrets: { ...pix.secrets, ...(webhookSecret ? { webhookSecret } : {}) },
      });
    expect(withOrigin('https://hooks.example:8443', fresh())).toEqual([]);
    expect(withOrigin(`https://hooks.example:8443/webhooks/api-pix/${fresh()}`, fresh())).toEqual([
      'settings.webhookOrigin: must be the listener\'s origin alone (https://host:port): pixflow adds "/webhooks/api-pix/<webhook secret>"',
    ]);
    expect(withOrigin('https://hooks.example:8443')).toEqual([
      'secrets.webhookSecret: is needed with the webhook origin: the URL registered at the PSP ends with it',
    ]);
  });

  it('refuses a connector it does not know', () => {
    expect(problems({ ...identityPayments(), connector: 'stripe' })).toEqual([
      'connector: must be identity-payments or api-pix',
    ]);
  });

  it('reads a stored account as its settings and the names of the secrets set, no value', () => {
    const { secrets: _, ...account } = identityPayments();
    const stored = storedBrandAccountSchema.parse({
      ...account,
      brandId: 'bet-rio',
      secretsSet: ['clientSecret', 'apiKey', 'webhookSecret'],
      createdAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
    });
    expect(stored).not.toHaveProperty('secrets');
    expect(() =>
      storedBrandAccountSchema.parse({ ...stored, connector: 'api-pix', secretsSet: ['apiKey'] }),
    ).toThrow();
  });
});
