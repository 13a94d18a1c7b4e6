import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { trace } from '@opentelemetry/api';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createActivities } from '../../activities';
import { createApp } from '../../api/app';
import { loadConfig } from '../../common/config';
import { createLogger } from '../../common/logger';
import { accountKeyHash, cpfHash } from '../../common/pii';
import {
  setupTracing,
  type Tracing,
  tracingBundleModules,
  tracingClientInterceptors,
  tracingWorkerOptions,
} from '../../common/tracing';
import type { Pool } from '../../db/pool';
import { policyFromEnv, staticPolicyReader } from '../../policy/seed';
import { type RunningSandbox, startSandbox } from '../../sandbox';
import { workflowBundle } from '../../worker/build-id';
import { onboard, type Person } from '../helpers/people';
import { testPool } from '../helpers/postgres';
import { connectorFor, sandboxControl } from '../helpers/sandbox-client';
import { testDataConverter } from '../helpers/temporal';
import { waitUntil } from '../helpers/wait';
import { testDeploymentOptions, testReconciliation } from '../helpers/worker';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from './otlp-receiver';

// Tracing on: the real API app and a real worker (OTel interceptors and workflow sink) on the
// run's dev server, a real sandbox, and an in-process OTLP/HTTP collector. One deposit must
// give one trace from the HTTP request to the provider's HTTP call.

const API_KEY = 'trace-test-key';
const PII_KEY = 'test-pii-hash-key-0123456789';
const SERVER = 2; // OTLP SpanKind

let receiver: OtlpReceiver;
let tracing: Tracing;
let sandbox: RunningSandbox;
let pool: Pool;
let nativeConnection: NativeConnection;
let connection: Connection;
let worker: Worker;
let running: Promise<void>;
let server: http.Server;
let apiUrl: string;
/** Onboarded before the test: deposits are for approved people. */
let client: Person;
/** Whether each provider HTTP call ran inside a recording span. */
const providerCallsRecording: boolean[] = [];

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const config = loadConfig({
    API_KEYS: API_KEY,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: `trace-${Date.now()}`,
    PII_HASH_KEY: PII_KEY,
    PROVIDER_MERCHANT: 'sandbox-merchant',
    LOG_LEVEL: 'silent',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  });
  const policy = staticPolicyReader(policyFromEnv({}));
  // One process plays API and worker here, so one (global) tracer provider serves both.
  const t = setupTracing('pixflow-test', config);
  if (!t) throw new Error('tracing should be on with an endpoint');
  tracing = t;

  sandbox = await startSandbox();
  pool = testPool();
  const provider = connectorFor(sandbox.url, {
    timeoutMs: 5_000,
    fetch: (input, init) => {
      providerCallsRecording.push(trace.getActiveSpan()?.isRecording() ?? false);
      return fetch(input, init);
    },
  });
  // The shared test bundle has no interceptor module: this one is built as the worker builds its
  // own, with the modules tracing asks for.
  const { code } = await workflowBundle(path.resolve(__dirname, '../../workflows/index.ts'), {
    workflowInterceptorModules: tracingBundleModules(tracing),
  });
  const otel = tracingWorkerOptions(tracing);
  connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  const temporal = new Client({
    connection,
    dataConverter: testDataConverter,
    interceptors: tracingClientInterceptors(tracing),
  });
  nativeConnection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  worker = await Worker.create({
    connection: nativeConnection,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    workflowBundle: { code },
    workerDeploymentOptions: await testDeploymentOptions(temporal),
    dataConverter: testDataConverter,
    activities: createActivities({
      provider,
      pool,
      clock: () => new Date(),
      hashCpf: (cpf) => cpfHash(cpf, PII_KEY),
      hashAccount: (k) => accountKeyHash(k, PII_KEY),
      policy,
      temporal: { client: temporal, taskQueue: config.TEMPORAL_TASK_QUEUE },
      reconciliation: testReconciliation,
    }),
    sinks: otel.sinks,
    interceptors: otel.interceptors,
  });
  running = worker.run();

  const app = createApp({
    config,
    temporal,
    pool,
    log: createLogger('trace-test', 'silent'),
    policy,
  });
  server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Every notification of the sandbox reaches its flow through the API's ingress: a paid deposit
  // ends (and its RunWorkflow span with it) on its payment's notification.
  await sandboxControl(sandbox.url, '/sandbox/notifications', {
    url: `${apiUrl}/webhooks/provider/${config.WEBHOOK_SECRET}`,
    partnerId: config.WEBHOOK_PARTNER_ID,
  });
  client = await onboard({ api: apiUrl, apiKey: API_KEY, sandbox: sandbox.url });
});

