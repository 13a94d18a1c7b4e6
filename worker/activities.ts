import { createActivities } from '../activities';
import type { Config } from '../common/config';
import type { Logger } from '../common/logger';
import { accountKeyHash, cpfHash } from '../common/pii';
import { createPool } from '../db/pool';
import { createProviderClient, type ProviderCallEvent } from '../provider/client';

// Builds the activities with their real dependencies: the provider client (one per process,
// so one token cache), a Postgres pool and the wall clock.
export async function createWorkerActivities(
  config: Config,
  log: Logger,
  onProviderCall?: (e: ProviderCallEvent) => void,
) {
  if (!config.DATABASE_URL) {
    throw new Error('DATABASE_URL is not set (npm start provides an embedded Postgres)');
  }
  const pool = createPool(config.DATABASE_URL);
  const provider = createProviderClient({
    ...config.provider,
    logger: log.child({ component: 'provider' }),
    onCall: onProviderCall,
  });
  const activities = createActivities({
    provider,
    pool,
    clock: () => new Date(),
    hashCpf: (cpf) => cpfHash(cpf, config.PII_HASH_KEY),
    hashAccount: (k) => accountKeyHash(k, config.PII_HASH_KEY),
  });
  return { activities, provider, close: () => pool.end() };
}
