import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { databaseOfItsOwn } from '../helpers/own-database';
import { freePort } from '../helpers/ports';
import { waitUntil } from '../helpers/wait';

// The image's commands on the image's files: `npm run build` into a folder laid out as the
// Dockerfile's runtime stage lays out /app (package.json, node_modules, dist/), then every
// service's command from docker-compose.yml, as written, under the Dockerfile's NODE_OPTIONS,
// with no TypeScript loader: the migrations, then the sandbox, a worker and the API in
// production against the run's Temporal and a fresh Postgres, until each answers its health
// check, the pages that read files beside their code render, and a withdrawal runs through the
// compiled workflow bundle.

const ROOT = path.resolve(__dirname, '../..');

const composeSchema = z.object({
  services: z.record(z.string(), z.looseObject({ command: z.array(z.string()).optional() })),
});
const { services } = composeSchema.parse(
  parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }),
);
const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
const nodeOptions = /^ENV NODE_OPTIONS=(.+)$/m.exec(dockerfile)?.[1];
const imageCmd = JSON.parse(/^CMD (\[.+\])$/m.exec(dockerfile)?.[1] ?? 'null') as string[] | null;

const PARTS = ['migrate', 'sandbox', 'worker', 'api'] as const;
type Part = (typeof PARTS)[number];
const commandOf = (part: Part) => services[part]?.command ?? [];

let app: string;
const children: ChildProcess[] = [];

beforeAll(() => {
  app = mkdtempSync(path.join(os.tmpdir(), 'pixflow-image-'));
  copyFileSync(path.join(ROOT, 'package.json'), path.join(app, 'package.json'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(app, 'node_modules'), 'dir');
  const r = spawnSync('npm', ['run', 'build', '--', '--out-dir', path.join(app, 'dist')], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
}, 120_000);

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  if (app) rmSync(app, { recursive: true, force: true });
});

