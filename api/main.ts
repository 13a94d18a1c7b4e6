import { readFileSync } from 'node:fs';
import http from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { pixflowDataConverter } from '../common/codec';
import { type Config, loadConfigOrExit } from '../common/config';
import { closeServer, listen, onShutdown } from '../common/http';
import { createLogger } from '../common/logger';
import { createApiMetrics } from '../common/metrics';
import { HOW_TO_MAKE, SECRETS_READ_BY } from '../common/production-secrets';
import { temporalConnectionOptions } from '../common/temporal-connection';
import { setupTracing, tracingClientInterceptors } from '../common/tracing';
import { readPixNotifications } from '../connectors/api-pix';
import { anyUsableApiKey } from '../db/api-keys';
import { createPool } from '../db/pool';
import { eventsRelaySettings, startEventsRelay } from '../events/outbox-relay';
import { answerClientError } from '../http/problem';
import { startApiPixListener } from '../ingress/api-pix-listener';
import { ensureReversalSweep } from '../ingress/api-pix-reversals';
import { deliveryOptionsFrom } from '../ingress/deliver';
import { startInboxRelay } from '../ingress/inbox-relay';
import { alertMonitorSettings, startAlertMonitor } from '../monitoring/monitor';
import { policySeedOrExit } from '../policy/seed';
import { startPolicyStore } from '../policy/store';
import { createApp } from './app';

async function main() {
  // API_KEYS bootstraps: once a usable key record exists it may be left unset (checked below).
  const config = loadConfigOrExit(process.env, {
    secrets: SECRETS_READ_BY.api.filter((name) => name !== 'API_KEYS'),
  });
  // The rules policy's first version, should Postgres hold none yet (docs/policy.md).
  const seed = policySeedOrExit(process.env);
  if (!config.DATABASE_URL) {
    process.stderr.write('pixflow api: DATABASE_URL is not set (npm start provides an embedded Postgres)\n');
    process.exit(1);
  }
  const pool = createPool(config.DATABASE_URL);
  if (!config.API_KEYS?.length && !(await anyUsableApiKey(pool).catch(() => false))) {
    process.stderr.write(
      `pixflow: invalid configuration\n  API_KEYS: unset, and no usable API key record in Postgres; ${HOW_TO_MAKE.API_KEYS}, or create a key with npm run operator -- key create\n`,
    );
    process.exit(1);
  }
  const log = createLogger('api', config.LOG_LEVEL);
  // Before anything traced is created; undefined (and no interceptors) without an endpoint.
  const tracing = setupTracing('pixflow-api', config);
  // Lazy: the API starts (and /readyz reports) even while Temporal is still coming up.
  const connection = Connection.lazy(temporalConnectionOptions(config));
  // Payloads are encrypted before they reach Temporal (common/codec.ts); /codec serves the UI.
  const dataConverter = pixflowDataConverter(config.codecKeys);
  const temporal = new Client({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    dataConverter,
    interceptors: tracingClientInterceptors(tracing),
  });
  const metrics = createApiMetrics();
  const codec = dataConverter.payloadCodecs[0];
  // Every decision reads the version in force, which a change reaches within moments.
  const policy = startPolicyStore({ pool, seed, log: log.child({ component: 'policy' }) });
  const server = http.createServer(createApp({ config, temporal, pool, log, policy, metrics, codec }));
  server.on('clientError', answerClientError);
  await listen(server, config.API_PORT, config.HTTP_HOST);
  log.info({ port: config.API_PORT, tracing: Boolean(tracing) }, 'api listening');

  // A PSP speaking the API Pix posts its webhooks to a listener of its own, over mutual TLS.
  const apiPix = await startApiPixWebhooks(config, { pool, temporal, log, metrics });
  // Its deposits' reversals whose webhooks were all lost: the sweep, started once per task queue.
  let stopping = false;
  const sweep = apiPix
    ? ensureReversalSweep(temporal, config.TEMPORAL_TASK_QUEUE, log, {
        retryMs: 5_000,
        stopped: () => stopping,
      })
    : undefined;

  // Webhook inbox relay: delivers the notifications the ingress could not signal at once.
  const relay = startInboxRelay({
    pool,
    temporal,
    log,
    intervalMs: config.INBOX_RELAY_INTERVAL_MS,
    delivery: deliveryOptionsFrom(config),
    metrics,
  });

  // Outbound events: positions them for GET /v1/events and delivers the webhooks.
  const eventsRelay = config.EVENTS_RELAY
    ? startEventsRelay({ pool, log, codecKeys: config.codecKeys, settings: eventsRelaySettings(config) })
    : undefined;

  // Monitoring alerts: reads the same outbox after its own cursor and flags suspicious movement.
  const alertMonitor = config.ALERT_MONITOR
    ? startAlertMonitor({ pool, log, metrics, policy, settings: alertMonitorSettings(config) })
    : undefined;

  onShutdown(async (reason) => {
    log.info({ reason }, 'api stopping');
    stopping = true;
    await closeServer(server);
    await apiPix?.close();
    await sweep;
    await relay.stop();
    await eventsRelay?.stop();
    await alertMonitor?.stop();
    await policy.close();
    await connection.close();
    await pool.end();
    await tracing?.shutdown();
    log.info('api stopped');
  });
}

/**
 * The API Pix webhook listener, when API_PIX_WEBHOOK_PORT is set (config.ts checks its TLS files
 * are). It takes the default brand's callbacks under API_PIX_WEBHOOK_SECRET when that is set, and
 * every brand's own API Pix account's under its webhook secret, looked up on each callback: a
 * brand given an account later needs no restart.
 */
async function startApiPixWebhooks(
  config: Config,
  deps: Pick<Parameters<typeof startApiPixListener>[0], 'pool' | 'temporal' | 'log' | 'metrics'>,
) {
  const { API_PIX_WEBHOOK_PORT: port } = config;
  if (port === undefined) return undefined;
  const pem = (file: string | undefined) => readFileSync(file ?? '', 'utf8');
  const listener = await startApiPixListener({
    ...deps,
    config,
    read: readPixNotifications,
    port,
    host: config.HTTP_HOST,
    tls: {
      cert: pem(config.API_PIX_WEBHOOK_CERT_FILE),
      key: pem(config.API_PIX_WEBHOOK_KEY_FILE),
      clientCa: pem(config.API_PIX_WEBHOOK_CLIENT_CA_FILE),
    },
  });
  deps.log.info({ port: listener.port }, 'API Pix webhook listener (mutual TLS) listening');
  return listener;
}

main().catch((err) => {
  process.stderr.write(`api failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
