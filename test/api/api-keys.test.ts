import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeScopes } from '../../api/v1';
import { createKey } from '../../api-keys/admin';
import { keyDigest } from '../../common/api-key';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import { listActions } from '../../db/operator-actions';
import { newPerson, ownCpfKey } from '../helpers/people';
import { freePort, tcpOpen } from '../helpers/ports';
import { type ApiEnv, eventually, expectProblem, json, startApiEnv } from './support';

// API keys as principals on the real stack: keys made and changed with the real operator CLI (a
// process of its own, on the env's database) and used over HTTP against the real API, which is
// never restarted in between.

const ROOT = path.resolve(__dirname, '../..');
/** The API's default: how long a process trusts what it read of a key. */
const CACHE_MS = 5_000;

let e: ApiEnv;
beforeAll(async () => {
  e = await startApiEnv(
    {},
    // Deposits for people never onboarded, endpoints on loopback: the keys are what is tested.
    { env: { REQUIRE_VERIFIED_FOR_DEPOSITS: 'false', WEBHOOK_ALLOW_LOOPBACK: 'true' } },
  );
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

/** `key create` through the CLI: the new key's id and its secret, printed once. */
async function createWithCli(name: string, scopes: string, ...more: string[]) {
  const r = await keyCli(['create', '--name', name, '--scopes', scopes, ...more]);
  expect(r.status, r.err).toBe(0);
  const id = /created (ak_[0-9a-f]{16})/.exec(r.out)?.[1];
  const secret = /key \(shown once\): (pxk_\S+)/.exec(r.out)?.[1];
  if (!id || !secret) throw new Error(`unexpected CLI output: ${r.out}`);
  return { id, secret };
}

const depositBody = () => ({ client: newPerson(), amountCentavos: 1_500 });

describe('scopes', () => {
  it('a deposits-only key makes a deposit and reads it, is refused a payout with 403 naming withdrawals:write, and starts nothing', async () => {
    const { secret } = await createWithCli('Checkout backend', 'deposits:write');
    const deposit = await e.call('POST', '/v1/deposits', { key: secret, body: depositBody() });
    expect(deposit.status).toBe(201);
    const { txid } = await json<{ txid: string }>(deposit);
    // write includes read.
    expect((await e.call('GET', `/v1/deposits/${txid}`, { key: secret })).status).toBe(200);

    const client = newPerson();
    const transactionId = `scope-${randomBytes(6).toString('hex')}`;
    const payout = await expectProblem(
      await e.call('POST', '/v1/withdrawals', {
        key: secret,
        body: { transactionId, client, ...ownCpfKey(client), amountCentavos: 700 },
      }),
      403,
      'insufficient-scope',
    );
    expect(payout.detail).toContain('withdrawals:write');
    expect(payout).toMatchObject({ missing_scopes: ['withdrawals:write'] });
    expect(await e.workflowExists(withdrawalWorkflowId(transactionId))).toBe(false);

    // The flows list reads every flow type: it needs all three reads.
    const flows = await expectProblem(await e.call('GET', '/v1/flows', { key: secret }), 403);
    expect(flows).toMatchObject({ missing_scopes: ['onboardings:read', 'withdrawals:read'] });
    // A bootstrap key from API_KEYS holds every scope.
    expect((await e.call('GET', '/v1/flows')).status).toBe(200);
  });
});

describe('changes reach the running API', () => {
  it('a key revoked with the CLI is refused within the cache bound, without a restart; the CLI audits it', async () => {
    const { id, secret } = await createWithCli('Payouts worker', 'withdrawals:read,customers:read');
    expect((await e.call('GET', '/v1/customers/63401825771', { key: secret })).status).toBe(404);
    const revoke = await keyCli(['revoke', '--id', id]);
    expect(revoke.status, revoke.err).toBe(0);
    const revokedAt = Date.now();
    const refused = await eventually(
      () => e.call('GET', '/v1/customers/63401825771', { key: secret }),
      (r) => r.status === 401,
      { timeoutMs: CACHE_MS + 3_000, intervalMs: 200 },
    );
    expect(Date.now() - revokedAt).toBeLessThan(CACHE_MS + 1_500);
    const problem = await expectProblem(refused, 401, 'unauthorized');
    expect(problem.title).toBe('API key revoked');

    const listed = await keyCli(['list']);
    expect(listed.out).toMatch(new RegExp(`${id} +pxk_\\S+ +revoked`));
    // The use before the revocation was stamped.
    expect(listed.out).toMatch(new RegExp(`${id}.*last used \\d{4}-`));
    const audit = await listActions(e.pool, { caseIds: [id], order: 'oldest', limit: 10 });
    expect(audit.map((a) => [a.action, a.outcome])).toEqual([
      ['api_key.create', 'done'],
      ['api_key.revoke', 'done'],
    ]);
    expect(audit[0]?.operatorEmail).toMatch(/^operator-cli:/);
    expect(JSON.stringify(audit)).not.toContain(secret);
    // Only the secret's SHA-256 is stored.
    const row = await e.pool.query('SELECT * FROM api_keys WHERE id = $1', [id]);
    expect(JSON.stringify(row.rows)).not.toContain(secret.slice(4));
    expect((row.rows[0].secret_hash as Buffer).equals(keyDigest(secret))).toBe(true);
  });

  it('an expired key is refused 401 at once, cached or not', async () => {
    const expiresAt = new Date(Date.now() + 3_000);
    const { secret } = await createKey(
      e.pool,
      { operatorId: null, operatorEmail: 'test', operatorRole: null },
      { name: 'short-lived', scopes: ['events:read'], expiresAt },
    );
    expect((await e.call('GET', '/v1/events', { key: secret })).status).toBe(200);
    // Past the key's own expiry, whenever the call above came back.
    await new Promise((r) => setTimeout(r, expiresAt.getTime() - Date.now() + 200));
    const problem = await expectProblem(await e.call('GET', '/v1/events', { key: secret }), 401);
    expect(problem.title).toBe('API key expired');
  });

  it('rotation keeps the key and the webhook endpoints it owns; the old secret works for the overlap only', async () => {
    const { id, secret: first } = await createWithCli('Events consumer', 'webhooks:write,events:read');
    const created = await e.call('POST', '/v1/webhook-endpoints', {
      key: first,
      body: { url: 'http://127.0.0.1:9/hooks', events: ['*'], description: 'rotation test' },
    });
    expect(created.status).toBe(201);
    const endpoint = (await json<{ id: string }>(created)).id;
    // Owned by the key's id, not by a digest of its secret.
    const owner = await e.pool.query('SELECT owner FROM webhook_endpoints WHERE id = $1', [endpoint]);
    expect(owner.rows[0].owner).toBe(id);

    const rotated = await keyCli(['rotate', '--id', id, '--overlap', '10m']);
    expect(rotated.status, rotated.err).toBe(0);
    expect(rotated.out).toContain('the previous secret works until');
    const second = /key \(shown once\): (pxk_\S+)/.exec(rotated.out)?.[1] ?? '';
    const endpointsOf = async (key: string) =>
      (
        await json<{ items: { id: string }[] }>(await e.call('GET', '/v1/webhook-endpoints', { key }))
      ).items.map((i) => i.id);
    expect(await endpointsOf(second)).toEqual([endpoint]);
    // Within the overlap the old secret is the same key.
    expect(await endpointsOf(first)).toEqual([endpoint]);
    // Another key does not see it.
    expect(await endpointsOf('another-key')).toEqual([]);

    // Rotated again without an overlap: the second secret stops within the cache bound, the first
    // (no longer the previous one) at once.
    const again = await keyCli(['rotate', '--id', id]);
    expect(again.status, again.err).toBe(0);
    expect(again.out).toContain('the previous secret no longer works');
    const third = /key \(shown once\): (pxk_\S+)/.exec(again.out)?.[1] ?? '';
    expect(await endpointsOf(third)).toEqual([endpoint]);
    await eventually(
      () => e.call('GET', '/v1/webhook-endpoints', { key: second }),
      (r) => r.status === 401,
      { timeoutMs: CACHE_MS + 3_000, intervalMs: 200 },
    );
    await eventually(
      () => e.call('GET', '/v1/webhook-endpoints', { key: first }),
      (r) => r.status === 401,
      { timeoutMs: CACHE_MS + 3_000, intervalMs: 200 },
    );
    const audit = await listActions(e.pool, { caseIds: [id], order: 'oldest', limit: 10 });
    expect(audit.map((a) => a.action)).toEqual(['api_key.create', 'api_key.rotate', 'api_key.rotate']);
  });

  it('the CLI refuses bad arguments naming each, and changes nothing', async () => {
    const before = (await e.pool.query('SELECT count(*)::int AS n FROM api_keys')).rows[0].n;
    const bad = await keyCli([
      'create',
      '--name',
      'x',
      '--scopes',
      'deposits:write,payouts:write',
      '--expires',
      'soon',
    ]);
    expect(bad.status).toBe(2);
    expect(bad.err).toContain('--scopes');
    expect(bad.err).toContain('--expires');
    expect((await keyCli(['revoke', '--id', 'not-a-key'])).status).toBe(2);
    expect((await keyCli(['revoke', '--id', 'ak_0000000000000000'])).status).toBe(1);
    expect((await e.pool.query('SELECT count(*)::int AS n FROM api_keys')).rows[0].n).toBe(before);
  });
});

describe('bootstrap keys', () => {
  it('the API process starts without API_KEYS once a key record exists, and takes that key', async () => {
    const { secret } = await createWithCli('Only key', 'events:read');
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: e.databaseUrl,
      API_PORT: String(port),
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      EVENTS_RELAY: 'false',
      LOG_LEVEL: 'silent',
    };
    delete env.API_KEYS;
    const api = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'api/main.ts')], {
      cwd: ROOT,
      env,
    });
    let err = '';
    api.stderr.on('data', (b) => {
      err += b;
    });
    try {
      await eventually(() => tcpOpen(port).then((open) => open || api.exitCode !== null), Boolean, {
        timeoutMs: 30_000,
      });
      expect(api.exitCode, err).toBeNull();
      const url = `http://127.0.0.1:${port}`;
      expect(
        (await fetch(`${url}/v1/events`, { headers: { authorization: `Bearer ${secret}` } })).status,
      ).toBe(200);
      expect(
        (await fetch(`${url}/v1/flows`, { headers: { authorization: `Bearer ${secret}` } })).status,
      ).toBe(403);
    } finally {
      api.kill('SIGKILL');
    }
  });
});

