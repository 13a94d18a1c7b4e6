import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { ELIGIBILITY_DEV_SECRET } from '../../common/config';
import { SECRET_VARIABLES, SECRETS_READ_BY, type SecretVariable } from '../../common/production-secrets';
import { PUBLIC_CODEC_KEY_MATERIAL, PUBLIC_SECRET_VALUES } from '../../common/public-secrets';
import { migrate } from '../../db/migrate';
import { freePort, tcpOpen } from '../helpers/ports';
import { freshDatabase } from '../helpers/postgres';
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
  // Its own: the positive cases' API and worker run their relays and reconciler on it.
  databaseUrl = await freshDatabase();
  await migrate(databaseUrl);
});

const children: Array<() => void> = [];
afterEach(() => {
  for (const kill of children.splice(0)) kill();
});

async function productionEnv(secrets: Record<string, string | undefined>) {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of [...SECRET_VARIABLES, 'CODEC_ACTIVE_KEY_ID', 'PROVIDER_BASE_URL']) delete env[k];
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
function expectRefused(run: Run, name: SecretVariable, value?: string) {
  const what = `${name}: ${run.stderr}`;
  expect(run.code, `${what} (still running after ${run.ms} ms)`).toBe(1);
  expect(run.listened, what).toBe(false);
  const lines = run.stderr.split('\n').filter((l) => /^ {2}\S/.test(l));
  expect(lines, what).toHaveLength(1);
  expect(lines[0], what).toMatch(new RegExp(`^ {2}${name}: `));
  expect(lines[0], what).toMatch(/openssl rand -(hex|base64) 32/);
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

describe('NODE_ENV=production with an eligibility registry (ELIGIBILITY_URL)', () => {
  const withRegistry = { ...freshSecrets(), ELIGIBILITY_URL: 'https://eligibility.example/check' };
  // Not one of SECRET_VARIABLES: only read, so only required, where a registry is named.
  const name = 'ELIGIBILITY_SECRET' as SecretVariable;

  it('api: ELIGIBILITY_SECRET missing', async () => {
    expectRefused(await runPart('api', withRegistry), name);
  });

  it('api: ELIGIBILITY_SECRET set to a public value', async () => {
    const run = await runPart('api', { ...withRegistry, ELIGIBILITY_SECRET: ELIGIBILITY_DEV_SECRET });
    expectRefused(run, name, ELIGIBILITY_DEV_SECRET);
  });
});

describe('NODE_ENV=production with every secret its own', () => {
  async function startsAndStops(part: Part, health: string, timeoutMs: number) {
    const { child, port, exited, stderr: errors } = await spawnPart(part, freshSecrets());
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
  }

  it('the api starts and is ready', () => startsAndStops('api', '/readyz', 30_000), 60_000);

  it('the worker starts and is healthy', () => startsAndStops('worker', '/healthz', 120_000), 180_000);
});
