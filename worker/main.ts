import http from 'node:http';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { DefaultLogger, type LogLevel, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { Counter, type Registry } from 'prom-client';
import { pixflowDataConverter } from '../common/codec';
import { type Config, loadConfigOrExit } from '../common/config';
import { listen, onShutdown } from '../common/http';
import { createLogger, type Logger } from '../common/logger';
import { createWorkerMetrics } from '../common/metrics';
import { SECRETS_READ_BY } from '../common/production-secrets';
import { temporalConnectionOptions } from '../common/temporal-connection';
import { setupTracing, type Tracing, tracingBundleModules, tracingWorkerOptions } from '../common/tracing';
import { capWorkflowThreadHeap, workerTuningOptions, workflowCacheSize } from '../common/worker-tuning';
import type { ApiPixConnector } from '../connectors/api-pix';
import { listBrandAccounts } from '../db/brand-accounts';
import { connectorBreakers } from '../db/connector-breakers';
import type { Pool } from '../db/pool';
import { pixflowNexusService } from '../nexus/handlers';
import { nexusBundleOptions } from '../nexus/worker-bundle';
import type { PolicyReader } from '../policy/schema';
import { policySeedOrExit } from '../policy/seed';
import { createWorkerActivities } from './activities';
import { registerApiPixWebhook } from './api-pix-webhook';
import type { BrandConnectorCache } from './brand-connectors';
import { buildIdFor, workflowBundle } from './build-id';
import { ensureReconciler } from './reconciler';
import { ensureRescreeningSchedule } from './rescreening';
import { deploymentOptions, type Promotion, promoteWhenNewest, type WorkerVersion } from './versioning';

// The worker process: polls task queue `pixflow` as one version of its Worker Deployment, runs
// the flows' workflows and activities and serves pixflow's Nexus service (nexus/), and answers
// /healthz and /metrics (ours plus the Temporal SDK's) on WORKER_HTTP_PORT.

/** SDK logs (workflow and activity logs carry workflowId, runId, activityType) go to pino. */
function installRuntime(config: Config, log: Logger, sdkMetrics: string) {
  Runtime.install({
    logger: new DefaultLogger(
      config.LOG_LEVEL === 'silent' ? 'ERROR' : 'INFO',
      ({ level, message, meta }) => {
        const pinoLevel = (
          { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const
        )[level as LogLevel];
        log[pinoLevel]({ ...meta, sdk: true }, message);
      },
    ),
    telemetryOptions: { metrics: { prometheus: { bindAddress: sdkMetrics } } },
  });
}

/**
 * /metrics (ours and the SDK's) and /healthz: healthy once the worker runs and knows its place in
 * the deployment, so a new build takes new flows from then on.
 */
function healthAndMetrics(
  worker: Worker,
  metrics: ReturnType<typeof createWorkerMetrics>,
  sdkMetrics: string,
  deployment: () => WorkerVersion & { promotion?: Promotion | 'not asked' },
) {
  return http.createServer((req, res) => {
    if (req.url === '/metrics') {
      void (async () => {
        const ours = await metrics.registry.metrics();
        const sdk = await fetch(`http://${sdkMetrics}/metrics`, { signal: AbortSignal.timeout(2000) })
          .then((r) => r.text())
          .catch(() => '');
        res.writeHead(200, { 'content-type': metrics.registry.contentType });
        res.end(`${ours}\n${sdk}`);
      })();
      return;
    }
    const state = worker.getState();
    const place = deployment();
    const ok = state === 'RUNNING' && place.promotion !== undefined;
    const status = ok ? 'ok' : state === 'RUNNING' ? 'joining its deployment' : state;
    res.writeHead(req.url === '/healthz' ? (ok ? 200 : 503) : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status, ...place }));
  });
}

/**
 * The task queue's own long-lived work, started (or found running) by every worker at boot: the
 * reconciler, and the rescreening's Schedule when a registry is configured to ask.
 */
