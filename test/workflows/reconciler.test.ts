import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { reconcilerWorkflowId } from '../../contracts/reconciler';
import { migrate } from '../../db/migrate';
import { createPool, type Pool } from '../../db/pool';
import { type RunningSandbox, startSandbox } from '../../sandbox';
import { TEST_PII_KEY } from '../helpers/flow-env';
import { recordHistory } from '../helpers/histories';
import { freshDatabase } from '../helpers/postgres';
import { connectorFor } from '../helpers/sandbox-client';
import { testDataConverter } from '../helpers/temporal';
import { waitUntil } from '../helpers/wait';
import { createTestWorker } from '../helpers/worker';

// The reconciler's own loop on the run's dev server, with a database of its own (a sweep takes
// every due row it finds): sweeps and waits, each workflow task on the deployment's current
// build. test/integration/reconciliation.test.ts shows what the sweeps find.

const { EventType, VersioningBehavior } = temporal.api.enums.v1;
const taskQueue = `reconciler-${randomBytes(4).toString('hex')}`;

let pool: Pool;
let sandbox: RunningSandbox;
let connection: Connection;
let native: NativeConnection;
let client: Client;
let stopWorker: () => Promise<void>;

beforeAll(async () => {
  const url = await freshDatabase();
  await migrate(url);
  pool = createPool(url, 2);
  sandbox = await startSandbox();
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection, dataConverter: testDataConverter });
  native = await NativeConnection.connect({ address: inject('temporalAddress') });
  const worker = await createTestWorker({
    connection: native,
    client,
    taskQueue,
    provider: connectorFor(sandbox.url),
    pool,
    piiKey: TEST_PII_KEY,
    reconciliation: { scheduleMs: [500], maxPerSecond: 50, intervalMs: 300 },
  });
  const running = worker.run();
  stopWorker = async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
  };
});
afterAll(async () => {
  await stopWorker?.();
  await native?.close();
  await connection?.close();
  await sandbox?.close();
  await pool?.end();
});

describe('reconciler', () => {
  it('sweeps, then waits the interval the sweep asks for, for ever; it moves to the current build', async () => {
    const handle = await client.workflow.start('reconcilerWorkflow', {
      workflowId: reconcilerWorkflowId(taskQueue),
      taskQueue,
    });
    const events = await waitUntil(
      async () => (await handle.fetchHistory()).events ?? [],
      (all) => all.filter((e) => e.eventType === EventType.EVENT_TYPE_TIMER_FIRED).length >= 2,
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    const sweeps = events.filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
    expect(sweeps.length).toBeGreaterThanOrEqual(2);
    expect(new Set(sweeps.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name))).toEqual(
      new Set(['reconcileDue']),
    );
    const behaviors = events
      .filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
      .map((e) => VersioningBehavior[e.workflowTaskCompletedEventAttributes?.versioningBehavior ?? 0]);
    expect(new Set(behaviors)).toEqual(new Set(['VERSIONING_BEHAVIOR_AUTO_UPGRADE']));
    // The worker first, so no sweep is cut short; the reconciler never ends by itself.
    await stopWorker();
    await handle.terminate('test over');
    await recordHistory(handle, 'reconciler-sweeps');
  });
});
