import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrate } from '../../db/migrate';
import { latestPolicyVersion } from '../../db/policy';
import { createPool, type Pool } from '../../db/pool';
import { type PolicyActor, proposePolicyChange } from '../../policy/changes';
import { applyAssignments, checkedPolicy } from '../../policy/diff';
import { type RunningSandbox, startSandbox } from '../../sandbox';
import { TEST_PII_KEY } from '../helpers/flow-env';
import { newCpf } from '../helpers/people';
import { freePort } from '../helpers/ports';
import { freshDatabase } from '../helpers/postgres';
import { testCodecKeys } from '../helpers/temporal';
import { waitUntil } from '../helpers/wait';

// One change of the rules policy reaches every process of a deployment within seconds, with no
// restart: two API processes and a worker (api/main.ts and worker/main.ts, as deployed) on one
// Postgres. Each API's GET /v1/customers/:cpf shows the new daily limit, and a withdrawal over it
// is refused by the worker under the new version, which its state records.

const ROOT = path.resolve(__dirname, '../..');
const API_KEY = 'policy-processes-key';
const taskQueue = `policy-procs-${randomBytes(4).toString('hex')}`;
const admin: PolicyActor = {
  operatorId: null,
  operatorEmail: 'ana.admin@example.com',
  operatorRole: 'admin',
};

let sandbox: RunningSandbox;
let pool: Pool;
let databaseUrl: string;
const children = new Set<ChildProcess>();
let apis: string[] = [];

/** What every process of the deployment is started with: its rule variables seed version 1. */
function deploymentEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    HTTP_HOST: '127.0.0.1',
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: taskQueue,
    // A deployment of its own: the run's other workers never take its tasks.
    WORKER_DEPLOYMENT_NAME: taskQueue,
    DATABASE_URL: databaseUrl,
    PII_HASH_KEY: TEST_PII_KEY,
    CODEC_KEYS: `${testCodecKeys.activeKeyId}:${testCodecKeys.keys.get(testCodecKeys.activeKeyId)?.toString('base64')}`,
    CODEC_ACTIVE_KEY_ID: testCodecKeys.activeKeyId,
    SANDBOX_PORT: new URL(sandbox.url).port,
    API_KEYS: API_KEY,
    ALERT_MONITOR: 'false',
    EVENTS_RELAY: 'false',
    // Version 1: payouts to the person's own CPF key need no onboarding, step-up or approvers here,
    // so the daily limit is the rule that decides.
    REQUIRE_VERIFIED_FOR_WITHDRAWALS: 'false',
    BIOMETRIC_STEP_UP_CENTAVOS: '0',
    PAYOUT_APPROVAL_ABOVE_CENTAVOS: '0',
    WITHDRAWAL_DAILY_LIMIT_CENTAVOS: '5000000',
  };
  for (const k of [
    'PROVIDER_BASE_URL',
    'PROVIDER_AUTH_URL',
    'PROVIDER_LIVENESS_URL',
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    'ELIGIBILITY_URL',
    'PAYOUT_AUTHORIZATION_URL',
  ])
    delete env[k];
  return env;
}

