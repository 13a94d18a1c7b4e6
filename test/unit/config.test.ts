import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ConfigError,
  ELIGIBILITY_DEV_SECRET,
  loadConfig,
  loadConfigOrExit,
  PAYOUT_AUTHORIZATION_DEV_SECRET,
} from '../../common/config';
import {
  SECRET_VARIABLES,
  SECRETS_READ_BY,
  type SecretVariable,
  SIGNING_SECRETS,
} from '../../common/production-secrets';
import { PUBLIC_CODEC_KEY_MATERIAL, PUBLIC_POSTGRES_PASSWORDS } from '../../common/public-secrets';
import { temporalConnectionOptions } from '../../common/temporal-connection';
import { defaultDeliveryOptions, deliveryOptionsFrom } from '../../ingress/deliver';
import { policyFromEnv } from '../../policy/seed';

// The codec endpoint's browser origins: the Temporal UI the embedded stack runs, wherever it runs.

describe('CODEC_CORS_ORIGINS', () => {
  it('defaults to the local Temporal UI on its default port', () => {
    expect(loadConfig({}).CODEC_CORS_ORIGINS).toEqual(['http://127.0.0.1:8233', 'http://localhost:8233']);
  });

  it('follows TEMPORAL_UI_PORT when unset, so the UI on another port can still decode payloads', () => {
    expect(loadConfig({ TEMPORAL_UI_PORT: '18233' }).CODEC_CORS_ORIGINS).toEqual([
      'http://127.0.0.1:18233',
      'http://localhost:18233',
    ]);
    expect(loadConfig({ TEMPORAL_UI_PORT: '18233', CODEC_CORS_ORIGINS: '' }).CODEC_CORS_ORIGINS).toEqual([
      'http://127.0.0.1:18233',
      'http://localhost:18233',
    ]);
  });

  it('is taken as given when set', () => {
    expect(
      loadConfig({ TEMPORAL_UI_PORT: '18233', CODEC_CORS_ORIGINS: 'https://ui.example.com, http://x:1' })
        .CODEC_CORS_ORIGINS,
    ).toEqual(['https://ui.example.com', 'http://x:1']);
  });
});

describe('webhook inbox settings', () => {
  it('default to a 1 s relay interval, a 60 s longest back-off and a day before giving up', () => {
    const c = loadConfig({});
    expect(c.INBOX_RELAY_INTERVAL_MS).toBe(1_000);
    expect(c.INBOX_RETRY_MAX_MS).toBe(60_000);
    expect(c.INBOX_GIVE_UP_MS).toBe(24 * 3600_000);
  });

  it('give the delivery the same options whether the configuration is read or not', () => {
    expect(deliveryOptionsFrom(loadConfig({}))).toEqual(defaultDeliveryOptions);
    expect(deliveryOptionsFrom({})).toEqual(defaultDeliveryOptions);
  });
});

describe('back office settings', () => {
  it('make the session cookie Secure unless the API listens on loopback', () => {
    expect(loadConfig({}).BACKOFFICE_SECURE_COOKIE).toBe(false);
    expect(loadConfig({ HTTP_HOST: '0.0.0.0' }).BACKOFFICE_SECURE_COOKIE).toBe(true);
    expect(loadConfig({ HTTP_HOST: '10.1.2.3' }).BACKOFFICE_SECURE_COOKIE).toBe(true);
    expect(
      loadConfig({ HTTP_HOST: '0.0.0.0', BACKOFFICE_SECURE_COOKIE: 'false' }).BACKOFFICE_SECURE_COOKIE,
    ).toBe(false);
  });

  it('link cases to the local Temporal UI unless told where it is, and refuse a short session secret', () => {
    expect(loadConfig({ TEMPORAL_UI_PORT: '9999' }).TEMPORAL_UI_URL).toBe('http://127.0.0.1:9999');
    expect(loadConfig({ TEMPORAL_UI_URL: 'https://temporal.example.com/' }).TEMPORAL_UI_URL).toBe(
      'https://temporal.example.com',
    );
    expect(() => loadConfig({ BACKOFFICE_SESSION_SECRET: 'short' })).toThrow(/BACKOFFICE_SESSION_SECRET/);
  });
});