function startBackgroundWork(
  client: Client,
  config: Config,
  log: Logger,
  stopped: () => boolean,
  { apiPix, pool, brands }: { apiPix: ApiPixConnector | undefined; pool: Pool; brands: BrandConnectorCache },
) {
  void ensureReconciler(client, config.TEMPORAL_TASK_QUEUE, log, { retryMs: 10_000, stopped });
  void buildBrandsWithApiPix(pool, brands, log);
  if (apiPix && config.API_PIX_WEBHOOK_URL)
    registerApiPixWebhook(apiPix, config.API_PIX_WEBHOOK_URL, log.child({ component: 'api-pix' }), stopped);
  if (config.ELIGIBILITY_URL)
    void ensureRescreeningSchedule(
      client,
      config.TEMPORAL_TASK_QUEUE,
      config.ELIGIBILITY_RESCREEN_EVERY_MS,
      log,
      {
        retryMs: 10_000,
        stopped,
      },
    );
}

/**
 * Builds, at start, the connectors of every brand with an API Pix account of its own, so each
 * account's webhook is registered at its PSP before its first deposit (worker/activities.ts).
 */
async function buildBrandsWithApiPix(pool: Pool, brands: BrandConnectorCache, log: Logger) {
  try {
    const accounts = await listBrandAccounts(pool);
    const withPix = new Set(accounts.filter((a) => a.connector === 'api-pix').map((a) => a.brandId));
    for (const brand of withPix)
      await brands
        .connectorsFor(brand)
        .catch((err: unknown) =>
          log.warn(
            { brand, err: String(err) },
            "a brand's connectors could not be built at start; built at its first flow",
          ),
        );
  } catch (err) {
    log.warn(
      { err: String(err) },
      "the brands' accounts could not be read at start; each is built at its first flow",
    );
  }
}

/** Decisions sent to a flow without the proof the back office or API records (docs/security.md). */
function refusedDecisionCounter(registry: Registry) {
  const refused = new Counter({
    name: 'pixflow_refused_decisions_total',
    help: 'Decisions a flow refused for want of a proof, by kind and cause',
    labelNames: ['kind', 'cause'] as const,
    registers: [registry],
  });
  return (kind: string, cause: string) => refused.inc({ kind, cause });
}

/**
 * The workflow code this worker runs: with what lets a flow's result cross Nexus in the clear
 * (docs/nexus.md), and the workflow spans when tracing is on.
 */
function workerBundle(tracing: Tracing | undefined) {
  const nexus = nexusBundleOptions();
  // workflows/index.ts under tsx, index.js in the compiled image: the extension of this file.
  return workflowBundle(path.join(__dirname, '..', 'workflows', `index${path.extname(__filename)}`), {
    ...nexus,
    workflowInterceptorModules: [...nexus.workflowInterceptorModules, ...tracingBundleModules(tracing)],
  });
}

/** The breakers of the connectors the deposits' routing names now, in its order (the gauges). */
const routingBreakers = (policy: PolicyReader, pool: Pool) => async () => {
  const { routing } = (await policy.current()).policy.deposits;
  return connectorBreakers(pool, routing.connectors, new Date(), routing.breaker.windowMs);
};

/** The worker's activities, their provider calls, deadlines, refusals and breakers counted in `metrics`. */
async function measuredActivities(
  config: Config,
  log: Logger,
  seed: ReturnType<typeof policySeedOrExit>,
  metrics: ReturnType<typeof createWorkerMetrics>,
) {
  const built = await createWorkerActivities(config, log, seed, {
    onProviderCall: metrics.onProviderCall,
    countPayoutDeadline: metrics.countPayoutDeadline,
    countRefusedDecision: refusedDecisionCounter(metrics.registry),
    countUnclassified: metrics.countUnclassified,
  });
  metrics.countTokenRequests(() => built.provider.tokenRequests);
  metrics.watchBreakers(routingBreakers(built.policy, built.pool));
  return built;
}

