import { readFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { createActivities } from '../activities';
import { payoutAuthorizationOf } from '../activities/payout-authorization';
import { screenerOf, screenPerson } from '../activities/screen-person';
import { pixflowDataConverter } from '../common/codec';
import type { ApiPixSettings, Config } from '../common/config';
import type { Logger } from '../common/logger';
import type { ProviderCallEvent } from '../common/metrics';
import { accountKeyHash, cpfHash } from '../common/pii';
import { openSecret, sealSecret } from '../common/secret-box';
import { temporalConnectionOptions } from '../common/temporal-connection';
import { accountKeysOf } from '../connectors/accounts';
import { type ApiPixConnector, createApiPixConnector } from '../connectors/api-pix';
import {
  createIdentityPaymentsConnector,
  type IdentityPaymentsConnector,
} from '../connectors/identity-payments';
import { connectorRegistry } from '../connectors/registry';
import { sealedBrandAccounts } from '../db/brand-accounts';
import { createPool, type Pool } from '../db/pool';
import type { Policy } from '../policy/schema';
import { startPolicyStore } from '../policy/store';
import { registerApiPixWebhook } from './api-pix-webhook';
import { brandConnectorCache } from './brand-connectors';

const pick = <T extends object, K extends keyof T>(o: T, keys: readonly K[]) =>
  Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]])) as Pick<T, K>;

/**
 * Reconciliation's schedule when POLL_SCHEDULE_MS sets none: the backstop for a lost
 * notification, not the way payments arrive. Look soon after the flow starts waiting, when most
 * Pix are paid, then rarely (hourly; a 30-minute QR gets its last look from the flow itself at
 * expiry).
 */
const RECONCILIATION_SCHEDULE_MS = [30_000, 120_000, 600_000, 3_600_000];

