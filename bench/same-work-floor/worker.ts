import { createPool } from '../../db/pool';
import { createProviderClient } from '../../provider/client';
import { SAME_WORK_QUEUE } from '../settings';
import { runBenchWorker } from '../worker-process';
import { SAME_WORK_TABLE, sameWorkActivities } from './activities';

// The same-work floor's worker, a process of its own as pixflow's worker is: its workflows on
// task queue `bench-same-work`, one provider client (one token cache) and a small pool on the
// stack's Postgres, where it creates its table.

runBenchWorker('same-work floor worker', async (config) => {
  if (!config.DATABASE_URL) throw new Error('DATABASE_URL is not set');
  const pool = createPool(config.DATABASE_URL);
  await pool.query(SAME_WORK_TABLE);
  return {
    taskQueue: SAME_WORK_QUEUE,
    workflowsPath: require.resolve('./workflows'),
    activities: sameWorkActivities(createProviderClient(config.provider), pool),
    close: () => pool.end(),
  };
});
