import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { ELIGIBILITY_DEV_SECRET, PAYOUT_AUTHORIZATION_DEV_SECRET } from '../../common/config';
import {
  PROVIDER_SECRETS,
  SECRET_VARIABLES,
  SECRETS_READ_BY,
  type SecretVariable,
  SIGNING_SECRETS,
} from '../../common/production-secrets';
import { PUBLIC_CODEC_KEY_MATERIAL, PUBLIC_SECRET_VALUES } from '../../common/public-secrets';
import { migrate } from '../../db/migrate';
import { databaseOfItsOwn } from '../helpers/own-database';
import { freePort, tcpOpen } from '../helpers/ports';
import { waitUntil } from '../helpers/wait';

// NODE_ENV=production (the image's and the compose file's): the real API and worker, each as
// its own process, refuse to start on a missing or public secret, before they listen on
// anything, naming the variable and how to make one; with every secret their own, they start.

const ROOT = path.resolve(__dirname, '../..');

const fresh = () => randomBytes(32).toString('hex');
const freshSecrets = (): Record<string, string> => ({
  API_KEYS: fresh(),
  CODEC_KEYS: `k1:${randomBytes(32).toString('base64')}`,
  CODEC_ACTIVE_KEY_ID: 'k1',
  PII_HASH_KEY: fresh(),
  WEBHOOK_SECRET: fresh(),
  BACKOFFICE_SESSION_SECRET: fresh(),
  CODEC_TOKENS: fresh(),
  // Screening is its own subject below; here the operator screens elsewhere.
  ELIGIBILITY_SCREENED_ELSEWHERE: 'true',
});

/** One public value per variable: the defaults config.ts and `npm start` had, a test's token. */
const PUBLIC: Record<SecretVariable, Record<string, string>> = {
  API_KEYS: { API_KEYS: 'dev-api-key' },
  // Public whatever id it is given.
  CODEC_KEYS: { CODEC_KEYS: `prod:${PUBLIC_CODEC_KEY_MATERIAL[0]}`, CODEC_ACTIVE_KEY_ID: 'prod' },
  PII_HASH_KEY: { PII_HASH_KEY: 'dev-pii-hash-key-change-me' },
  WEBHOOK_SECRET: { WEBHOOK_SECRET: 'dev-webhook-secret-change-me' },
  BACKOFFICE_SESSION_SECRET: { BACKOFFICE_SESSION_SECRET: 'dev-backoffice-session-secret-change-me' },
  CODEC_TOKENS: { CODEC_TOKENS: 'test-codec-token' },
};

const ENTRY = { api: 'api/main.ts', worker: 'worker/main.ts' } as const;
type Part = keyof typeof ENTRY;

let databaseUrl: string;
beforeAll(async () => {
  // Its own, with a role and password of its own (production refuses the run's public one):
  // the positive cases' API and worker run their relays and reconciler on it.
  databaseUrl = await databaseOfItsOwn();
  await migrate(databaseUrl);
});

const children: Array<() => void> = [];
afterEach(() => {
  for (const kill of children.splice(0)) kill();
});

async function productionEnv(secrets: Record<string, string | undefined>) {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of [
    ...SECRET_VARIABLES,
    'CODEC_ACTIVE_KEY_ID',
    'PROVIDER_BASE_URL',
    'PROVIDER_AUTH_URL',
    ...PROVIDER_SECRETS,
    ...SIGNING_SECRETS.flat(),
    'ELIGIBILITY_SCREENED_ELSEWHERE',
  ])
    delete env[k];
  const ports = {
    API_PORT: await freePort(),
    WORKER_HTTP_PORT: await freePort(),
    WORKER_SDK_METRICS_PORT: await freePort(),
  };
  Object.assign(env, {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    HTTP_HOST: '127.0.0.1',
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: `secrets-${randomBytes(4).toString('hex')}`,
  });
  for (const [k, v] of Object.entries(secrets)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return { env, ports };
}

interface Run {
  code: number | null;
  stderr: string;
  /** Whether its port ever accepted a connection while it ran. */
  listened: boolean;
  ms: number;
}

/** The part as its own process in production, its stderr kept; killed after each test. */
async function spawnPart(part: Part, secrets: Record<string, string | undefined>) {
  const { env, ports } = await productionEnv(secrets);
  const port = part === 'api' ? ports.API_PORT : ports.WORKER_HTTP_PORT;
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, ENTRY[part])], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(() => child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => {
    stderr += b.toString('utf8');
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, port, exited, stderr: () => stderr };
}