afterAll(async () => {
  if (server) {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
  worker?.shutdown();
  await running;
  await nativeConnection?.close();
  await connection?.close();
  await sandbox?.close();
  await pool?.end();
  await tracing?.shutdown();
  await receiver?.close();
});

const api = (method: string, p: string, body?: unknown) =>
  fetch(`${apiUrl}${p}`, {
    method,
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const until = <T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000): Promise<T> =>
  waitUntil(read, ok, { timeoutMs, intervalMs: 200 });

/** Span names from `span` up to its root, following parentSpanId within the trace. */
function chainToRoot(spans: ReceivedSpan[], span: ReceivedSpan): string[] {
  const names = [span.name];
  let current = span;
  while (current.parentSpanId) {
    const parent = spans.find((s) => s.traceId === current.traceId && s.spanId === current.parentSpanId);
    if (!parent) return [...names, `(missing ${current.parentSpanId})`];
    names.push(parent.name);
    current = parent;
  }
  return names;
}

describe('tracing on', () => {
  it('one trace runs from POST /v1/deposits through the workflow and activity to the provider call', async () => {
    const { cpf } = client;
    const res = await api('POST', '/v1/deposits', { client, amountCentavos: 1_234 });
    expect(res.status).toBe(201);
    const { txid } = (await res.json()) as { txid: string };

    // Paid, then reconciled: the workflow ends, so its RunWorkflow span is exported too.
    const pay = await fetch(`${sandbox.url}/sandbox/deposits/${txid}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(pay.ok).toBe(true);
    await until(
      async () => (await (await api('GET', `/v1/deposits/${txid}`)).json()) as { state: { status: string } },
      (b) => b.state?.status === 'completed',
    );

    const request = await until(
      async () => {
        await tracing.provider.forceFlush();
        return receiver.spans.find((s) => s.name === 'POST /v1/deposits');
      },
      (s) => s !== undefined,
    );
    if (!request) throw new Error('unreachable');
    expect(request.kind).toBe(SERVER);
    expect(request.parentSpanId).toBeUndefined();
    expect(request.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/deposits',
      'http.response.status_code': 201,
    });

    // Workflow spans arrive through the sink, once the workflow is done: wait for the last one.
    const inTrace = () => receiver.spans.filter((s) => s.traceId === request.traceId);
    await until(
      async () => {
        await tracing.provider.forceFlush();
        return inTrace().map((s) => s.name);
      },
      (names) => names.includes('RunWorkflow:depositWorkflow') && names.includes('provider inquiry'),
    );
    const spans = inTrace();
    const names = spans.map((s) => s.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'POST /v1/deposits',
        'UpdateWithStartWorkflow:qrCode',
        'RunWorkflow:depositWorkflow',
        'StartActivity:createChargeAndRecordAwaitingPayment',
        'RunActivity:createChargeAndRecordAwaitingPayment',
        'provider deposit',
        'RunActivity:inquireDepositAndRecordCompleted',
        'provider inquiry',
      ]),
    );
    // The provider's token was first needed by the person's onboarding (its KYC call, before the
    // deposit; the token is cached after): that request is traced from the onboarding's POST.
    // (The onboarding's workflow spans come once it has closed, just after it was approved.)
    const tokenChain = await until(
      async () => {
        await tracing.provider.forceFlush();
        const token = receiver.spans.filter((s) => s.name === 'provider token');
        expect(token).toHaveLength(1);
        return chainToRoot(receiver.spans, token[0]!);
      },
      (chain) => chain.at(-1) === 'POST /v1/onboardings',
    );
    expect(tokenChain).toEqual(
      expect.arrayContaining(['provider token', 'RunActivity:checkKyc', 'RunWorkflow:onboardingWorkflow']),
    );

    // The provider call hangs, parent by parent, off the HTTP request span.
    const deposit = spans.find((s) => s.name === 'provider deposit');
    if (!deposit) throw new Error('unreachable');
    expect(deposit.attributes).toMatchObject({
      'provider.endpoint': 'deposit',
      'http.response.status_code': 201,
    });
    const chain = chainToRoot(spans, deposit);
    expect(chain[0]).toBe('provider deposit');
    expect(chain[1]).toBe('RunActivity:createChargeAndRecordAwaitingPayment');
    expect(chain).toContain('StartActivity:createChargeAndRecordAwaitingPayment');
    expect(chain).toContain('UpdateWithStartWorkflow:qrCode');
    expect(chain.at(-1)).toBe('POST /v1/deposits');
    const run = spans.find((s) => s.name === 'RunWorkflow:depositWorkflow');
    if (!run) throw new Error('unreachable');
    expect(chainToRoot(spans, run).at(-1)).toBe('POST /v1/deposits');

    expect(providerCallsRecording.length).toBeGreaterThan(0);
    expect(providerCallsRecording.every(Boolean)).toBe(true);
    // Nothing exported names the payer: no CPF in span names, attributes or resources.
    for (const body of receiver.bodies) expect(body).not.toContain(cpf);
  });
});
