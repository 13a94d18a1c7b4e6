import { type ChildProcess, spawn } from 'node:child_process';
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { parseCodecKeys, pixflowDataConverter } from '../../common/codec';
import { searchAttributeCliArgs, searchAttributeKeys } from '../../common/search-attributes';
import {
  devServerDynamicConfigArgs,
  ensureTemporalCli,
  ensureTestServer,
} from '../../scripts/temporal-tools';
import { freePort } from './ports';
import { expectSdkLog, type SdkLogEntry } from './sdk-log';
import { waitUntil } from './wait';

const { IndexedValueType } = temporal.api.enums.v1;

// Both servers start from binaries the project built itself (scripts/setup.ts), never from
// @temporalio/testing's default download, which this machine cannot reach.

export function startDevServer(opts: { port?: number; dbFilename?: string } = {}) {
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: ensureTemporalCli() },
      ip: '127.0.0.1',
      port: opts.port,
      dbFilename: opts.dbFilename,
      ui: false,
      searchAttributes: searchAttributeKeys,
      log: { format: 'pretty', level: 'error' },
      // Its start banner (version, ports) would print on every test run: the ports are known here.
      extraArgs: [...devServerDynamicConfigArgs(), '--output', 'none'],
    },
  });
}

export interface OwnDevServer {
  address: string;
  /** The server process itself (not a wrapper): a fault test may stop (SIGSTOP) and resume it. */
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * A dev server of the test's own, as a child process of this one (in memory, on a free port):
 * for a test that freezes or kills Temporal, which the run's shared server must never be.
 */
export async function spawnDevServer(): Promise<OwnDevServer> {
  const port = await freePort();
  const child = spawn(
    ensureTemporalCli(),
    [
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--headless',
      '--log-level',
      'error',
      ...searchAttributeCliArgs(),
      ...devServerDynamicConfigArgs(),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => {
    stderr = (stderr + b.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Never left behind by a test process that ends without its afterAll.
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  const stop = async () => {
    process.off('exit', kill);
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    kill();
    await exited;
  };
  const address = `127.0.0.1:${port}`;
  const ready = async () => {
    if (child.exitCode !== null) throw new Error(`the dev server exited while starting:\n${stderr}`);
    const connection = await Connection.connect({ address, connectTimeout: 1_000 }).catch(() => undefined);
    await connection?.close();
    return connection !== undefined;
  };
  await waitUntil(ready, (ok) => ok, {
    timeoutMs: 60_000,
    intervalMs: 250,
    onTimeout: () => new Error(`the dev server did not answer on ${address} within 60 s:\n${stderr}`),
  }).catch(async (err: unknown) => {
    await stop();
    throw err;
  });
  return { address, process: child, stop };
}

/** Tests encrypt payloads like production does, with a fixed test key. */
export const testCodecKeys = parseCodecKeys(`test:${Buffer.alloc(32, 7).toString('base64')}`, 'test');
export const testDataConverter = pixflowDataConverter(testCodecKeys);

const HEARTBEAT_CAPABILITY_WARNING =
  /^Temporal Server 1\.16\.0 or newer is required to guarantee that the latest heartbeat details/;
let heartbeatCapabilityNotices: (() => SdkLogEntry[]) | undefined;

/**
 * The heartbeat-capability warnings core gave for workers on the time-skipping server, collected
 * instead of printed (none if no time-skipping server was started in this file).
 */
export const heartbeatCapabilityWarnings = () => heartbeatCapabilityNotices?.() ?? [];

export async function startTimeSkippingServer() {
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: ensureTestServer() } },
    client: { dataConverter: testDataConverter },
  });
  // The Java test server does not advertise the activity_failure_include_heartbeat capability,
  // so core warns, once per worker, that heartbeat details may be lost when an activity fails.
  // pixflow's activities never heartbeat: on this server the warning is known, and collected.
  const { capabilities } = await env.connection.workflowService.getSystemInfo({});
  if (!capabilities?.activityFailureIncludeHeartbeat) {
    heartbeatCapabilityNotices ??= expectSdkLog(
      (e) => e.meta.sdkComponent === 'core' && HEARTBEAT_CAPABILITY_WARNING.test(e.message),
    );
  }
  // The test server knows no custom search attributes until told; the flows upsert ours.
  const types = {
    KEYWORD: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    INT: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  };
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(
      searchAttributeKeys.map((k) => [k.name, types[k.type as keyof typeof types]]),
    ),
  });
  return env;
}
