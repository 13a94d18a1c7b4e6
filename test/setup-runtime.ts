import { makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import { afterAll, afterEach } from 'vitest';
import { assertNoConsoleWarnings, watchConsoleWarnings } from './helpers/console-guard';
import { assertNoUnexpectedSdkLogs, flushSdkLogs, settleSdkLogs, testSdkLogger } from './helpers/sdk-log';

// Runs once per test process, before any worker or native connection exists. Core's own log
// lines are forwarded to the same logger as the worker's (by default core prints them straight
// to stderr), so every SDK warning is either declared by the test that causes it or fails it.
try {
  Runtime.install({
    logger: testSdkLogger,
    telemetryOptions: {
      logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'WARN', other: 'ERROR' }) },
    },
  });
} catch {
  // Already installed in this process.
}

watchConsoleWarnings();

afterEach(() => {
  flushSdkLogs();
  assertNoUnexpectedSdkLogs('during this test');
  assertNoConsoleWarnings();
});

// Last of the file's hooks: also sees what workers and servers logged while shutting down.
afterAll(async () => {
  await settleSdkLogs();
  assertNoUnexpectedSdkLogs('in this file outside its tests');
});
