import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { generate as generateCpf } from '@fnando/cpf';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { payoutAuthorizationOf } from '../../activities/payout-authorization';
import { createApp } from '../../api/app';
import { loadConfig } from '../../common/config';
import { createLogger } from '../../common/logger';
import { hashPassword } from '../../common/passwords';
import { type EmbeddedPg, startEmbeddedPostgres } from '../../db/embedded';
import { migrate } from '../../db/migrate';
import { saveOperator } from '../../db/operators';
import { createPool, type Pool } from '../../db/pool';
import { httpEligibilityRegistry } from '../../eligibility/registry';
import { isDatabaseUnavailable, PROBLEM_BASE } from '../../http/problem';
import { policyFromEnv, staticPolicyReader } from '../../policy/seed';
import { type RunningSandbox, startSandbox } from '../../sandbox';
import { freePort } from '../helpers/ports';
import { connectorFor } from '../helpers/sandbox-client';
import { expectSdkLog } from '../helpers/sdk-log';
import { testDataConverter } from '../helpers/temporal';
import { waitUntil } from '../helpers/wait';
import { createTestWorker, testReconciliation } from '../helpers/worker';

// Postgres going away under load: its backends killed, then the server stopped and started
// again (a fast shutdown, then startup), while deposits, event reads, provider notifications and
// back-office pages keep coming. Every answer is a success or a 503 with Retry-After, never a
// 500. The Postgres is the test's own (the run's shared one is never restarted); the API,
// worker, sandbox and Temporal are real.

const API_KEY = `restart-${randomBytes(8).toString('hex')}`;
const PII_KEY = `restart-pii-${randomBytes(8).toString('hex')}`;
const WEBHOOK_SECRET = `restart-webhook-${randomBytes(8).toString('hex')}`;
const silent = createLogger('postgres-restart-test', 'silent');

let runDir: string;
let dataDir: string;
let pgPort: number;
let server: EmbeddedPg;
let databaseUrl: string;
let pool: Pool;
let sandbox: RunningSandbox;
let connection: Connection;
let nativeConnection: NativeConnection;
let worker: Awaited<ReturnType<typeof createTestWorker>>;
let running: Promise<void>;
let httpServer: http.Server;
let url: string;
const operator = { cookie: '' };

const startPostgres = () => startEmbeddedPostgres({ dataDir, port: pgPort, persistent: true });

beforeAll(async () => {
  // The worker's activities meet the same outage: each failed attempt is logged, and retried.
  expectSdkLog(
    ({ message, meta }) =>
      message === 'Activity failed' && meta.error instanceof Error && isDatabaseUnavailable(meta.error),
  );
  // A workflow task held up while the machine is busy restarting Postgres.
  expectSdkLog(({ message }) => /Workflow task duration exceeded/.test(message));
  runDir = mkdtempSync(path.join(os.tmpdir(), 'pixflow-pg-restart-'));
  // Postgres runs as its own user when we are root: it must be able to reach the folder.
  chmodSync(runDir, 0o755);
  dataDir = path.join(runDir, 'data');
  pgPort = await freePort();
  server = await startPostgres();
  databaseUrl = await server.createDatabase('pixflow');
  await migrate(databaseUrl);
  pool = createPool(databaseUrl, 5);
  sandbox = await startSandbox();
  const address = inject('temporalAddress');
  const taskQueue = `pg-restart-${randomBytes(4).toString('hex')}`;
  const config = loadConfig({
    API_KEYS: API_KEY,
    TEMPORAL_ADDRESS: address,
    TEMPORAL_TASK_QUEUE: taskQueue,
    PII_HASH_KEY: PII_KEY,
    WEBHOOK_SECRET,
    LOG_LEVEL: 'silent',
    REQUIRE_VERIFIED_FOR_DEPOSITS: 'false',
    // Screening reads and writes Postgres before a deposit starts (where the 500 came from).
    ELIGIBILITY_URL: `${sandbox.url}/eligibility/check`,
    // Every answer here is Postgres's doing, not the rate limit's.
    API_RATE_LIMIT_PER_MINUTE: '0',
    // A deposit whose flow waits out the outage answers 503 soon, and its loop asks again.
    TEMPORAL_CALL_TIMEOUT_MS: '3000',
  });
  const policy = staticPolicyReader(policyFromEnv({ REQUIRE_VERIFIED_FOR_DEPOSITS: 'false' }));
  connection = await Connection.connect({ address });
  const temporal = new Client({ connection, dataConverter: testDataConverter });
  nativeConnection = await NativeConnection.connect({ address });
  worker = await createTestWorker({
    connection: nativeConnection,
    client: temporal,
    taskQueue,
    provider: connectorFor(sandbox.url, { timeoutMs: 5_000 }),
    pool,
    piiKey: PII_KEY,
    policy,
    payoutAuthorization: payoutAuthorizationOf(config),
    reconciliation: testReconciliation,
    eligibility: httpEligibilityRegistry({
      url: config.ELIGIBILITY_URL as string,
      secret: config.ELIGIBILITY_SECRET,
      timeoutMs: config.ELIGIBILITY_TIMEOUT_MS,
    }),
  });
  running = worker.run();
  const app = createApp({
    config,
    temporal,
    pool,
    log: silent,
    policy,
    codec: testDataConverter.payloadCodecs[0],
  });
  httpServer = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
  await signInOperator();
}, 180_000);

afterAll(async () => {
  await new Promise<void>((resolve) => {
    if (!httpServer) return resolve();
    httpServer.close(() => resolve());
    httpServer.closeAllConnections();
  });
  worker?.shutdown();
  await running?.catch(() => {});
  await nativeConnection?.close();
  await connection?.close();
  await sandbox?.close();
  await pool?.end();
  await server?.stop();
  if (runDir) rmSync(runDir, { recursive: true, force: true });
}, 120_000);