/** Runs the part until it exits (or `deadlineMs`), watching its port all along. */
async function runPart(part: Part, secrets: Record<string, string | undefined>, deadlineMs = 15_000) {
  const started = Date.now();
  const { child, port, exited, stderr: errors } = await spawnPart(part, secrets);
  let listened = false;
  let done = false;
  void exited.then(() => {
    done = true;
  });
  while (!done && Date.now() - started < deadlineMs) {
    if (await tcpOpen(port)) listened = true;
    await new Promise((r) => setTimeout(r, 25));
  }
  const ms = Date.now() - started;
  if (!done) child.kill('SIGKILL');
  const code = await exited;
  return { code: done ? code : null, stderr: errors(), listened, ms } satisfies Run;
}

/** The refusal: exit 1 within the deadline, one line (this variable's), how to make one, never its port. */
function expectRefused(run: Run, name: string, value?: string, how = /openssl rand -(hex|base64) 32/) {
  const what = `${name}: ${run.stderr}`;
  expect(run.code, `${what} (still running after ${run.ms} ms)`).toBe(1);
  expect(run.listened, what).toBe(false);
  const lines = run.stderr.split('\n').filter((l) => /^ {2}\S/.test(l));
  expect(lines, what).toHaveLength(1);
  expect(lines[0], what).toMatch(new RegExp(`^ {2}${name}: `));
  expect(lines[0], what).toMatch(how);
  expect(run.stderr, what).not.toMatch(/^\s+at /m);
  // The value itself is never printed.
  if (value) expect(run.stderr, what).not.toContain(value);
}

const readers = (name: SecretVariable): Part[] =>
  (['api', 'worker'] as const).filter((p) => (SECRETS_READ_BY[p] as readonly string[]).includes(name));

describe('NODE_ENV=production refuses to start on a missing or public secret', () => {
  for (const name of SECRET_VARIABLES) {
    for (const part of readers(name)) {
      it(`${part}: ${name} missing`, async () => {
        const secrets: Record<string, string | undefined> = { ...freshSecrets(), [name]: undefined };
        if (name === 'CODEC_KEYS') secrets.CODEC_ACTIVE_KEY_ID = undefined;
        expectRefused(await runPart(part, secrets), name);
      });

      it(`${part}: ${name} set to a public value`, async () => {
        const given = PUBLIC[name];
        const value = given[name] as string;
        if (name !== 'CODEC_KEYS') expect(PUBLIC_SECRET_VALUES.has(value)).toBe(true);
        const run = await runPart(part, { ...freshSecrets(), ...given });
        expectRefused(run, name, name === 'CODEC_KEYS' ? PUBLIC_CODEC_KEY_MATERIAL[0] : value);
      });
    }
  }

  it('api: one of several API keys public is refused too', async () => {
    const run = await runPart('api', { ...freshSecrets(), API_KEYS: `${fresh()},dev-api-key` });
    expectRefused(run, 'API_KEYS', 'dev-api-key');
  });
});

describe('NODE_ENV=production: the signing secrets, compared by key material', () => {
  const publicOnes = {
    ELIGIBILITY_SECRET: ELIGIBILITY_DEV_SECRET,
    PAYOUT_AUTHORIZATION_SECRET: PAYOUT_AUTHORIZATION_DEV_SECRET,
  };
  for (const part of ['api', 'worker'] as const) {
    for (const [name, url] of SIGNING_SECRETS) {
      const withService = { ...freshSecrets(), [url]: 'https://service.example/check' };

      it(`${part}: ${name} missing where ${url} is set`, async () => {
        expectRefused(await runPart(part, withService), name);
      });

      const material = publicOnes[name].replace(/^whsec_/, '');
      for (const [form, value] of [
        ['with its whsec_ prefix', `whsec_${material}`],
        ['without its prefix', material],
      ] as const) {
        it(`${part}: ${name} public ${form}`, async () => {
          const run = await runPart(part, { ...withService, [name]: value });
          expectRefused(run, name, material);
        });
      }
    }
  }
});

