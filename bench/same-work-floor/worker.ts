import { createIdentityPaymentsConnector } from '../../connectors/identity-payments';
import { createPool } from '../../db/pool';
import { SAME_WORK_QUEUE } from '../settings';
import { runBenchWorker, tellBench } from '../worker-process';
import { SAME_WORK_TABLE, sameWorkActivities } from './activities';

// The same-work floor's worker, a process of its own as pixflow's worker is: its workflows on
// task queue `bench-same-work`, one provider client (one token cache) and a small pool on the
// stack's Postgres, where it creates its table. It tells the bench how many provider tokens it
// asked for.

runBenchWorker('same-work floor worker', async (config) => {
  if (!config.DATABASE_URL) throw new Error('DATABASE_URL is not set');
  const pool = createPool(config.DATABASE_URL);
  await pool.query(SAME_WORK_TABLE);
  const provider = createIdentityPaymentsConnector(config.provider);
  // The sandbox counts every worker's token requests; the bench takes this one's off pixflow's figure.
  let told = 0;
  const tell = setInterval(() => {
    if (provider.tokenRequests === told) return;
    told = provider.tokenRequests;
    tellBench({ tokenRequests: told });
  }, 200);
  tell.unref();
  return {
    taskQueue: SAME_WORK_QUEUE,
    workflowsPath: require.resolve('./workflows'),
    activities: sameWorkActivities(provider, pool),
    close: async () => {
      clearInterval(tell);
      await pool.end();
    },
  };
});
