import { randomBytes, randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generate as generateCpf } from '@fnando/cpf';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { expect, inject } from 'vitest';
import { payoutAuthorizationOf } from '../../activities/payout-authorization';
import { createApp } from '../../api/app';
import { loadConfig } from '../../common/config';
import { createLogger, type Logger } from '../../common/logger';
import { createApiMetrics } from '../../common/metrics';
import type { IdentityPaymentsConnector } from '../../connectors/identity-payments';
import type { FlowTimings } from '../../contracts/flow';
import { migrate } from '../../db/migrate';
import { createPool, type Pool } from '../../db/pool';
import { httpEligibilityRegistry } from '../../eligibility/registry';
import { type EventsRelaySettings, eventsRelaySettings, startEventsRelay } from '../../events/outbox-relay';
import { deliveryOptionsFrom } from '../../ingress/deliver';
import { startInboxRelay } from '../../ingress/inbox-relay';
import { type AlertMonitor, alertMonitorSettings, startAlertMonitor } from '../../monitoring/monitor';
import { policyFromEnv } from '../../policy/seed';
import { type PolicyStore, startPolicyStore } from '../../policy/store';
import { type RunningSandbox, type StartSandboxOptions, startSandbox } from '../../sandbox';
import { onboard, type PixflowAt, sendLivenessCallbacksTo } from '../helpers/people';

export { waitUntil as eventually } from '../helpers/wait';

import { ensureReconciler } from '../../worker/reconciler';
import { freshDatabase } from '../helpers/postgres';
import { connectorFor, sandboxControl, sandboxDialectFromEnv } from '../helpers/sandbox-client';
import { testDataConverter } from '../helpers/temporal';
import { createTestWorker, testReconciliation } from '../helpers/worker';

// The real API on port 0, against the run's Temporal dev server and Postgres, with a real worker
// (own task queue) whose activities talk HTTP to an in-process sandbox.

export const API_KEY = 'test-api-key-1';
// One key per test file: every file talks to the one dev server and the one database, and the
// sandbox's test documents are few, so two files onboarding the same document must not meet in
// one workflow id or one customer row.
export const PII_KEY = `test-pii-${randomUUID()}`;
export const CODEC_TOKEN = 'test-codec-token';

export interface ApiEnv {
  url: string;
  sandbox: RunningSandbox;
  provider: IdentityPaymentsConnector;
  pool: Pool;
  /** The env's own database (for a process such as `npm run operator` to reach). */
  databaseUrl: string;
  temporal: Client;
  taskQueue: string;
  /** The API's webhook ingress (one URL for every point) and the partner id it expects there. */
  ingress: string;
  partnerId: string;
  /** fetch to the API with the test key (or `key: null` for none); JSON body. */
  call(method: string, path: string, opts?: { body?: unknown; key?: string | null }): Promise<Response>;
  sandboxControl(path: string, body?: unknown): Promise<unknown>;
  /** Whether a workflow with this id exists in Temporal at all. */
  /** Whether this env (its task queue) started a workflow with this id. */
  workflowExists(workflowId: string): Promise<boolean>;
  /** The alert monitor, when the options asked for it. */
  alertMonitor?: AlertMonitor;
  /** The rules policy the API and the worker decide under (the env's database). */
  policy: PolicyStore;
  close(): Promise<void>;
}

export interface ApiEnvOptions {
  /** Extra configuration variables (e.g. API_RATE_LIMIT_PER_MINUTE). */
  env?: Record<string, string>;
  /** The API's logger (default: silent). */
  log?: Logger;
  /** Runs the outbound events relay beside the API, as api/main.ts does: these settings over fast ones. */
  eventsRelay?: Partial<EventsRelaySettings>;
  /** A Temporal server of the test's own (one it stops or freezes), instead of the run's shared one. */
  temporalAddress?: string;
  /** Runs the webhook inbox relay beside the API, as api/main.ts does (every 100 ms). */
  inboxRelay?: boolean;
  /** The sandbox's own options (e.g. a short QR lifetime). */
  sandbox?: StartSandboxOptions;
  /** Counts the payouts' deadline marks, as the worker's metric does. */
  countPayoutDeadline?: (mark: 'at_risk' | 'missed') => void;
  /** Screens deposits against the sandbox's eligibility emulation (ELIGIBILITY_URL). */
  eligibility?: boolean;
  /** Asks the sandbox's payout authorization emulation before each payout (PAYOUT_AUTHORIZATION_URL). */
  payoutAuthorization?: boolean;
  /** Runs the alert monitor beside the API, as api/main.ts does, with the env's ALERT_* settings. */
  alertMonitor?: boolean;
}

