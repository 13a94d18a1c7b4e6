import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { runner } from 'node-pg-migrate';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPixflowClient, dataOf, PixflowProblem } from '../../clients/typescript/src';
import { keyDigest, newKeyId, newSecret } from '../../common/api-key';
import { AUTH_FAILURE_DEFAULTS } from '../../common/config';
import { createBrand } from '../../db/brands';
import { MIGRATIONS_DIR, migrate } from '../../db/migrate';
import { listActions } from '../../db/operator-actions';
import { API_KEY, type ApiEnv, expectProblem, startApiEnv } from './support';

// The brand every API request acts for, on the real API: keys made with the real operator CLI
// (a process of its own, on the env's database), a key left by the version before brands
// (the migration run on its row), and the acting brand read from the API's own access log.

const ROOT = path.resolve(__dirname, '../..');
const MIGRATION = '1732000000033_api_key_brands';

/** Every access-log line the API wrote, parsed. */
const logLines: Record<string, unknown>[] = [];
const log = pino(
  { level: 'info' },
  new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) logLines.push(JSON.parse(line));
      done();
    },
  }),
);

let e: ApiEnv;
/** A key record the version before brands made, its secret. */
let oldSecret: string;
let oldId: string;

beforeAll(async () => {
  e = await startApiEnv({}, { log });
  // The database as the version before brands left it, with a key it made, then the upgrade.
  const fromThisOn = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql') && f >= MIGRATION);
  await runner({
    databaseUrl: e.databaseUrl,
    dir: MIGRATIONS_DIR,
    direction: 'down',
    migrationsTable: 'pgmigrations',
    count: fromThisOn.length,
    log: () => {},
    logger: { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} },
  });
  const columns = await e.pool.query(
    "SELECT column_name FROM information_schema.columns WHERE table_name = 'api_keys' AND column_name = 'brand_id'",
  );
  expect(columns.rows).toEqual([]);
  const fresh = newSecret();
  oldSecret = fresh.secret;
  oldId = newKeyId();
  await e.pool.query(
    `INSERT INTO api_keys (id, name, scopes, prefix, secret_hash, created_by, expires_at)
     VALUES ($1, 'Made before brands', ARRAY['events:read'], $2, $3, 'operator-cli:old', NULL)`,
    [oldId, fresh.prefix, fresh.digest],
  );
  await migrate(e.databaseUrl);
  const actor = { operatorId: null, operatorEmail: 'admin@example.com', operatorRole: 'admin' };
  await createBrand(e.pool, actor, { id: 'bet-rio', name: 'Bet Rio' });
  await createBrand(e.pool, actor, { id: 'bet-sp', name: 'Bet SP' });
}, 120_000);
afterAll(() => e?.close());

/** `npm run operator -- key ...`, as a person runs it; never synchronously, as this process runs the worker. */
function keyCli(args: string[]): Promise<{ status: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'scripts/operator.ts'), 'key', ...args],
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: e.databaseUrl }, encoding: 'utf8', timeout: 60_000 },
      (err, out, stderr) =>
        resolve({ status: err ? (typeof err.code === 'number' ? err.code : null) : 0, out, err: stderr }),
    );
  });
}

async function createWithCli(name: string, ...more: string[]) {
  const r = await keyCli(['create', '--name', name, '--scopes', 'events:read', ...more]);
  expect(r.status, r.err).toBe(0);
  const id = /created (ak_[0-9a-f]{16})/.exec(r.out)?.[1];
  const secret = /key \(shown once\): (pxk_\S+)/.exec(r.out)?.[1];
  if (!id || !secret) throw new Error(`unexpected CLI output: ${r.out}`);
  return { id, secret, out: r.out };
}

let requests = 0;
/** GET /v1/events with this key and Pixflow-Brand (none when undefined); its answer and the access-log line's brand. */
async function events(key: string, brand?: string) {
  const requestId = `brand-test-${++requests}`;
  const res = await fetch(`${e.url}/v1/events`, {
    headers: {
      authorization: `Bearer ${key}`,
      'x-request-id': requestId,
      ...(brand === undefined ? {} : { 'pixflow-brand': brand }),
    },
  });
  // The access-log line is written when the answer is finished, which may be after fetch resolves.
  let line: Record<string, unknown> | undefined;
  for (let i = 0; i < 50 && !line; i++) {
    line = logLines.find((l) => l.requestId === requestId && l.msg === 'request');
    if (!line) await new Promise((r) => setTimeout(r, 20));
  }
  return { res, loggedBrand: line?.brand };
}

