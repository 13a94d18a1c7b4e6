import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RescreeningProgress, rescreeningScheduleId } from '../../contracts/rescreening';
import { migrate } from '../../db/migrate';
import { createPool, type Pool } from '../../db/pool';
import { type RunningSandbox, startSandbox } from '../../sandbox';
import { TEST_PII_KEY } from '../helpers/flow-env';
import { newCpf } from '../helpers/people';
import { freePort } from '../helpers/ports';
import { freshDatabase } from '../helpers/postgres';
import { checksAsked, seedCustomers } from '../helpers/rescreening';
import { testCodecKeys, testDataConverter } from '../helpers/temporal';
import { waitUntil } from '../helpers/wait';

// The rescreening on real worker processes (worker/main.ts, as deployed): the worker creates
// the Schedule itself, and one killed with SIGKILL in the middle of a batch leaves the pass to the
// next worker, which resumes it from the batch's last heartbeat. No one is skipped.

const ROOT = path.resolve(__dirname, '../..');
const DAY_MS = 86_400_000;
const PEOPLE = 400;
const PER_SECOND = 40;

let sandbox: RunningSandbox;
let pool: Pool;
let databaseUrl: string;
let connection: Connection;
let client: Client;
const taskQueue = `rescreening-kill-${randomBytes(4).toString('hex')}`;
const workers = new Set<ChildProcess>();

async function startWorker(): Promise<ChildProcess> {
  const [httpPort, metricsPort] = [await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    HTTP_HOST: '127.0.0.1',
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: taskQueue,
    // A deployment of its own: the run's other workers never take its tasks.
    WORKER_DEPLOYMENT_NAME: taskQueue,
    WORKER_HTTP_PORT: String(httpPort),
    WORKER_SDK_METRICS_PORT: String(metricsPort),
    DATABASE_URL: databaseUrl,
    PII_HASH_KEY: TEST_PII_KEY,
    CODEC_KEYS: `${testCodecKeys.activeKeyId}:${testCodecKeys.keys.get(testCodecKeys.activeKeyId)?.toString('base64')}`,
    CODEC_ACTIVE_KEY_ID: testCodecKeys.activeKeyId,
    SANDBOX_PORT: new URL(sandbox.url).port,
    ELIGIBILITY_URL: `${sandbox.url}/eligibility/check`,
    ELIGIBILITY_RESCREEN_PER_SECOND: String(PER_SECOND),
    ELIGIBILITY_RESCREEN_EVERY_MS: String(DAY_MS),
  };
  for (const k of [
    'PROVIDER_BASE_URL',
    'PROVIDER_AUTH_URL',
    'PROVIDER_LIVENESS_URL',
    'OTEL_EXPORTER_OTLP_ENDPOINT',
  ])
    delete env[k];
  const child = spawn(process.execPath, ['--import', 'tsx', 'worker/main.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => {
    stderr = (stderr + b.toString('utf8')).slice(-4000);
  });
  workers.add(child);
  child.once('exit', () => workers.delete(child));
  await waitUntil(
    async () => {
      if (child.exitCode !== null) throw new Error(`worker exited while starting:\n${stderr}`);
      return fetch(`http://127.0.0.1:${httpPort}/healthz`)
        .then((r) => r.ok)
        .catch(() => false);
    },
    (ok) => ok,
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  return child;
}

async function kill(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  if (child.pid) process.kill(child.pid, 'SIGKILL');
  await exited;
}

const screenedInDb = async () =>
  (await pool.query('SELECT count(*)::int AS n FROM customers WHERE eligibility IS NOT NULL')).rows[0]
    .n as number;

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  await migrate(databaseUrl);
  pool = createPool(databaseUrl, 2);
  sandbox = await startSandbox();
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection, dataConverter: testDataConverter });
});
afterAll(async () => {
  for (const w of [...workers]) await kill(w);
  await connection?.close();
  await sandbox?.close();
  await pool?.end();
});

describe('rescreening on worker processes', () => {
  it('survives its worker killed mid-batch: the next worker resumes the pass, every customer screened', async () => {
    const cpfs = Array.from({ length: PEOPLE }, () => newCpf());
    await seedCustomers(pool, cpfs, DAY_MS);
    const first = await startWorker();
    const schedule = client.schedule.getHandle(rescreeningScheduleId(taskQueue));
    // The worker creates the Schedule at boot.
    await waitUntil(
      () =>
        schedule.describe().then(
          () => true,
          () => false,
        ),
      (ok) => ok,
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    const asked = await checksAsked(sandbox.url);
    await schedule.trigger();
    // In the second batch of 100, before the pass is done.
    const atKill = await waitUntil(screenedInDb, (n) => n >= 130, { timeoutMs: 30_000, intervalMs: 100 });
    await kill(first);
    expect(atKill).toBeLessThan(PEOPLE);
    const stalled = await screenedInDb();
    await startWorker();

    const workflowId = (await schedule.describe()).info.recentActions[0]?.action.workflow.workflowId;
    const result = (await client.workflow.getHandle(workflowId as string).result()) as RescreeningProgress;
    expect(result.done).toBe(true);
    expect(await screenedInDb()).toBe(PEOPLE);
    // A person after the batch's last heartbeat is handled again (reusing the fresh answer).
    expect(result.screened).toBeGreaterThanOrEqual(PEOPLE);
    expect(result.screened).toBeLessThanOrEqual(2 * PEOPLE);
    const registryAsked = (await checksAsked(sandbox.url)) - asked;
    expect(registryAsked).toBeGreaterThanOrEqual(PEOPLE);
    expect(registryAsked).toBeLessThanOrEqual(2 * PEOPLE);
    // The killed batch was left unfinished, and finished by the second worker.
    expect(stalled).toBeLessThan(PEOPLE);
    await schedule.delete();
  }, 90_000);
});