export async function startApiEnv(
  { pollScheduleMs, ...timings }: Partial<FlowTimings> & { pollScheduleMs?: number[] } = {},
  options: ApiEnvOptions = {},
): Promise<ApiEnv> {
  const address = options.temporalAddress ?? inject('temporalAddress');
  const taskQueue = `api-${randomBytes(4).toString('hex')}`;
  const sandbox = await startSandbox({ dialect: sandboxDialectFromEnv(), ...options.sandbox });
  // A database of its own: the env's reconciliation sweeps every waiting row it finds.
  const databaseUrl = await freshDatabase();
  await migrate(databaseUrl);
  const pool = createPool(databaseUrl, 5);
  const provider = connectorFor(sandbox.url, {
    timeoutMs: 5_000,
  });
  const config = loadConfig({
    API_KEYS: `${API_KEY},another-key`,
    TEMPORAL_ADDRESS: address,
    TEMPORAL_TASK_QUEUE: taskQueue,
    PII_HASH_KEY: PII_KEY,
    PROVIDER_MERCHANT: 'sandbox-merchant',
    LOG_LEVEL: 'silent',
    CODEC_TOKENS: CODEC_TOKEN,
    ...(options.eligibility ? { ELIGIBILITY_URL: `${sandbox.url}/eligibility/check` } : {}),
    ...(options.payoutAuthorization
      ? { PAYOUT_AUTHORIZATION_URL: `${sandbox.url}/operator/payout-authorization` }
      : {}),
    ...options.env,
  });
  const connection = await Connection.connect({ address });
  const temporal = new Client({ connection, dataConverter: testDataConverter });
  const nativeConnection = await NativeConnection.connect({ address });
  // One rules policy in the env's database, seeded from the env's rule variables: the worker and
  // the API decide under the same version, as one deployment does.
  const policy = startPolicyStore({
    pool,
    seed: policyFromEnv(options.env ?? {}),
    log: options.log ?? createLogger('api-test', 'silent'),
  });
  const worker = await createTestWorker({
    connection: nativeConnection,
    client: temporal,
    taskQueue,
    provider,
    pool,
    piiKey: PII_KEY,
    policy,
    payoutAuthorization: payoutAuthorizationOf(config),
    ...(options.countPayoutDeadline ? { countPayoutDeadline: options.countPayoutDeadline } : {}),
    // Reconciliation on the flows' schedule, for flows whose notification never comes.
    reconciliation: { ...testReconciliation, scheduleMs: pollScheduleMs ?? testReconciliation.scheduleMs },
    // The same registry the API screens deposits with, as one deployment has.
    ...(config.ELIGIBILITY_URL
      ? {
          eligibility: httpEligibilityRegistry({
            url: config.ELIGIBILITY_URL,
            secret: config.ELIGIBILITY_SECRET,
            timeoutMs: config.ELIGIBILITY_TIMEOUT_MS,
          }),
        }
      : {}),
  });
  const running = worker.run();
  await ensureReconciler(temporal, taskQueue, createLogger('api-test', 'silent'), {
    retryMs: 500,
    stopped: () => false,
  });
  const metrics = createApiMetrics();
  const app = createApp({
    config,
    temporal,
    pool,
    log: options.log ?? createLogger('api-test', 'silent'),
    policy,
    metrics,
    timings,
    codec: testDataConverter.payloadCodecs[0],
  });
  const server: http.Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const inboxRelay = options.inboxRelay
    ? startInboxRelay({
        pool,
        temporal,
        log: options.log ?? createLogger('api-test', 'silent'),
        intervalMs: 100,
        delivery: deliveryOptionsFrom(config),
        metrics,
      })
    : undefined;
  const eventsRelay = options.eventsRelay
    ? startEventsRelay({
        pool,
        log: options.log ?? createLogger('api-test', 'silent'),
        codecKeys: config.codecKeys,
        settings: { ...eventsRelaySettings(config), intervalMs: 100, idleMs: 100, ...options.eventsRelay },
      })
    : undefined;
  const alertMonitor = options.alertMonitor
    ? startAlertMonitor({
        pool,
        log: options.log ?? createLogger('api-test', 'silent'),
        settings: alertMonitorSettings(config),
        policy,
        metrics,
      })
    : undefined;

  return {
    url,
    sandbox,
    alertMonitor,
    policy,
    provider,
    pool,
    databaseUrl,
    temporal,
    taskQueue,
    ingress: `${url}/webhooks/provider/${encodeURIComponent(config.WEBHOOK_SECRET)}`,
    partnerId: config.WEBHOOK_PARTNER_ID,
    call(method, path, opts = {}) {
      const headers: Record<string, string> = {};
      const key = opts.key === undefined ? API_KEY : opts.key;
      if (key !== null) headers.authorization = `Bearer ${key}`;
      if (opts.body !== undefined) headers['content-type'] = 'application/json';
      return fetch(`${url}${path}`, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      });
    },
    sandboxControl: (path, body) => sandboxControl(sandbox.url, path, body),
    async workflowExists(workflowId) {
      try {
        // Other files (the fuzzer above all) make flows with any id on the shared server: only
        // one on this env's task queue is this env's.
        const d = await temporal.workflow.getHandle(workflowId).describe();
        return d.taskQueue === taskQueue;
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return false;
        throw err;
      }
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      // The worker stops first, its activities drained, so none completes into a run ended below.
      worker.shutdown();
      await running;
      // Flows left running on this task queue would never progress: end them.
      for await (const wf of temporal.workflow.list({
        query: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`,
      })) {
        await temporal.workflow
          .getHandle(wf.workflowId, wf.runId)
          .terminate('test over')
          .catch(() => {});
      }
      await eventsRelay?.stop();
      await alertMonitor?.stop();
      await inboxRelay?.stop();
      await nativeConnection.close();
      await connection.close();
      await sandbox.close();
      await policy.close();
      await pool.end();
    },
  };
}

/**
 * This env as test/helpers/people.ts reaches it (`onboard(await peopleAt(e))`). Onboarding needs
 * the provider's liveness callbacks: the sandbox sends them to the API's own ingress from now on
 * (only those; deposit and payout notifications stay as the test set them).
 */
export async function peopleAt(e: ApiEnv): Promise<PixflowAt> {
  await sendLivenessCallbacksTo(e.sandbox.url, e.ingress, e.partnerId);
  return { api: e.url, apiKey: API_KEY, sandbox: e.sandbox.url };
}

/** A fresh valid CPF: workflow ids are per CPF, and the dev server is shared by every test file. */
export const freshCpf = (): string => generateCpf();

export async function expectProblem(res: Response, status: number, slug?: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = (await res.json()) as {
    type: string;
    status: number;
    title: string;
    detail?: string;
    instance?: string;
    invalid_params?: { name: string; reason: string }[];
  };
  expect(body.status).toBe(status);
  if (slug) expect(body.type).toBe(`https://pixflow.dev/problems/${slug}`);
  return body;
}

/** A counter's value on the API's /metrics (0 before its first count). */
export async function counterValue(e: ApiEnv, name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`${e.url}/metrics`)).text();
  const series = `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',')}}`;
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/** A liveness callback as the provider posts it, for `document`, naming the request `ids` name. */
export function livenessCallback(
  e: ApiEnv,
  document: string,
  ids: { transaction_id: string; correlation_id: string },
  over: Record<string, string> = {},
) {
  return {
    ...ids,
    document,
    status_verification: 'completed',
    status_onboarding: 'approved',
    action_type: 'onboarding',
    event: 'signup',
    datetime: new Date().toISOString(),
    partner_id: e.partnerId,
    ...over,
  };
}

/** Posts a body to the API's webhook ingress (its liveness URL); the answer's status. */
export async function postLiveness(e: ApiEnv, body: unknown): Promise<number> {
  const res = await fetch(`${e.ingress}/liveness`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

export interface InboxRowView {
  id: number;
  raw_body: string;
  delivered_at: Date | null;
  last_error: string | null;
}

/** The inbox rows of one workflow, oldest first. */
export const inboxOf = async (e: ApiEnv, workflowId: string) =>
  (
    await e.pool.query<InboxRowView>(
      'SELECT id, raw_body, delivered_at, last_error FROM webhook_inbox WHERE workflow_id = $1 ORDER BY id',
      [workflowId],
    )
  ).rows;

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** What the flow routes answer: the workflow id and the flow's state. */
export interface FlowAnswer {
  workflowId: string;
  transactionId?: string;
  state: { status: string; [k: string]: unknown };
}

export const json = <T = FlowAnswer>(res: Response): Promise<T> => res.json() as Promise<T>;

/**
 * Onboards a person to approved through the API, the provider's own reviewer deciding a manual
 * review: the provider then counts the person as onboarded, so their later liveness links are
 * biometric identifications (what a step-up needs).
 */
export async function onboardApproved(e: ApiEnv, cpf: string): Promise<void> {
  await onboard(await peopleAt(e), cpf, { reviewedBy: 'provider' });
}