const refusedNamingTheHeader = async (res: Response, status: number, slug: string) => {
  const p = await expectProblem(res, status, slug);
  expect(p.detail).toMatch(/^Pixflow-Brand: /);
  expect(p.invalid_params?.map((i) => i.name)).toEqual(['header.Pixflow-Brand']);
  return p;
};

describe('a brand key', () => {
  it('acts for its brand, named or not, and is refused 403 naming the header for any other brand', async () => {
    const { secret } = await createWithCli('Bet Rio backend', '--brand', 'bet-rio');
    for (const named of [undefined, 'bet-rio']) {
      const { res, loggedBrand } = await events(secret, named);
      expect(res.status).toBe(200);
      expect(loggedBrand).toBe('bet-rio');
    }
    // Another brand, or one that does not exist: the key learns nothing of which.
    for (const other of ['bet-sp', 'default', 'no-such-brand']) {
      const p = await refusedNamingTheHeader((await events(secret, other)).res, 403, 'brand-not-allowed');
      expect(p.detail).not.toContain(other);
    }
    await refusedNamingTheHeader((await events(secret, 'Bet Rio')).res, 400, 'validation-error');
  });

  it('is the default brand’s when the CLI names none, as a bootstrap key of API_KEYS is', async () => {
    const { secret, out } = await createWithCli('Single-brand backend');
    expect(out).toContain('for brand default');
    for (const key of [secret, API_KEY]) {
      const { res, loggedBrand } = await events(key);
      expect(res.status).toBe(200);
      expect(loggedBrand).toBe('default');
      expect((await events(key, 'default')).res.status).toBe(200);
      await refusedNamingTheHeader((await events(key, 'bet-rio')).res, 403, 'brand-not-allowed');
    }
  });
});

describe('brand refusals', () => {
  it('are no failed authentications: past the failed-authentication limit of them, the address is not turned away', async () => {
    const { secret } = await createWithCli('Refused often', '--brand', 'bet-rio');
    for (let i = 0; i <= AUTH_FAILURE_DEFAULTS.limit; i++) {
      expect((await events(secret, 'bet-sp')).res.status).toBe(403);
    }
    expect((await events(secret)).res.status).toBe(200);
    expect((await events(API_KEY)).res.status).toBe(200);
  });
});

describe('a platform key', () => {
  it('acts for the brand each request names; none is 400, an unknown brand 400, never a 5xx', async () => {
    const { id, secret, out } = await createWithCli('White-label platform', '--platform');
    expect(out).toContain('for the platform');
    await refusedNamingTheHeader((await events(secret)).res, 400, 'brand-required');
    for (const brand of ['bet-rio', 'bet-sp', 'default']) {
      const { res, loggedBrand } = await events(secret, brand);
      expect(res.status).toBe(200);
      expect(loggedBrand).toBe(brand);
    }
    const unknown = await refusedNamingTheHeader((await events(secret, 'bet-rj')).res, 400, 'unknown-brand');
    expect(unknown.detail).toContain('bet-rj');
    await refusedNamingTheHeader((await events(secret, 'bet-rio, bet-sp')).res, 400, 'validation-error');

    const row = await e.pool.query('SELECT brand_id FROM api_keys WHERE id = $1', [id]);
    expect(row.rows).toEqual([{ brand_id: null }]);
  });

  it('a brand made after the API read an unknown one is taken within the cache bound', async () => {
    const { secret } = await createWithCli('Platform, new brand', '--platform');
    await refusedNamingTheHeader((await events(secret, 'bet-mg')).res, 400, 'unknown-brand');
    await createBrand(
      e.pool,
      { operatorId: null, operatorEmail: 'admin@example.com', operatorRole: 'admin' },
      { id: 'bet-mg', name: 'Bet MG' },
    );
    let status = 0;
    for (let i = 0; i < 40 && status !== 200; i++) {
      status = (await events(secret, 'bet-mg')).res.status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 250));
    }
    expect(status).toBe(200);
  });
});