async function signInOperator() {
  const email = 'restart.reviewer@example.com';
  const password = 'restart reviewer password';
  await saveOperator(pool, {
    email,
    name: 'Restart',
    role: 'reviewer',
    passwordHash: await hashPassword(password),
  });
  const tokenIn = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
  const cookieOf = (res: Response) => res.headers.getSetCookie()[0]?.split(';')[0] ?? '';
  const form = await fetch(`${url}/backoffice/sign-in`);
  const signedIn = await fetch(`${url}/backoffice/sign-in`, {
    method: 'POST',
    headers: { cookie: cookieOf(form), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: tokenIn(await form.text()), email, password }).toString(),
    redirect: 'manual',
  });
  expect(signedIn.status).toBe(303);
  operator.cookie = cookieOf(signedIn);
}

interface Answer {
  route: string;
  status: number;
  retryAfter: string | null;
  contentType: string;
  body: string;
}

let n = 0;
const newTxid = () => `${Date.now()}${String(++n).padStart(6, '0')}`.padEnd(32, '5').slice(0, 32);

/** Each route the restart must not turn into a 500: one request, its answer (status 0: no answer). */
const ROUTES: Record<string, () => Promise<Response>> = {
  'POST /v1/deposits': () =>
    fetch(`${url}/v1/deposits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        txid: newTxid(),
        amountCentavos: 10_000,
        client: {
          externalId: `restart-${n}`,
          cpf: generateCpf(),
          email: 'ana@example.com',
          name: 'Ana Souza',
        },
      }),
      signal: AbortSignal.timeout(30_000),
    }),
  'GET /v1/events': () =>
    fetch(`${url}/v1/events`, {
      headers: { authorization: `Bearer ${API_KEY}` },
      signal: AbortSignal.timeout(30_000),
    }),
  'POST /webhooks/provider': () =>
    fetch(`${url}/webhooks/provider/${WEBHOOK_SECRET}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: newTxid(), type: 'deposit', action: 'updated', partner_id: 'pixflow' }),
      signal: AbortSignal.timeout(30_000),
    }),
  'GET /backoffice': () =>
    fetch(`${url}/backoffice`, {
      headers: { cookie: operator.cookie },
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    }),
};

async function ask(route: string): Promise<Answer> {
  try {
    const res = await (ROUTES[route] as () => Promise<Response>)();
    return {
      route,
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      contentType: res.headers.get('content-type') ?? '',
      body: (await res.text()).slice(0, 2_000),
    };
  } catch (err) {
    return { route, status: 0, retryAfter: null, contentType: '', body: String(err) };
  }
}

const ok = (a: Answer) => a.status >= 200 && a.status < 300;

/** Every route answering a success again (the pool's connections made anew). */
const allOk = () =>
  waitUntil(
    async () => (await Promise.all(Object.keys(ROUTES).map(ask))).filter((a) => !ok(a)),
    (failing) => failing.length === 0,
    { timeoutMs: 60_000, intervalMs: 500 },
  );

describe('Postgres restarting under load', () => {
  it('answers every request with a success or a 503 with Retry-After, never a 500', async () => {
    // Before: every route answers a success.
    await allOk();

    const answers: Answer[] = [];
    let loading = true;
    // Deposits take longest: more of them at once, so some start while Postgres is down.
    const loops = Object.keys(ROUTES).flatMap((route) =>
      (route === 'POST /v1/deposits' ? [0, 1, 2, 3, 4, 5] : [0, 1]).map(async (i) => {
        await sleep(i * 150);
        while (loading) {
          answers.push(await ask(route));
          await sleep(20);
        }
      }),
    );

    await sleep(500);
    // Its backends killed, as an operator's pg_terminate_backend or a crashed backend would.
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    for (let i = 0; i < 5; i++) {
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'pixflow' AND pid <> pg_backend_pid()",
      );
      await sleep(300);
    }
    await admin.end();
    // Then the server itself: a fast shutdown, down a while, started again (startup, recovery).
    await server.stop();
    await sleep(5_000);
    server = await startPostgres();
    await sleep(2_000);
    loading = false;
    await Promise.all(loops);

    const byStatus = (a: Answer) => `${a.route} ${a.status}`;
    const wrong = answers.filter((a) => !ok(a) && a.status !== 503);
    expect(wrong.map((a) => `${byStatus(a)} ${a.body}`)).toEqual([]);
    const unavailable = answers.filter((a) => a.status === 503);
    // Postgres's own 503s, not only Temporal's deadline.
    expect(unavailable.some((a) => a.body.includes('the database cannot answer now'))).toBe(true);
    // The outage was seen, on every route: else this proves nothing.
    for (const route of Object.keys(ROUTES))
      expect(
        unavailable.filter((a) => a.route === route).length,
        `${route}: ${answers
          .filter((a) => a.route === route)
          .map(byStatus)
          .join(', ')}`,
      ).toBeGreaterThan(0);
    for (const a of unavailable) {
      expect(a.retryAfter, byStatus(a)).toBe('5');
      if (a.route === 'GET /backoffice') expect(a.contentType, byStatus(a)).toMatch(/text\/html/);
      else {
        expect(a.contentType, byStatus(a)).toMatch(/application\/problem\+json/);
        // The ingress names its own: the notification is not stored, the provider sends it again.
        const slug = a.route === 'POST /webhooks/provider' ? 'inbox-unavailable' : 'unavailable';
        expect(JSON.parse(a.body).type, byStatus(a)).toBe(`${PROBLEM_BASE}${slug}`);
      }
    }

    // After: every route answers a success again, with nothing restarted but Postgres.
    await allOk();
  }, 180_000);
});