/** Starts `entry` and waits until `ready` answers 200. */
async function startProcess(entry: string, env: NodeJS.ProcessEnv, ready: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => {
    stderr = (stderr + b.toString('utf8')).slice(-4000);
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  await waitUntil(
    async () => {
      if (child.exitCode !== null) throw new Error(`${entry} exited while starting:\n${stderr}`);
      return fetch(ready)
        .then((r) => r.ok)
        .catch(() => false);
    },
    (ok) => ok,
    { timeoutMs: 90_000, intervalMs: 250 },
  );
  return child;
}

async function stop(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  if (child.pid) process.kill(child.pid, 'SIGTERM');
  await exited;
}

async function call(api: string, method: 'GET' | 'POST', pathname: string, body?: unknown) {
  const res = await fetch(`${api}${pathname}`, {
    method,
    headers: {
      authorization: `Bearer ${API_KEY}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON answers, read field by field
  return { status: res.status, body: (await res.json()) as any };
}

let n = 0;
const withdrawal = (cpf: string, amountCentavos: number) => ({
  transactionId: `policy-procs-${Date.now()}-${++n}`,
  client: { externalId: `user-${n}`, cpf, email: 'ana@example.com', name: 'Ana Souza' },
  pixKey: cpf,
  pixType: 'CPF',
  amountCentavos,
});

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  await migrate(databaseUrl);
  pool = createPool(databaseUrl, 2);
  sandbox = await startSandbox();
  const env = deploymentEnv();
  const [workerPort, metricsPort, api1, api2] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  // The three start at once on an empty policy table: they seed one version 1 between them.
  await Promise.all([
    startProcess(
      'worker/main.ts',
      { ...env, WORKER_HTTP_PORT: String(workerPort), WORKER_SDK_METRICS_PORT: String(metricsPort) },
      `http://127.0.0.1:${workerPort}/healthz`,
    ),
    ...[api1, api2].map((port) =>
      startProcess('api/main.ts', { ...env, API_PORT: String(port) }, `http://127.0.0.1:${port}/healthz`),
    ),
  ]);
  apis = [api1, api2].map((port) => `http://127.0.0.1:${port}`);
}, 180_000);

afterAll(async () => {
  for (const c of [...children]) await stop(c);
  await sandbox?.close();
  await pool?.end();
});

describe('a change of the rules policy', () => {
  it('reaches two APIs and a worker, as processes, within seconds: the new limit shown and applied, its version recorded', async () => {
    const cpf = newCpf();
    // Under version 1 (the environment's): a first payout goes through.
    const first = await call(apis[0] as string, 'POST', '/v1/withdrawals', withdrawal(cpf, 150_000));
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    expect(first.body.state).toMatchObject({ policyVersion: 1 });
    expect(first.body.state.status).not.toBe('refused');
    expect(await latestPolicyVersion(pool)).toMatchObject({ version: 1, changedBy: 'environment' });
    for (const api of apis) {
      const customer = await call(api, 'GET', `/v1/customers/${cpf}`);
      expect(customer.status, api).toBe(200);
      expect(customer.body.payoutsToday.limitCentavos, api).toBe(5_000_000);
    }

    // One change, once, in Postgres.
    const v1 = await latestPolicyVersion(pool);
    const changed = await proposePolicyChange(pool, admin, {
      policy: applyAssignments(checkedPolicy(v1?.policy), [['withdrawals.dailyLimitCentavos', '200000']]),
      reason: 'a lower daily limit while a fraud wave lasts',
      baseVersion: 1,
    });
    expect(changed).toMatchObject({ kind: 'applied', version: 2 });

    // Each API shows it within seconds, no restart.
    for (const api of apis) {
      const seen = await waitUntil(
        () => call(api, 'GET', `/v1/customers/${cpf}`),
        (r) => r.body.payoutsToday?.limitCentavos === 200_000,
        { timeoutMs: 10_000, intervalMs: 200 },
      );
      expect(seen.body.payoutsToday.remainingCentavos, api).toBe(50_000);
    }
    // And the worker decides under it: 150 000 + 100 000 passes the new limit (not the old one).
    const over = withdrawal(cpf, 100_000);
    await call(apis[1] as string, 'POST', '/v1/withdrawals', over);
    const refused = await waitUntil(
      () => call(apis[1] as string, 'GET', `/v1/withdrawals/${over.transactionId}`),
      (r) => r.status === 200 && r.body.state?.status === 'refused',
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    expect(refused.body.state).toMatchObject({ reason: 'limit_exceeded', policyVersion: 2 });
    // Within the new limit, still fine, under the same version.
    const within = await call(apis[0] as string, 'POST', '/v1/withdrawals', withdrawal(cpf, 50_000));
    expect(within.body.state).toMatchObject({ policyVersion: 2 });
    expect(within.body.state.status).not.toBe('refused');
  }, 120_000);
});