async function main() {
  const config = loadConfigOrExit(process.env, { secrets: SECRETS_READ_BY.worker });
  const log = createLogger('worker', config.LOG_LEVEL);
  const sdkMetrics = `127.0.0.1:${config.WORKER_SDK_METRICS_PORT}`;
  installRuntime(config, log, sdkMetrics);

  // Undefined (no exporter, no interceptors) without OTEL_EXPORTER_OTLP_ENDPOINT.
  const tracing = setupTracing('pixflow-worker', config);
  const metrics = createWorkerMetrics();
  // The rules policy's first version, should Postgres hold none yet (docs/policy.md).
  const seed = policySeedOrExit(process.env);
  const { activities, apiPix, brands, client, pool, close } = await measuredActivities(
    config,
    log,
    seed,
    metrics,
  );
  const connection = await NativeConnection.connect(temporalConnectionOptions(config));
  const bundle = await workerBundle(tracing);
  const version = {
    deploymentName: config.WORKER_DEPLOYMENT_NAME,
    buildId: config.WORKER_BUILD_ID ?? buildIdFor(bundle.code),
  };
  // Before the SDK starts its workflow thread, whose heap it bounds (WORKER_MAX_CACHED_WORKFLOWS).
  const workflowHeapMiB = capWorkflowThreadHeap(workflowCacheSize(config));
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    workflowBundle: bundle,
    workerDeploymentOptions: deploymentOptions(version),
    activities,
    // Other Temporal applications' workflows call pixflow through it (docs/nexus.md). Its tasks go,
    // like new flows, to the deployment's current version; the flows it starts are pinned or
    // moving as their own workflows say.
    nexusServices: [pixflowNexusService({ config, pool })],
    // Payloads are encrypted before they reach Temporal (common/codec.ts), all but what crosses Nexus.
    dataConverter: {
      ...pixflowDataConverter(config.codecKeys),
      payloadConverterPath: nexusBundleOptions().payloadConverterPath,
    },
    // Workflow, activity and provider-call spans, joined to the API's trace through headers.
    ...tracingWorkerOptions(tracing),
    // Concurrency and cache (WORKER_MAX_*).
    ...workerTuningOptions(config),
  });

  let promotion: Promotion | 'not asked' | undefined;
  const server = healthAndMetrics(worker, metrics, sdkMetrics, () => ({ ...version, promotion }));
  await listen(server, config.WORKER_HTTP_PORT, config.HTTP_HOST);
  log.info(
    {
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      port: config.WORKER_HTTP_PORT,
      tracing: Boolean(tracing),
      workflowHeapMiB: workflowHeapMiB ?? 'set by node options',
      ...version,
    },
    'worker started',
  );
  const running = () => ['INITIALIZED', 'RUNNING'].includes(worker.getState());
  startBackgroundWork(client, config, log, () => !running(), { apiPix, pool, brands });

  // Stopping lets the tasks in hand finish (up to the SDK's grace time), then lets go of
  // everything the worker holds.
  const stopped = worker.run().then(async () => {
    server.close();
    await close();
    await connection.close();
    await tracing?.shutdown();
    log.info('worker stopped');
  });
  // Once it polls: the server registers a build when its first worker polls.
  if (config.WORKER_PROMOTE_NEWEST) {
    void promoteWhenNewest(client, config.TEMPORAL_NAMESPACE, version, {
      log,
      retryMs: 500,
      stopped: () => !running(),
    }).then((p) => {
      promotion = p;
    });
  } else promotion = 'not asked';
  onShutdown(async (reason) => {
    log.info({ reason }, 'worker stopping');
    // The SDK's runtime starts the same shutdown on SIGINT and SIGTERM by itself.
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await stopped;
  });
  await stopped;
}

main().catch((err) => {
  process.stderr.write(`worker failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
