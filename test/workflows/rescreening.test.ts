import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cpfHash } from '../../common/pii';
import {
  BATCHES_PER_RUN,
  type RescreeningProgress,
  rescreeningProgressQuery,
  rescreeningScheduleId,
} from '../../contracts/rescreening';
import { CUSTOMER_IMPEDED } from '../../db/events';
import { migrate } from '../../db/migrate';
import { createPool } from '../../db/pool';
import { httpEligibilityRegistry } from '../../eligibility/registry';
import { type RunningSandbox, startSandbox } from '../../sandbox';
import { eligibilityTestCpfs } from '../../sandbox/eligibility';
import { ensureRescreeningSchedule } from '../../worker/rescreening';
import { TEST_PII_KEY } from '../helpers/flow-env';
import { recordHistory } from '../helpers/histories';
import { newCpf } from '../helpers/people';
import { freshDatabase } from '../helpers/postgres';
import { checksAsked, seedCustomers } from '../helpers/rescreening';
import { connectorFor } from '../helpers/sandbox-client';
import { testDataConverter } from '../helpers/temporal';
import { waitUntil } from '../helpers/wait';
import { createTestWorker } from '../helpers/worker';

// The rescreening on the run's dev server: its Schedule starts a pass that asks the sandbox's
// registry emulation about every customer active in the last days, in paced batches, the real
// activities writing to a database of their own (a pass takes every active row it finds).

const { EventType, VersioningBehavior } = temporal.api.enums.v1;
const DAY_MS = 86_400_000;
const silent = { info() {}, warn() {} } as never;

let sandbox: RunningSandbox;
let connection: Connection;
let native: NativeConnection;
let client: Client;

beforeAll(async () => {
  sandbox = await startSandbox();
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection, dataConverter: testDataConverter });
  native = await NativeConnection.connect({ address: inject('temporalAddress') });
});
afterAll(async () => {
  await native?.close();
  await connection?.close();
  await sandbox?.close();
});

/** A database and a worker of their own, rescreening at `perSecond`. */
async function rescreeningStack(perSecond: number) {
  const url = await freshDatabase();
  await migrate(url);
  const pool = createPool(url, 3);
  const taskQueue = `rescreening-${randomBytes(4).toString('hex')}`;
  const settings = { activeDays: 15, perSecond, freshMs: DAY_MS };
  const worker = await createTestWorker({
    connection: native,
    client,
    taskQueue,
    provider: connectorFor(sandbox.url),
    pool,
    piiKey: TEST_PII_KEY,
    eligibility: httpEligibilityRegistry({
      url: `${sandbox.url}/eligibility/check`,
      secret: 'whsec_ZGV2LWVsaWdpYmlsaXR5LXNlY3JldC1jaGFuZ2UtbWU=',
      timeoutMs: 3_000,
    }),
    rescreening: settings,
  });
  const running = worker.run();
  return {
    pool,
    taskQueue,
    async close() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await pool.end();
    },
  };
}

