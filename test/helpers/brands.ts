import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { type NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { inject } from 'vitest';
import { createActivities } from '../../activities';
import { allScopes, newKeyId, newSecret, type Scope } from '../../common/api-key';
import { loadConfig } from '../../common/config';
import type { Logger } from '../../common/logger';
import { accountKeyHash, cpfHash } from '../../common/pii';
import { openSecret, sealSecret } from '../../common/secret-box';
import { type AccountKeys, sealBrandAccount } from '../../connectors/accounts';
import type { IdentityPaymentsConnector } from '../../connectors/identity-payments';
import type { BrandAccount } from '../../contracts/brand-account';
import { insertApiKey } from '../../db/api-keys';
import { sealedBrandAccounts, setBrandAccount } from '../../db/brand-accounts';
import { type BrandActor, createBrand } from '../../db/brands';
import type { Pool } from '../../db/pool';
import type { PolicyReader } from '../../policy/schema';
import { brandConnectorCache } from '../../worker/brand-connectors';
import { connectorFor } from './sandbox-client';
import { testDataConverter } from './temporal';
import { testDeploymentOptions, testReconciliation } from './worker';

// A second brand as the tests set one up: its record, its identity-payments account on a
// provider sandbox of its own (credentials, merchant, partner id and webhook secret none of the
// default brand's), and an API key acting for it.

export const BRAND_ADMIN: BrandActor = {
  operatorId: null,
  operatorEmail: 'ana.admin@pixflow.local',
  operatorRole: 'admin',
};

export type IdentityPaymentsAccount = Extract<BrandAccount, { connector: 'identity-payments' }>;

export interface TestBrand {
  id: string;
  name: string;
  /** Its identity-payments account; its base and auth URLs are the brand's sandbox's. */
  account: IdentityPaymentsAccount;
}

/** Nowhere: the URL of a sandbox not started yet (see `atSandbox`). */
const NOWHERE = 'http://127.0.0.1:1';

/**
 * A brand with fresh credentials of its own; `baseUrl` is its sandbox (its token endpoint too),
 * or, for a sandbox started with these credentials, given later with `atSandbox`.
 */
export function testBrand(id = `bet-${randomBytes(3).toString('hex')}`, baseUrl = NOWHERE): TestBrand {
  return {
    id,
    name: `Bet ${id}`,
    account: {
      connector: 'identity-payments',
      settings: {
        baseUrl,
        authUrl: baseUrl,
        clientId: `client-${id}`,
        merchant: `merchant-${id}`,
        partnerId: `partner-${id}`,
      },
      secrets: {
        clientSecret: randomBytes(12).toString('hex'),
        apiKey: randomBytes(12).toString('hex'),
        webhookSecret: `${id}-webhook-${randomBytes(12).toString('hex')}`,
      },
    },
  };
}

/** The brand with its account at `sandboxUrl` (its token endpoint too). */
export const atSandbox = (b: TestBrand, sandboxUrl: string): TestBrand => ({
  ...b,
  account: { ...b.account, settings: { ...b.account.settings, baseUrl: sandboxUrl, authUrl: sandboxUrl } },
});

/** The ingress path the brand's provider notifies: its webhook secret names its account. */
export const brandIngress = (api: string, b: TestBrand) =>
  `${api}/webhooks/provider/${b.account.secrets.webhookSecret}`;

/** The provider sandbox's options that make it the brand's provider: only its credentials pass. */
export const brandSandboxOptions = (b: TestBrand, notificationUrl?: string) => ({
  clientId: b.account.settings.clientId,
  clientSecret: b.account.secrets.clientSecret,
  apiKey: b.account.secrets.apiKey,
  merchant: b.account.settings.merchant,
  ...(notificationUrl
    ? { notificationTarget: { url: notificationUrl, partnerId: b.account.settings.partnerId } }
    : {}),
});

/** The same, for a sandbox run as a process (sandbox/main.ts reads them from its environment). */
export const brandSandboxEnv = (b: TestBrand): Record<string, string> => ({
  PROVIDER_CLIENT_ID: b.account.settings.clientId,
  PROVIDER_CLIENT_SECRET: b.account.secrets.clientSecret,
  PROVIDER_API_KEY: b.account.secrets.apiKey,
  PROVIDER_MERCHANT: b.account.settings.merchant,
  WEBHOOK_PARTNER_ID: b.account.settings.partnerId,
});

/**
 * The brand's record and its account, sealed under `keys`: the codec keys and PII hash key of
 * the processes that read it (a record sealed under others cannot be opened by them).
 */
export async function setUpBrand(pool: Pool, keys: AccountKeys, b: TestBrand): Promise<void> {
  await createBrand(pool, BRAND_ADMIN, { id: b.id, name: b.name });
  const sealed = sealBrandAccount(keys, b.id, b.account);
  await setBrandAccount(pool, BRAND_ADMIN, {
    ...sealed,
    settings: sealed.settings as Record<string, unknown>,
  });
}

/** A new API key acting for `brandId` (null: a platform key); answers its secret. */
export async function brandKey(
  pool: Pool,
  brandId: string | null,
  scopes: readonly Scope[] = allScopes,
): Promise<string> {
  const s = newSecret();
  await insertApiKey(pool, {
    id: newKeyId(),
    name: `tests ${brandId ?? 'platform'}`,
    scopes: [...scopes],
    brandId,
    prefix: s.prefix,
    secretHash: s.digest,
    createdBy: 'tests',
    expiresAt: null,
  });
  return s.secret;
}

/** What a brand test's worker is given: its connections, queue, keys and default provider. */
export interface BrandWorkerOptions {
  temporal: Client;
  nativeConnection: NativeConnection;
  taskQueue: string;
  pool: Pool;
  keys: AccountKeys;
  /** The environment's sandbox: the default brand's provider. */
  envSandboxUrl: string;
  policy: PolicyReader;
  log: Logger;
  /** More of Worker.create's options (a data converter, Nexus services). */
  worker?: Partial<WorkerOptions>;
}

/**
 * The activities as worker/main.ts builds them: each brand's flows on its own sealed account
 * (read from the pool), the default brand's on the environment's sandbox. Answers them, the
 * default brand's connector and what closes the connector cache.
 */
export function brandActivities(o: Omit<BrandWorkerOptions, 'nativeConnection' | 'worker'>) {
  const provider: IdentityPaymentsConnector = connectorFor(o.envSandboxUrl, { timeoutMs: 5_000 });
  const cache = brandConnectorCache({
    sources: {
      environment: loadConfig({ PROVIDER_BASE_URL: o.envSandboxUrl, PROVIDER_AUTH_URL: o.envSandboxUrl }),
      keys: o.keys,
      read: (brandId) => sealedBrandAccounts(o.pool, brandId),
    },
    options: { provider: { timeoutMs: 5_000 }, environment: { provider } },
    log: o.log,
  });
  const activities = createActivities({
    provider,
    connectorsFor: cache.connectorsFor,
    pool: o.pool,
    clock: () => new Date(),
    hashCpf: (cpf) => cpfHash(cpf, o.keys.hashKey),
    hashAccount: (k) => accountKeyHash(k, o.keys.hashKey),
    policy: o.policy,
    temporal: { client: o.temporal, taskQueue: o.taskQueue },
    reconciliation: testReconciliation,
    sealCpf: (cpf) => sealSecret(o.keys.codecKeys, cpf),
    openCpf: (sealed) => openSecret(o.keys.codecKeys, sealed),
  });
  return { activities, provider, closeCache: cache.close };
}

/** The real worker on those activities; answers it, its run and what closes its connector cache. */
export async function startBrandWorker(o: BrandWorkerOptions) {
  const { activities, provider, closeCache } = brandActivities(o);
  const worker = await Worker.create({
    connection: o.nativeConnection,
    taskQueue: o.taskQueue,
    workflowBundle: { code: inject('workflowBundle') },
    workerDeploymentOptions: await testDeploymentOptions(o.temporal),
    dataConverter: testDataConverter,
    ...o.worker,
    activities,
  });
  return { worker, running: worker.run(), closeCache, activities, provider };
}