describe('keys made before brands', () => {
  it('belong to the default brand after the migration and act for it', async () => {
    const row = await e.pool.query('SELECT brand_id FROM api_keys WHERE id = $1', [oldId]);
    expect(row.rows).toEqual([{ brand_id: 'default' }]);
    const { res, loggedBrand } = await events(oldSecret);
    expect(res.status).toBe(200);
    expect(loggedBrand).toBe('default');
    await refusedNamingTheHeader((await events(oldSecret, 'bet-rio')).res, 403, 'brand-not-allowed');
    // A row the previous version inserts during a rolling upgrade (no brand named) is the default brand's too.
    const later = newSecret();
    const laterId = newKeyId();
    await e.pool.query(
      `INSERT INTO api_keys (id, name, scopes, prefix, secret_hash, created_by)
       VALUES ($1, 'Made by the old version', ARRAY['events:read'], $2, $3, 'operator-cli:old')`,
      [laterId, later.prefix, keyDigest(later.secret)],
    );
    expect((await events(later.secret)).loggedBrand).toBe('default');
  });
});

describe('the CLI', () => {
  it('lists each key’s brand, or platform, and audits the brand a key was made for', async () => {
    const rio = await createWithCli('Listed for Bet Rio', '--brand', 'bet-rio');
    const platform = await createWithCli('Listed platform', '--platform');
    const listed = await keyCli(['list']);
    expect(listed.status, listed.err).toBe(0);
    expect(listed.out).toMatch(new RegExp(`${rio.id} .* bet-rio +"Listed for Bet Rio"`));
    expect(listed.out).toMatch(new RegExp(`${platform.id} .* platform +"Listed platform"`));
    expect(listed.out).toMatch(new RegExp(`${oldId} .* default +"Made before brands"`));
    const audit = await listActions(e.pool, { caseIds: [rio.id, platform.id], order: 'oldest', limit: 10 });
    expect(audit.map((a) => [a.caseId, a.action, (a.after as { brand?: unknown }).brand])).toEqual([
      [rio.id, 'api_key.create', 'bet-rio'],
      [platform.id, 'api_key.create', null],
    ]);
  });

  it('refuses a brand that does not exist, a malformed one, and --brand with --platform, making nothing', async () => {
    const count = async () => (await e.pool.query('SELECT count(*)::int AS n FROM api_keys')).rows[0].n;
    const before = await count();
    const unknown = await keyCli(['create', '--name', 'x', '--scopes', 'events:read', '--brand', 'bet-rj']);
    expect(unknown.status).toBe(1);
    expect(unknown.err).toContain('--brand: no brand bet-rj');
    const malformed = await keyCli(['create', '--name', 'x', '--scopes', 'events:read', '--brand', 'Bet_RJ']);
    expect(malformed.status).toBe(2);
    expect(malformed.err).toContain('--brand:');
    const both = await keyCli([
      'create',
      '--name',
      'x',
      '--scopes',
      'events:read',
      '--brand',
      'bet-rio',
      '--platform',
    ]);
    expect(both.status).toBe(2);
    expect(both.err).toContain('--platform:');
    expect(await count()).toBe(before);
  });
});

describe('the TypeScript client', () => {
  it('names the brand for every call, or for one call, as a platform key needs', async () => {
    const { secret } = await createWithCli('Platform on the client', '--platform');
    const brandOfLast = () =>
      logLines.filter((l) => l.msg === 'request' && l.route === '/v1/events').at(-1)?.brand;
    const forRio = createPixflowClient({ baseUrl: e.url, apiKey: secret, brand: 'bet-rio' });
    expect(await dataOf(forRio.GET('/v1/events', {}))).toMatchObject({ items: [] });
    expect(brandOfLast()).toBe('bet-rio');
    // One call names another brand, typed from the document.
    await dataOf(forRio.GET('/v1/events', { params: { header: { 'Pixflow-Brand': 'bet-sp' } } }));
    expect(brandOfLast()).toBe('bet-sp');

    const unnamed = createPixflowClient({ baseUrl: e.url, apiKey: secret });
    const refused = await unnamed.GET('/v1/events', {}).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(PixflowProblem);
    expect(refused).toMatchObject({
      status: 400,
      type: 'https://pixflow.dev/problems/brand-required',
      fieldErrors: [{ name: 'header.Pixflow-Brand', reason: expect.any(String) }],
    });
  });
});