describe('secrets under NODE_ENV=production', () => {
  const fresh = () => randomBytes(32).toString('hex');
  const own = () => ({
    API_KEYS: fresh(),
    CODEC_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    CODEC_ACTIVE_KEY_ID: 'k1',
    PII_HASH_KEY: fresh(),
    WEBHOOK_SECRET: fresh(),
    BACKOFFICE_SESSION_SECRET: fresh(),
    CODEC_TOKENS: fresh(),
    // Production screens people: not the subject here.
    ELIGIBILITY_SCREENED_ELSEWHERE: 'true',
  });
  const problems = (env: Record<string, string>, secrets?: readonly SecretVariable[]) => {
    try {
      loadConfig(env, { secrets });
      return [];
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
  };

  describe('Temporal credentials', () => {
    const CERT = {
      TEMPORAL_TLS_CERT_PATH: '/etc/pixflow/temporal-tls/client.pem',
      TEMPORAL_TLS_KEY_PATH: '/etc/pixflow/temporal-tls/client.key',
    };
    const refusal = expect.stringMatching(
      /^TEMPORAL_TLS_CERT_PATH \/ TEMPORAL_TLS_KEY_PATH: unset, so pixflow would talk to Temporal at temporal:7233 without credentials; .*TEMPORAL_API_KEY/,
    );

    it('a Temporal off this machine needs a client certificate or an API key in production', () => {
      const prod = { ...own(), NODE_ENV: 'production', TEMPORAL_ADDRESS: 'temporal:7233' };
      expect(problems(prod)).toEqual([refusal]);
      expect(problems({ ...prod, TEMPORAL_TLS: 'true' })).toEqual([refusal]);
      expect(problems({ ...prod, ...CERT })).toEqual([]);
      expect(problems({ ...prod, TEMPORAL_API_KEY: fresh() })).toEqual([]);
      // The API and the worker talk to Temporal; the sandbox and the migrations do not.
      expect(problems(prod, SECRETS_READ_BY.worker)).toEqual([refusal]);
      expect(problems(prod, SECRETS_READ_BY.sandbox)).toEqual([]);
      expect(problems(prod, SECRETS_READ_BY.migrate)).toEqual([]);
    });

    it.each(['127.0.0.1:7233', '127.3.2.1:7233', 'localhost:7233', '[::1]:7233', undefined])(
      'loopback (%s) may go without: nothing but this machine sees it',
      (address) => {
        const prod = { ...own(), NODE_ENV: 'production', ...(address ? { TEMPORAL_ADDRESS: address } : {}) };
        expect(problems(prod)).toEqual([]);
      },
    );

    it.each(['127.example.com:7233', '10.0.0.7:7233', '[2001:db8::1]:7233', 'temporal.example.com:7233'])(
      '%s is not loopback',
      (address) => {
        expect(problems({ ...own(), NODE_ENV: 'production', TEMPORAL_ADDRESS: address })).toHaveLength(1);
      },
    );

    it('connect with the private CA, the client pair and the server name given; TLS on by any of them', () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'pixflow-tls-'));
      try {
        const file = (name: string) => {
          writeFileSync(path.join(dir, name), `${name} bytes`);
          return path.join(dir, name);
        };
        const options = temporalConnectionOptions(
          loadConfig({
            TEMPORAL_ADDRESS: 'temporal:7233',
            TEMPORAL_TLS_CA_PATH: file('ca.pem'),
            TEMPORAL_TLS_CERT_PATH: file('client.pem'),
            TEMPORAL_TLS_KEY_PATH: file('client.key'),
            TEMPORAL_TLS_SERVER_NAME: 'temporal',
          }),
        );
        expect(options.address).toBe('temporal:7233');
        expect(options.tls).toEqual({
          serverRootCACertificate: Buffer.from('ca.pem bytes'),
          clientCertPair: { crt: Buffer.from('client.pem bytes'), key: Buffer.from('client.key bytes') },
          serverNameOverride: 'temporal',
        });
        expect(temporalConnectionOptions(loadConfig({})).tls).toBeUndefined();
        expect(temporalConnectionOptions(loadConfig({ TEMPORAL_TLS: 'true' })).tls).toEqual({});
        expect(temporalConnectionOptions(loadConfig({ TEMPORAL_TLS_CA_PATH: file('ca.pem') })).tls).toEqual({
          serverRootCACertificate: Buffer.from('ca.pem bytes'),
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('outside production, no credentials are asked for; a certificate without its key never loads', () => {
      expect(problems({ TEMPORAL_ADDRESS: 'temporal:7233' })).toEqual([]);
      expect(problems({ TEMPORAL_TLS_CERT_PATH: CERT.TEMPORAL_TLS_CERT_PATH })).toEqual([
        'TEMPORAL_TLS_CERT_PATH / TEMPORAL_TLS_KEY_PATH: a client certificate needs both, the certificate and its key',
      ]);
    });
  });

  it('development and tests run on the public defaults', () => {
    expect(loadConfig({}).WEBHOOK_SECRET).toBe('dev-webhook-secret-change-me');
    expect(loadConfig({ NODE_ENV: 'test' }).PII_HASH_KEY).toBe('dev-pii-hash-key-change-me');
  });

  it('load with every secret fresh', () => {
    const env = own();
    const config = loadConfig({ NODE_ENV: 'production', ...env });
    expect(config.WEBHOOK_SECRET).toBe(env.WEBHOOK_SECRET);
    expect(config.codecKeys.activeKeyId).toBe('k1');
  });

  it('are refused unset, one line per variable, each saying how to make one', () => {
    const lines = problems({ NODE_ENV: 'production', ELIGIBILITY_SCREENED_ELSEWHERE: 'true' });
    expect(lines.map((l) => l.split(':')[0])).toEqual([...SECRET_VARIABLES]);
    for (const l of lines) expect(l).toMatch(/: not set .*openssl rand -(hex|base64) 32/);
    expect(lines.find((l) => l.startsWith('CODEC_KEYS'))).toContain('<id>:<32 bytes in base64>');
  });

  it('are refused public, whichever id a public codec key is given, never showing the value', () => {
    const env = {
      ...own(),
      NODE_ENV: 'production',
      WEBHOOK_SECRET: 'dev-webhook-secret-change-me',
      CODEC_KEYS: `k1:${randomBytes(32).toString('base64')},old:${PUBLIC_CODEC_KEY_MATERIAL[0]}`,
      API_KEYS: `${fresh()},dev-api-key`,
    };
    const lines = problems(env);
    expect(lines.map((l) => l.split(':')[0])).toEqual(['API_KEYS', 'CODEC_KEYS', 'WEBHOOK_SECRET']);
    expect(lines.join('\n')).not.toMatch(/dev-webhook-secret|dev-api-key|ZGV2/);
    expect(lines[1]).toContain('key "old" is public');
  });

  it('are required only where read, and refused public wherever set', () => {
    expect(problems({ NODE_ENV: 'production' }, SECRETS_READ_BY.sandbox)).toEqual([]);
    const { CODEC_KEYS, CODEC_ACTIVE_KEY_ID, PII_HASH_KEY } = own();
    const worker = {
      NODE_ENV: 'production',
      CODEC_KEYS,
      CODEC_ACTIVE_KEY_ID,
      PII_HASH_KEY,
      ELIGIBILITY_SCREENED_ELSEWHERE: 'true',
    };
    expect(problems(worker, SECRETS_READ_BY.worker)).toEqual([]);
    const publicWebhook = { ...worker, WEBHOOK_SECRET: 'dev-webhook-secret-change-me' };
    expect(problems(publicWebhook, SECRETS_READ_BY.worker)).toEqual([
      expect.stringMatching(/^WEBHOOK_SECRET: is public/),
    ]);
  });

  it("the payout authorization's secret: its own with PAYOUT_AUTHORIZATION_URL, never the public default", () => {
    const url = { PAYOUT_AUTHORIZATION_URL: 'https://operator.example/authorize' };
    expect(problems({ ...own(), NODE_ENV: 'production', ...url })).toEqual([
      expect.stringMatching(/^PAYOUT_AUTHORIZATION_SECRET: not set \(production needs its own/),
    ]);
    const publicSecret = { PAYOUT_AUTHORIZATION_SECRET: loadConfig({}).PAYOUT_AUTHORIZATION_SECRET };
    expect(problems({ ...own(), NODE_ENV: 'production', ...url, ...publicSecret })).toEqual([
      expect.stringMatching(/^PAYOUT_AUTHORIZATION_SECRET: is public/),
    ]);
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const config = loadConfig({
      ...own(),
      NODE_ENV: 'production',
      ...url,
      PAYOUT_AUTHORIZATION_SECRET: secret,
    });
    expect(config.PAYOUT_AUTHORIZATION_SECRET).toBe(secret);
  });

  it('signing secrets: compared by key material, so a public one is refused with or without whsec_ or its padding', () => {
    const publicOnes = {
      ELIGIBILITY_SECRET: ELIGIBILITY_DEV_SECRET,
      PAYOUT_AUTHORIZATION_SECRET: PAYOUT_AUTHORIZATION_DEV_SECRET,
    };
    for (const [name, url] of SIGNING_SECRETS) {
      const base64 = publicOnes[name].replace(/^whsec_/, '');
      const withUrl = { ...own(), NODE_ENV: 'production', [url]: 'https://service.example/x' };
      for (const value of [
        `whsec_${base64}`,
        base64,
        base64.replace(/=+$/, ''),
        `whsec_${base64.replace(/=+$/, '')}`,
      ]) {
        const lines = problems({ ...withUrl, [name]: value });
        expect(lines, `${name}=${value}`).toEqual([expect.stringMatching(new RegExp(`^${name}: is public`))]);
        expect(lines[0]).toContain('whsec_$(openssl rand -base64 32)');
        expect(lines.join('\n')).not.toContain(base64.slice(0, 12));
        // Set without its service, still refused: a value set is checked wherever it is.
        expect(problems({ ...own(), NODE_ENV: 'production', [name]: value }), name).toHaveLength(1);
      }
      const mine = randomBytes(32).toString('base64');
      for (const value of [`whsec_${mine}`, mine])
        expect(loadConfig({ ...withUrl, [name]: value })[name]).toBe(value);
    }
  });

  it('DATABASE_URL with a public password is refused, never showing it; its own loads', () => {
    const url = (password: string) =>
      `postgresql://pixflow:${encodeURIComponent(password)}@db.internal:5432/pixflow`;
    for (const password of [...PUBLIC_POSTGRES_PASSWORDS, 'dev-api-key']) {
      const lines = problems({ ...own(), NODE_ENV: 'production', DATABASE_URL: url(password) });
      expect(lines, password).toEqual([expect.stringMatching(/^DATABASE_URL: its password is public/)]);
      expect(lines[0]).toContain('openssl rand -hex 32');
      if (password.length > 8) expect(lines[0]).not.toContain(password);
    }
    const asQuery = 'postgresql://db.internal/pixflow?user=pixflow&password=replace-me-postgres-password';
    expect(problems({ ...own(), NODE_ENV: 'production', DATABASE_URL: asQuery })).toHaveLength(1);
    const mine = url(fresh());
    expect(loadConfig({ ...own(), NODE_ENV: 'production', DATABASE_URL: mine }).DATABASE_URL).toBe(mine);
    // Development and tests run on the embedded Postgres's.
    expect(loadConfig({ DATABASE_URL: url('pixflow') }).DATABASE_URL).toBe(url('pixflow'));
  });

  it("the provider's credentials: the sandbox's are refused, and required, once the provider is not the sandbox", () => {
    const real = {
      ...own(),
      NODE_ENV: 'production',
      PROVIDER_BASE_URL: 'https://api.provider.example',
      PROVIDER_AUTH_URL: 'https://auth.provider.example',
    };
    expect(problems(real).map((l) => l.split(':')[0])).toEqual([
      'PROVIDER_CLIENT_SECRET',
      'PROVIDER_API_KEY',
    ]);
    const sandboxValues = { PROVIDER_CLIENT_SECRET: 'sandbox-secret', PROVIDER_API_KEY: 'sandbox-api-key' };
    const lines = problems({ ...real, ...sandboxValues });
    expect(lines).toEqual([
      expect.stringMatching(/^PROVIDER_CLIENT_SECRET: is the sandbox's/),
      expect.stringMatching(/^PROVIDER_API_KEY: is the sandbox's/),
    ]);
    expect(lines.join('\n')).not.toMatch(/sandbox-secret|sandbox-api-key/);
    // Only the token endpoint elsewhere is a real provider too.
    const authOnly = { ...own(), NODE_ENV: 'production', PROVIDER_AUTH_URL: 'https://auth.provider.example' };
    expect(problems(authOnly)).toHaveLength(2);
    const mine = { PROVIDER_CLIENT_SECRET: fresh(), PROVIDER_API_KEY: fresh() };
    expect(loadConfig({ ...real, ...mine }).provider.apiKey).toBe(mine.PROVIDER_API_KEY);
    // The sandbox (unset, loopback, compose's service) keeps its own values.
    for (const at of [
      {} as Record<string, string>,
      { PROVIDER_BASE_URL: 'http://127.0.0.1:4010' },
      { PROVIDER_BASE_URL: 'http://sandbox:4010', PROVIDER_AUTH_URL: 'http://sandbox:4010' },
    ])
      expect(
        problems({ ...own(), NODE_ENV: 'production', ...at, ...sandboxValues }),
        JSON.stringify(at),
      ).toEqual([]);
  });

  describe('eligibility in production', () => {
    const { ELIGIBILITY_SCREENED_ELSEWHERE: _, ...unscreened } = { ...own(), NODE_ENV: 'production' };
    afterEach(() => {
      vi.restoreAllMocks();
    });

    it('no ELIGIBILITY_URL: the API and the worker refuse to start, naming it; the sandbox and migrations do not care', () => {
      for (const secrets of [undefined, SECRETS_READ_BY.api, SECRETS_READ_BY.worker]) {
        const lines = problems(unscreened, secrets);
        expect(lines).toEqual([
          expect.stringMatching(/^ELIGIBILITY_URL: not set, so no one would be screened/),
        ]);
        expect(lines[0]).toContain('ELIGIBILITY_SCREENED_ELSEWHERE=true');
      }
      expect(problems({ NODE_ENV: 'production' }, SECRETS_READ_BY.sandbox)).toEqual([]);
      expect(problems({ NODE_ENV: 'production' }, SECRETS_READ_BY.migrate)).toEqual([]);
      // Outside production, unscreened as before.
      expect(loadConfig({}).ELIGIBILITY_URL).toBeUndefined();
    });

    it('with a service, or screened elsewhere, they start; elsewhere is said at every start', () => {
      const service = {
        ELIGIBILITY_URL: 'https://eligibility.example/check',
        ELIGIBILITY_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
      };
      expect(problems({ ...unscreened, ...service })).toEqual([]);
      const written: string[] = [];
      vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
        written.push(String(chunk));
        return true;
      });
      loadConfigOrExit({ ...unscreened, ...service }, { secrets: SECRETS_READ_BY.worker });
      expect(written.join('')).not.toContain('ELIGIBILITY');
      const elsewhere = { ...unscreened, ELIGIBILITY_SCREENED_ELSEWHERE: 'true' };
      expect(
        loadConfigOrExit(elsewhere, { secrets: SECRETS_READ_BY.worker }).ELIGIBILITY_SCREENED_ELSEWHERE,
      ).toBe(true);
      expect(written.join('')).toMatch(
        /ELIGIBILITY_URL unset and ELIGIBILITY_SCREENED_ELSEWHERE=true: pixflow screens no one/,
      );
    });
  });

  it('a malformed secret is reported without its value', () => {
    const lines = problems({ BACKOFFICE_SESSION_SECRET: 'short' });
    expect(lines).toEqual(['BACKOFFICE_SESSION_SECRET=(not shown): must be at least 32 characters']);
  });
});

describe('payout controls settings (the rules policy seeded from the environment)', () => {
  const problemsOf = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      policyFromEnv(env);
      return [];
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
  };

  it('default to a 120-minute deadline at risk at 75%, two approvers above R$ 10.000,00, below the daily limit, fail closed', () => {
    const { payouts, withdrawals } = policyFromEnv({});
    expect(payouts).toEqual({
      deadlineMs: 120 * 60_000,
      atRiskShare: 0.75,
      approvalAboveCentavos: 1_000_000,
      approvers: 2,
      authorizationOnNoAnswer: 'deny',
    });
    // Otherwise a payout that needs four eyes is refused `limit_exceeded` before it can wait.
    expect(payouts.approvalAboveCentavos).toBeLessThan(withdrawals.dailyLimitCentavos);
    const c = loadConfig({});
    expect(c.PAYOUT_AUTHORIZATION_TIMEOUT_MS).toBe(3_000);
    expect(c.PAYOUT_AUTHORIZATION_URL).toBeUndefined();
    expect(policyFromEnv({ PAYOUT_DEADLINE: '2h' }).payouts.deadlineMs).toBe(7_200_000);
  });

  it('refuse a deadline without its unit, a share outside 0-1, three approvers, another no-answer policy', () => {
    const names = (env: Record<string, string>) => problemsOf(env).map((l) => l.split('=')[0]);
    expect(names({ PAYOUT_DEADLINE: '120' })).toEqual(['PAYOUT_DEADLINE']);
    expect(names({ PAYOUT_DEADLINE: '0m' })).toEqual(['PAYOUT_DEADLINE']);
    expect(names({ PAYOUT_AT_RISK_SHARE: '1' })).toEqual(['PAYOUT_AT_RISK_SHARE']);
    expect(names({ PAYOUT_AT_RISK_SHARE: '0' })).toEqual(['PAYOUT_AT_RISK_SHARE']);
    expect(names({ PAYOUT_APPROVERS: '3' })).toEqual(['PAYOUT_APPROVERS']);
    expect(names({ PAYOUT_AUTHORIZATION_ON_NO_ANSWER: 'maybe' })).toEqual([
      'PAYOUT_AUTHORIZATION_ON_NO_ANSWER',
    ]);
    expect(names({ PAYOUT_AUTHORIZATION_URL: 'ftp://operator.example' })).toEqual([
      'PAYOUT_AUTHORIZATION_URL',
    ]);
  });
});