describe('NODE_ENV=production: Postgres, the provider and screening', () => {
  const withPassword = (password: string) => {
    const url = new URL(databaseUrl);
    url.password = encodeURIComponent(password);
    return url.toString();
  };

  for (const part of ['api', 'worker'] as const) {
    for (const password of ['replace-me-postgres-password', 'pixflow']) {
      it(`${part}: DATABASE_URL with the public Postgres password ${password}`, async () => {
        const run = await runPart(part, { ...freshSecrets(), DATABASE_URL: withPassword(password) });
        // The password is never printed ("pixflow" is in every line's own words).
        expectRefused(run, 'DATABASE_URL', password === 'pixflow' ? undefined : password);
      });
    }

    it(`${part}: the sandbox's provider credential sent to a provider that is not the sandbox`, async () => {
      const run = await runPart(part, {
        ...freshSecrets(),
        PROVIDER_BASE_URL: 'https://api.provider.example',
        PROVIDER_AUTH_URL: 'https://auth.provider.example',
        PROVIDER_CLIENT_SECRET: fresh(),
        PROVIDER_API_KEY: 'sandbox-api-key',
      });
      expectRefused(run, 'PROVIDER_API_KEY', 'sandbox-api-key', /provider's own/);
    });

    it(`${part}: ELIGIBILITY_URL unset, with nothing saying the operator screens elsewhere`, async () => {
      const run = await runPart(part, { ...freshSecrets(), ELIGIBILITY_SCREENED_ELSEWHERE: undefined });
      expectRefused(run, 'ELIGIBILITY_URL', undefined, /ELIGIBILITY_SCREENED_ELSEWHERE=true/);
    });
  }
});

describe('NODE_ENV=production: Temporal off this machine only with credentials', () => {
  for (const part of ['api', 'worker'] as const) {
    it(`${part}: a Temporal that is not loopback, with neither a client certificate nor an API key`, async () => {
      const run = await runPart(part, { ...freshSecrets(), TEMPORAL_ADDRESS: 'temporal:7233' });
      expectRefused(
        run,
        'TEMPORAL_TLS_CERT_PATH / TEMPORAL_TLS_KEY_PATH',
        undefined,
        /Temporal at temporal:7233 without credentials.*TEMPORAL_TLS_CA_PATH.*TEMPORAL_API_KEY/,
      );
    });

    it(`${part}: TLS alone (a server certificate checked, no client certificate) is not enough`, async () => {
      const run = await runPart(part, {
        ...freshSecrets(),
        TEMPORAL_ADDRESS: 'temporal.example.com:7233',
        TEMPORAL_TLS: 'true',
      });
      expectRefused(run, 'TEMPORAL_TLS_CERT_PATH / TEMPORAL_TLS_KEY_PATH', undefined, /TEMPORAL_API_KEY/);
    });
  }
});

describe('NODE_ENV=production with every secret its own', () => {
  async function startsAndStops(
    part: Part,
    health: string,
    timeoutMs: number,
    secrets: Record<string, string | undefined>,
  ) {
    const { child, port, exited, stderr: errors } = await spawnPart(part, secrets);
    const ok = async () => {
      if (child.exitCode !== null) return true;
      return (await fetch(`http://127.0.0.1:${port}${health}`).catch(() => undefined))?.ok === true;
    };
    await waitUntil(ok, Boolean, { timeoutMs, intervalMs: 250 }).catch(() => {});
    expect(child.exitCode, errors()).toBeNull();
    expect((await fetch(`http://127.0.0.1:${port}${health}`)).status, errors()).toBe(200);
    child.kill('SIGTERM');
    expect(await exited, errors()).toBe(0);
    expect(errors()).not.toContain('invalid configuration');
    return errors();
  }

  it('the api starts and is ready, screening with its eligibility service', async () => {
    const errors = await startsAndStops('api', '/readyz', 30_000, {
      ...freshSecrets(),
      ELIGIBILITY_SCREENED_ELSEWHERE: undefined,
      ELIGIBILITY_URL: 'https://eligibility.example/check',
      ELIGIBILITY_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
    });
    expect(errors).not.toContain('screens no one');
  }, 60_000);

  it('the worker starts and is healthy, saying it screens no one when the operator screens elsewhere', async () => {
    const errors = await startsAndStops('worker', '/healthz', 120_000, freshSecrets());
    expect(errors).toMatch(/ELIGIBILITY_SCREENED_ELSEWHERE=true: pixflow screens no one/);
  }, 180_000);
});
