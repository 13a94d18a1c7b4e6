import { randomBytes } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { inject } from 'vitest';
import type { PayoutAuthorizationSettings } from '../../activities/payout-authorization';
import type { IdentityPaymentsConnector } from '../../connectors/identity-payments';
import type { PayoutControls } from '../../contracts/rules';
import type { Pool } from '../../db/pool';
import type { Policy } from '../../policy/schema';
import { staticPolicyReader } from '../../policy/seed';
import { type RunningSandbox, type StartSandboxOptions, startSandbox } from '../../sandbox';
import { testPool } from './postgres';
import { connectorFor, sandboxControl, sandboxDialectFromEnv } from './sandbox-client';
import { startTimeSkippingServer, testDataConverter } from './temporal';
import { createTestWorker, type MoneyRules } from './worker';

/**
 * The keyed CPF hash's key. Each sandbox dialect's run of the same test file has its own, so the
 * people (and the workflow ids named after them) of one run are never the other's.
 */
export const TEST_PII_KEY =
  process.env.SANDBOX_DIALECT === 'other'
    ? 'test-pii-hash-key-other-dialect-01'
    : 'test-pii-hash-key-0123456789';

export interface FlowEnv {
  env: TestWorkflowEnvironment;
  sandbox: RunningSandbox;
  provider: IdentityPaymentsConnector;
  pool: Pool;
  taskQueue: string;
  /** Sets the sandbox's clock to the time-skipping server's, so expiries agree on both sides. */
  syncSandboxClock(): Promise<void>;
  sandboxControl(path: string, body?: unknown): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * The time-skipping server running the real workflows, with the real activities talking HTTP
 * to a real sandbox and writing to the run's Postgres. `temporal: 'dev'`: the run's dev server
 * instead, in real time, for what the time-skipping server does not do as Temporal does (an
 * update to a flow that continued as new reaches the first run there).
 */
export async function startFlowEnv(
  opts: {
    sandbox?: StartSandboxOptions;
    providerTimeoutMs?: number;
    temporal?: 'time-skipping' | 'dev';
  } = {},
): Promise<FlowEnv> {
  let offset = 0;
  const env =
    opts.temporal === 'dev'
      ? await TestWorkflowEnvironment.createFromExistingServer({
          address: inject('temporalAddress'),
          client: { dataConverter: testDataConverter },
        })
      : await startTimeSkippingServer();
  const sandbox = await startSandbox({
    now: () => Date.now() + offset,
    dialect: sandboxDialectFromEnv(),
    ...opts.sandbox,
  });
  const pool = testPool();
  const provider = connectorFor(sandbox.url, {
    timeoutMs: opts.providerTimeoutMs ?? 5_000,
  });
  const taskQueue = `flows-${randomBytes(4).toString('hex')}`;
  const worker = await createTestWorker({
    connection: env.nativeConnection,
    client: env.client,
    taskQueue,
    provider,
    pool,
    piiKey: TEST_PII_KEY,
  });
  const running = worker.run();
  return {
    env,
    sandbox,
    provider,
    pool,
    taskQueue,
    async syncSandboxClock() {
      offset = (await env.currentTimeMs()) - Date.now();
    },
    sandboxControl: (path, body) => sandboxControl(sandbox.url, path, body),
    async close() {
      worker.shutdown();
      await running;
      await env.teardown();
      await sandbox.close();
      await pool.end();
    },
  };
}

/** A worker of its own on `<queue>-<suffix>` with `provider` (and rules, controls) while `body` runs. */
export async function onOwnWorker(
  f: FlowEnv,
  suffix: string,
  over: {
    provider?: IdentityPaymentsConnector;
    /** The rules policy the worker decides under (version 1); else the default with rules, controls. */
    policy?: Policy;
    rules?: MoneyRules;
    payoutControls?: PayoutControls;
    payoutAuthorization?: PayoutAuthorizationSettings;
  },
  body: (taskQueue: string) => Promise<void>,
): Promise<void> {
  const taskQueue = `${f.taskQueue}-${suffix}`;
  const worker = await createTestWorker({
    connection: f.env.nativeConnection,
    client: f.env.client,
    taskQueue,
    provider: over.provider ?? f.provider,
    pool: f.pool,
    piiKey: TEST_PII_KEY,
    ...(over.policy ? { policy: staticPolicyReader(over.policy) } : {}),
    ...(over.rules ? { rules: over.rules } : {}),
    ...(over.payoutControls ? { payoutControls: over.payoutControls } : {}),
    ...(over.payoutAuthorization ? { payoutAuthorization: over.payoutAuthorization } : {}),
  });
  const running = worker.run();
  try {
    await body(taskQueue);
  } finally {
    worker.shutdown();
    await running;
  }
}

/**
 * `call` as a provider that is down for its first `times` calls ("provider down (test)"), then
 * answers; `calls()` counts every call.
 */
export function downAtFirst<A extends unknown[], R>(times: number, call: (...args: A) => Promise<R>) {
  let calls = 0;
  return {
    call: async (...args: A): Promise<R> => {
      calls += 1;
      if (calls <= times) throw new Error('provider down (test)');
      return call(...args);
    },
    calls: () => calls,
  };
}

export { waitUntil as waitForState } from './wait';
