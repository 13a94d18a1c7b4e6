import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import {
  cachedCliIsCurrent,
  ensureTemporalCli,
  reportedCliVersion,
  TEMPORAL_CLI_REPORTED_VERSION,
  TEMPORAL_CLI_VERSION,
} from '../../scripts/temporal-tools';
import { settleSdkLogs } from '../helpers/sdk-log';
import { heartbeatCapabilityWarnings, startTimeSkippingServer } from '../helpers/temporal';

const workflowsPath = path.resolve(__dirname, '../fixtures/ping-workflow.ts');

describe('Temporal dev server (real, started by the global setup)', () => {
  let connection: Connection;
  let nativeConnection: NativeConnection;
  beforeAll(async () => {
    connection = await Connection.connect({ address: inject('temporalAddress') });
    nativeConnection = await NativeConnection.connect({ address: inject('temporalAddress') });
  });
  afterAll(async () => {
    await connection?.close();
    await nativeConnection?.close();
  });

  it('is the pinned CLI, which reports its own version', () => {
    expect(TEMPORAL_CLI_REPORTED_VERSION).toBe(TEMPORAL_CLI_VERSION.replace(/^v/, ''));
    expect(reportedCliVersion(ensureTemporalCli())).toBe(TEMPORAL_CLI_REPORTED_VERSION);
  });

  it('advertises the heartbeat-details capability, so its workers give no warning about it', async () => {
    const { capabilities } = await connection.workflowService.getSystemInfo({});
    expect(capabilities?.activityFailureIncludeHeartbeat).toBe(true);
  });

  it('runs a workflow that calls a real activity', async () => {
    const calls: string[] = [];
    const worker = await Worker.create({
      connection: nativeConnection,
      taskQueue: 'foundation-ping',
      workflowsPath,
      activities: {
        async echo(msg: string) {
          calls.push(msg);
          return `pong:${msg}`;
        },
      },
    });
    const client = new Client({ connection });
    const result = await worker.runUntil(
      client.workflow.execute('pingWorkflow', {
        taskQueue: 'foundation-ping',
        workflowId: `ping-${Date.now()}`,
        args: ['hello'],
      }),
    );
    expect(result).toBe('pong:hello');
    expect(calls).toEqual(['hello']);
  });
});

describe('time-skipping test server (Java, fetched from Maven Central)', () => {
  it('completes a workflow that sleeps 2 hours in seconds of wall time', async () => {
    const env = await startTimeSkippingServer();
    try {
      const worker = await Worker.create({
        connection: env.nativeConnection,
        taskQueue: 'foundation-sleep',
        workflowsPath,
        activities: { echo: async (m: string) => m },
      });
      const started = Date.now();
      const result = await worker.runUntil(
        env.client.workflow.execute('sleepyWorkflow', {
          taskQueue: 'foundation-sleep',
          workflowId: 'sleepy',
        }),
      );
      expect(result).toBe('woke');
      expect(Date.now() - started).toBeLessThan(60_000);
      // The server's clock moved two hours while the wall clock barely did.
      const desc = await env.client.workflow.getHandle('sleepy').describe();
      expect(desc.closeTime!.getTime() - desc.startTime.getTime()).toBeGreaterThanOrEqual(2 * 3600 * 1000);
      // This server lacks the heartbeat-details capability: core warned once, for this worker,
      // and the warning was collected rather than printed.
      await settleSdkLogs();
      expect(heartbeatCapabilityWarnings()).toHaveLength(1);
    } finally {
      await env.teardown();
    }
  });
});

describe('the cached Temporal CLI', () => {
  const fakeCli = (reports: string) => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'pixflow-cli-')), 'temporal');
    writeFileSync(file, `#!/bin/sh\necho "temporal version ${reports} (Server 1.29.1, UI 2.42.1)"\n`);
    chmodSync(file, 0o755);
    return file;
  };

  it('is reused when it reports the pinned version, built again when it reports another', () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(cachedCliIsCurrent(fakeCli(TEMPORAL_CLI_REPORTED_VERSION))).toBe(true);
      expect(stderr).not.toHaveBeenCalled();
      // What `go install` gives without the version stamped in at link time.
      const unstamped = fakeCli('0.0.0-DEV');
      expect(cachedCliIsCurrent(unstamped)).toBe(false);
      expect(String(stderr.mock.calls[0]?.[0])).toContain(
        `${unstamped} reports version 0.0.0-DEV, not ${TEMPORAL_CLI_REPORTED_VERSION}: building it again`,
      );
      expect(cachedCliIsCurrent(path.join(os.tmpdir(), 'no-such-dir', 'temporal'))).toBe(false);
    } finally {
      stderr.mockRestore();
    }
  });
});