describe('rescreening', () => {
  it('its Schedule screens every customer active in the last 15 days, within its rate; the impeded get their event', async () => {
    const s = await rescreeningStack(250);
    try {
      const eligible = Array.from({ length: 1_000 }, () => newCpf());
      const impeded = eligibilityTestCpfs.map((d) => d.cpf);
      const inactive = Array.from({ length: 5 }, () => newCpf());
      await seedCustomers(s.pool, [...eligible, ...impeded], DAY_MS);
      await seedCustomers(s.pool, inactive, 30 * DAY_MS);

      // Idempotent: a second worker's boot with another interval updates the same Schedule.
      const log = silent;
      const stay = { retryMs: 100, stopped: () => false };
      await ensureRescreeningSchedule(client, s.taskQueue, 7 * DAY_MS, log, stay);
      await ensureRescreeningSchedule(client, s.taskQueue, DAY_MS, log, stay);
      const schedule = client.schedule.getHandle(rescreeningScheduleId(s.taskQueue));
      const described = await schedule.describe();
      expect(described.spec.intervals?.map((i) => i.every)).toEqual([DAY_MS]);
      expect(described.policies.overlap).toBe('SKIP');

      const asked = await checksAsked(sandbox.url);
      const started = Date.now();
      await schedule.trigger();
      const workflowId = await waitUntil(
        async () => (await schedule.describe()).info.recentActions[0]?.action.workflow.workflowId,
        (id) => Boolean(id),
        { timeoutMs: 10_000, intervalMs: 100 },
      );
      const handle = client.workflow.getHandle(workflowId as string);
      const result = (await handle.result()) as RescreeningProgress;
      const elapsed = Date.now() - started;
      expect(result).toMatchObject({ screened: 1_003, impeded: 3, unavailable: 0, noCpf: 0, done: true });
      expect(await handle.query(rescreeningProgressQuery)).toEqual(result);
      // Each active person asked once; none of the inactive.
      expect((await checksAsked(sandbox.url)) - asked).toBe(1_003);
      // 1,003 people at 250 a second.
      expect(elapsed).toBeGreaterThanOrEqual((1_003 / 250) * 1000);
      expect(elapsed).toBeLessThan(30_000);

      const { rows } = await s.pool.query(
        `SELECT count(*) FILTER (WHERE eligibility = 'eligible')::int AS eligible,
                count(*) FILTER (WHERE eligibility = 'impeded' AND impeded_source = 'registry:rescreening')::int AS impeded,
                count(*) FILTER (WHERE eligibility IS NULL)::int AS unscreened
           FROM customers`,
      );
      expect(rows[0]).toEqual({ eligible: 1_000, impeded: 3, unscreened: 5 });
      const events = await s.pool.query('SELECT stream_id FROM events WHERE type = $1 ORDER BY stream_id', [
        CUSTOMER_IMPEDED,
      ]);
      expect(events.rows.map((r) => r.stream_id)).toEqual(
        impeded.map((c) => `customer-${cpfHash(c, TEST_PII_KEY)}`).sort(),
      );
      await schedule.delete();
    } finally {
      await s.close();
    }
  }, 90_000);

  it('keeps to its rate across batches, and carries its cursor and counts across runs', async () => {
    const s = await rescreeningStack(5);
    try {
      const cpfs = Array.from({ length: BATCHES_PER_RUN + 5 }, () => newCpf());
      await seedCustomers(s.pool, cpfs, DAY_MS);
      const asked = await checksAsked(sandbox.url);
      const started = Date.now();
      // One person a batch: more batches than a run takes, so the pass continues as new.
      const handle = await client.workflow.start('rescreeningWorkflow', {
        workflowId: `rescreening-rate-${s.taskQueue}`,
        taskQueue: s.taskQueue,
        args: [{ batchSize: 1 }],
      });
      const result = (await handle.result()) as RescreeningProgress;
      const elapsed = Date.now() - started;
      expect(result).toMatchObject({ screened: cpfs.length, impeded: 0, done: true });
      expect((await handle.describe()).runId).not.toBe(handle.firstExecutionRunId);
      expect((await checksAsked(sandbox.url)) - asked).toBe(cpfs.length);
      // 5 a second, at most, however small the batches.
      expect(elapsed).toBeGreaterThanOrEqual(cpfs.length * 200);
      const checked = await s.pool.query(
        'SELECT count(*)::int AS n FROM customers WHERE eligibility IS NOT NULL',
      );
      expect(checked.rows[0].n).toBe(cpfs.length);
      const first = client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId);
      const events = (await first.fetchHistory()).events ?? [];
      const behaviors = events
        .filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
        .map((e) => VersioningBehavior[e.workflowTaskCompletedEventAttributes?.versioningBehavior ?? 0]);
      expect(new Set(behaviors)).toEqual(new Set(['VERSIONING_BEHAVIOR_AUTO_UPGRADE']));
      await recordHistory(first, 'rescreening-continued');
      await recordHistory(handle, 'rescreening-done');
    } finally {
      await s.close();
    }
  }, 60_000);
});