/** A PEM file the API Pix connector needs, read at start: a missing one stops the worker, named. */
function pemOf(variable: string, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(
      `${variable}=${JSON.stringify(file)}: cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}

/** The API Pix connector the settings describe, its PEM files read now. */
export function apiPixConnectorOf(
  settings: ApiPixSettings,
  log: Logger,
  onCall?: (e: ProviderCallEvent) => void,
): ApiPixConnector {
  return createApiPixConnector({
    baseUrl: settings.baseUrl,
    ...(settings.tokenUrl ? { tokenUrl: settings.tokenUrl } : {}),
    clientId: settings.clientId,
    clientSecret: settings.clientSecret,
    cert: pemOf('API_PIX_CERT_FILE', settings.certFile),
    key: pemOf('API_PIX_KEY_FILE', settings.keyFile),
    ...(settings.caFile ? { ca: pemOf('API_PIX_CA_FILE', settings.caFile) } : {}),
    pixKey: settings.pixKey,
    ...(settings.expirySeconds ? { expirySeconds: settings.expirySeconds } : {}),
    logger: log.child({ component: 'api-pix' }),
    // Its endpoints beside the first provider's in the same metrics, told apart by the prefix.
    ...(onCall ? { onCall: (e) => onCall({ ...e, endpoint: `api-pix:${e.endpoint}` }) } : {}),
  });
}

/**
 * Each brand's connectors, for its flows (worker/brand-connectors.ts): the default brand's are the
 * process's own (`env`) while it has no record. A brand's own API Pix account is told where to post
 * its webhooks once its connector is built (the environment's is registered by the worker at
 * start, worker/main.ts).
 */
function brandConnectorsOf(
  config: Config,
  log: Logger,
  pool: Pool,
  env: {
    provider: IdentityPaymentsConnector;
    apiPix: ApiPixConnector | undefined;
    onProviderCall: ((e: ProviderCallEvent) => void) | undefined;
  },
  stopped: () => boolean,
) {
  const { provider, apiPix, onProviderCall } = env;
  return brandConnectorCache({
    sources: {
      environment: config,
      keys: accountKeysOf(config),
      read: (brandId) => sealedBrandAccounts(pool, brandId),
    },
    options: {
      provider: {
        ...pick(config.provider, ['timeoutMs', 'authHeader', 'receiptFormat', 'livenessIdField']),
        logger: log.child({ component: 'provider' }),
        onCall: onProviderCall,
      },
      apiPix: {
        logger: log.child({ component: 'api-pix' }),
        ...(onProviderCall
          ? { onCall: (e: ProviderCallEvent) => onProviderCall({ ...e, endpoint: `api-pix:${e.endpoint}` }) }
          : {}),
      },
      environment: { provider, ...(apiPix ? { apiPix } : {}) },
    },
    log: log.child({ component: 'brands' }),
    onBuilt: (settings, built) => {
      const pix = settings['api-pix'];
      if (pix?.from === 'brand' && pix.account.webhookUrl && built.apiPix)
        registerApiPixWebhook(
          built.apiPix,
          pix.account.webhookUrl,
          log.child({ component: 'api-pix', brand: settings.brandId }),
          stopped,
        );
    },
  });
}

// Builds the activities with their real dependencies: the provider's connector (one per process,
// so one token cache), a Postgres pool, the wall clock, the rules policy in force (seeded from
// `seed` when Postgres holds none) and a Temporal client.
export async function createWorkerActivities(
  config: Config,
  log: Logger,
  seed: Policy,
  {
    onProviderCall,
    countPayoutDeadline,
    countRefusedDecision,
    countUnclassified,
  }: {
    onProviderCall?: (e: ProviderCallEvent) => void;
    countUnclassified?: (op: string) => void;
    countPayoutDeadline?: (mark: 'at_risk' | 'missed') => void;
    countRefusedDecision?: (kind: string, cause: string) => void;
  } = {},
) {
  if (!config.DATABASE_URL) {
    throw new Error('DATABASE_URL is not set (npm start provides an embedded Postgres)');
  }
  const pool = createPool(config.DATABASE_URL);
  const provider = createIdentityPaymentsConnector({
    ...config.provider,
    logger: log.child({ component: 'provider' }),
    onCall: onProviderCall,
  });
  // Deposits are routed among these by the rules policy's `deposits.routing` (docs/rules.md).
  const apiPix = config.apiPix ? apiPixConnectorOf(config.apiPix, log, onProviderCall) : undefined;
  const collectors = connectorRegistry(apiPix ? [provider, apiPix] : [provider]);
  let closed = false;
  const brands = brandConnectorsOf(config, log, pool, { provider, apiPix, onProviderCall }, () => closed);
  // A withdrawal's step-up starts (or joins) the person's biometric identification through it.
  const connection = await Connection.connect(temporalConnectionOptions(config));
  const client = new Client({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    dataConverter: pixflowDataConverter(config.codecKeys),
  });
  const policy = startPolicyStore({ pool, seed, log: log.child({ component: 'policy' }) });
  const screener = screenerOf(config, pool, policy);
  const activities = createActivities({
    provider,
    collectors,
    connectorsFor: brands.connectorsFor,
    pool,
    clock: () => new Date(),
    hashCpf: (cpf) => cpfHash(cpf, config.PII_HASH_KEY),
    hashAccount: (k) => accountKeyHash(k, config.PII_HASH_KEY),
    policy,
    payoutAuthorization: payoutAuthorizationOf(config),
    ...(countPayoutDeadline ? { countPayoutDeadline } : {}),
    ...(countRefusedDecision ? { countRefusedDecision } : {}),
    ...(countUnclassified ? { countUnclassified } : {}),
    temporal: { client, taskQueue: config.TEMPORAL_TASK_QUEUE },
    reconciliation: {
      scheduleMs: config.POLL_SCHEDULE_MS ?? RECONCILIATION_SCHEDULE_MS,
      maxPerSecond: config.RECONCILE_MAX_PER_SECOND,
      intervalMs: config.RECONCILE_INTERVAL_MS,
    },
    sealCpf: (cpf) => sealSecret(config.codecKeys, cpf),
    openCpf: (sealed) => openSecret(config.codecKeys, sealed),
    ...(screener
      ? {
          rescreening: {
            perSecond: config.ELIGIBILITY_RESCREEN_PER_SECOND,
            screen: (cpf: string) => screenPerson(screener, cpf, 'rescreening'),
          },
        }
      : {}),
    ...(screener ? { eligibility: screener.registry } : {}),
  });
  const close = async () => {
    await policy.close();
    await pool.end();
    await connection.close();
    closed = true;
    brands.close();
    apiPix?.close();
  };
  return { activities, provider, apiPix, collectors, brands, client, pool, policy, close };
}
