import type { Config } from '../common/config';
import type { Logger } from '../common/logger';

// Builds the activities with their real dependencies (provider client, Postgres pool, clock).
export async function createWorkerActivities(_config: Config, _log: Logger) {
  return { activities: {}, close: async () => {} };
}