/** The service's command as the image runs it: `node` this Node, in /app (here `app`). */
function run(part: Part, env: NodeJS.ProcessEnv) {
  const [bin, ...args] = commandOf(part);
  expect(bin, part).toBe('node');
  const child = spawn(process.execPath, args, {
    cwd: app,
    env: { ...env, NODE_OPTIONS: nodeOptions },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => {
    stderr += b.toString('utf8');
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, exited, stderr: () => stderr };
}

/** Every `path.join(__dirname, '…')` of the compiled code whose parts are all literals. */
function besideCodePaths(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.js')) continue;
    const text = readFileSync(path.join(entry.parentPath, entry.name), 'utf8');
    for (const m of text.matchAll(/\.(?:join|resolve)\(__dirname((?:, '[^']*')+)\)/g)) {
      const parts = [...m[1]!.matchAll(/'([^']*)'/g)].map((p) => p[1]!);
      found.push(path.join(entry.parentPath, ...parts));
    }
  }
  return found;
}

describe('the image: compiled JavaScript, its commands as docker-compose.yml gives them', () => {
  it('runs every service from dist/ with plain node, the image the API by default', () => {
    for (const part of PARTS) {
      const [bin, file, ...rest] = commandOf(part);
      expect([bin, rest], part).toEqual(['node', []]);
      expect(file, part).toMatch(/^dist\/.+\.js$/);
      expect(existsSync(path.join(app, file!)), `${part}: ${file}`).toBe(true);
    }
    expect(imageCmd).toEqual(commandOf('api'));
    expect(nodeOptions).toBeTruthy();
  });

  it('holds every file the code reads from beside itself: views, assets, migrations', () => {
    const paths = besideCodePaths(path.join(app, 'dist'));
    // The back office's views and assets, the sandbox's views, the migrations.
    expect(paths.length).toBeGreaterThanOrEqual(4);
    for (const p of paths) expect(existsSync(p), path.relative(app, p)).toBe(true);
  });

  it('migrates a database, then runs the sandbox, a worker and the API in production', async () => {
    // A role and password of its own: production refuses the run's public one.
    const databaseUrl = await databaseOfItsOwn();
    const fresh = () => randomBytes(32).toString('hex');
    const apiKey = fresh();
    const ports = {
      SANDBOX_PORT: await freePort(),
      API_PORT: await freePort(),
      WORKER_HTTP_PORT: await freePort(),
      WORKER_SDK_METRICS_PORT: await freePort(),
    };
    const sandboxUrl = `http://127.0.0.1:${ports.SANDBOX_PORT}`;
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
    Object.assign(env, {
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      HTTP_HOST: '127.0.0.1',
      ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: `image-${randomBytes(4).toString('hex')}`,
      // A deployment of its own: its build made current touches no other test's workers.
      WORKER_DEPLOYMENT_NAME: `image-${randomBytes(4).toString('hex')}`,
      PROVIDER_BASE_URL: sandboxUrl,
      PROVIDER_AUTH_URL: sandboxUrl,
      API_KEYS: apiKey,
      CODEC_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      CODEC_ACTIVE_KEY_ID: 'k1',
      PII_HASH_KEY: fresh(),
      WEBHOOK_SECRET: fresh(),
      BACKOFFICE_SESSION_SECRET: fresh(),
      CODEC_TOKENS: fresh(),
      // Every person screened, as compose does: against the sandbox's registry emulation.
      ELIGIBILITY_URL: `${sandboxUrl}/eligibility/check`,
      ELIGIBILITY_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
    });

    // The migrations, read from dist/db/migrations: every one applied.
    const migrate = run('migrate', { NODE_ENV: 'production', DATABASE_URL: databaseUrl, PATH: env.PATH });
    expect(await migrate.exited, migrate.stderr()).toBe(0);
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM pgmigrations');
    await db.end();
    expect(rows[0]?.n).toBe(readdirSync(path.join(ROOT, 'db/migrations')).length);

    // The operator CLI, as a deployment runs it in the image (docs/production.md).
    const operator = spawnSync(
      process.execPath,
      ['dist/scripts/operator.js', 'create', '--email', 'ana@example.com', '--role', 'admin'],
      {
        cwd: app,
        env: { NODE_ENV: 'production', DATABASE_URL: databaseUrl, NODE_OPTIONS: nodeOptions },
        encoding: 'utf8',
      },
    );
    expect(operator.stdout, operator.stderr).toMatch(
      /^created ana@example\.com \(admin\)\npassword \(shown once\): \S{20,}\n$/,
    );

    const sandbox = run('sandbox', env);
    const worker = run('worker', env);
    const api = run('api', env);
    const running = { sandbox, worker, api };
    const healthy = (part: keyof typeof running, url: string) =>
      waitUntil(
        async () =>
          running[part].child.exitCode !== null
            ? 'exited'
            : (await fetch(url).catch(() => undefined))?.status === 200
              ? 'ok'
              : 'starting',
        (s) => s !== 'starting',
        { timeoutMs: 45_000, intervalMs: 250 },
      ).then((s) => expect(s, `${part}: ${running[part].stderr()}`).toBe('ok'));
    await Promise.all([
      healthy('sandbox', `${sandboxUrl}/healthz`),
      healthy('api', `http://127.0.0.1:${ports.API_PORT}/readyz`),
      healthy('worker', `http://127.0.0.1:${ports.WORKER_HTTP_PORT}/healthz`),
    ]);

    // Pages and files read from beside the compiled code.
    const api_ = `http://127.0.0.1:${ports.API_PORT}`;
    const page = async (url: string, type: RegExp) => {
      const res = await fetch(url);
      expect(res.status, url).toBe(200);
      expect(res.headers.get('content-type'), url).toMatch(type);
      return res.text();
    };
    expect(await page(`${sandboxUrl}/sandbox/console`, /text\/html/)).toContain('<div id="rows">');
    expect(await page(`${api_}/backoffice/sign-in`, /text\/html/)).toContain('<form');
    expect(await page(`${api_}/backoffice/assets/backoffice.css`, /text\/css/)).not.toBe('');

    // A flow through the worker's bundle of the compiled workflows: a payout for a person
    // never onboarded is refused by the first workflow task, and the API answers its refusal.
    const withdrawal = await fetch(`${api_}/v1/withdrawals`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        transactionId: `image-${randomBytes(4).toString('hex')}`,
        amountCentavos: 1_000,
        pixKey: '52998224725',
        pixType: 'CPF',
        client: { externalId: 'user-1', cpf: '52998224725', email: 'ana@example.com', name: 'Ana Souza' },
      }),
    });
    const answer = (await withdrawal.json()) as {
      reason?: string;
      policyVersion?: number;
      state?: { status?: string; reason?: string };
    };
    expect(withdrawal.status, JSON.stringify(answer)).toBe(409);
    expect(answer).toMatchObject({ reason: 'not_verified', policyVersion: 1 });
    expect(answer.state).toMatchObject({ status: 'refused', reason: 'not_verified' });

    for (const [part, p] of Object.entries(running)) {
      p.child.kill('SIGTERM');
      expect(await p.exited, `${part}: ${p.stderr()}`).toBe(0);
    }
  }, 90_000);
});