describe('route scopes are declared once', () => {
  /** The table of docs/security.md's "API keys" section: route to scopes. */
  function documentedScopes(): Record<string, string[]> {
    const doc = readFileSync(path.join(ROOT, 'docs/security.md'), 'utf8');
    const section = doc.split(/^## /m).find((s) => s.startsWith('API keys\n')) ?? '';
    const rows: Record<string, string[]> = {};
    for (const line of section.split('\n')) {
      const m = /^\| `((?:GET|POST|PUT|PATCH|DELETE) \/v1\/[^`]*)` \| (.+) \|$/.exec(line);
      if (m?.[1] && m[2])
        rows[m[1]] = [...m[2].matchAll(/`([a-z]+:(?:read|write))`/g)].map((x) => String(x[1]));
    }
    return rows;
  }

  it("docs/security.md's table says what the operations' scopes enforce, route for route", () => {
    const documented = documentedScopes();
    expect(Object.keys(documented).length).toBeGreaterThan(0);
    expect(documented).toEqual(Object.fromEntries(Object.entries(routeScopes).map(([r, s]) => [r, [...s]])));
  });

  it('/openapi.json names the same scopes on each operation, with its 403', async () => {
    const doc = (await (await fetch(`${e.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { security?: Record<string, string[]>[]; responses: object }>>;
    };
    const inDoc: Record<string, string[]> = {};
    for (const [p, ops] of Object.entries(doc.paths)) {
      if (!p.startsWith('/v1/')) continue;
      for (const [method, op] of Object.entries(ops)) {
        const route = `${method.toUpperCase()} ${p.replace(/\{(\w+)\}/g, ':$1')}`;
        inDoc[route] = op.security?.[0]?.apiKey ?? [];
        expect(Object.keys(op.responses), route).toContain('403');
      }
    }
    expect(inDoc).toEqual(Object.fromEntries(Object.entries(routeScopes).map(([r, s]) => [r, [...s]])));
  });
});
