import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { pixflowDataConverter } from '../../common/codec';
import { loadConfig } from '../../common/config';
import { workerTuningOptions } from '../../common/worker-tuning';
import { createPool } from '../../db/pool';
import { createProviderClient } from '../../provider/client';
import { SAME_WORK_QUEUE } from '../settings';
import { SAME_WORK_TABLE, sameWorkActivities } from './activities';

// The same-work floor's worker, a process of its own as pixflow's worker is (forked by the bench
// with the stack's environment): its workflows on task queue `bench-same-work`, with pixflow's
// data converter and worker settings, one provider client (one token cache) and a small pool on
// the stack's Postgres, where it creates its table. Stops when told to or when the bench is gone.

const send = (m: unknown) => process.send?.(m);

async function main() {
  const config = loadConfig(process.env);
  if (!config.DATABASE_URL) throw new Error('DATABASE_URL is not set');
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, console: {} } },
  });
  const pool = createPool(config.DATABASE_URL);
  await pool.query(SAME_WORK_TABLE);
  const provider = createProviderClient(config.provider);
  const connection = await NativeConnection.connect({ address: process.env.BENCH_TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: SAME_WORK_QUEUE,
    workflowsPath: require.resolve('./workflows'),
    activities: sameWorkActivities(provider, pool),
    dataConverter: pixflowDataConverter(config.codecKeys),
    ...workerTuningOptions(config),
  });
  const stop = () => worker.getState() === 'RUNNING' && worker.shutdown();
  process.on('message', (m) => m === 'stop' && stop());
  process.on('disconnect', stop);
  const running = worker.run();
  send({ ready: true });
  await running;
  await connection.close();
  await pool.end();
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(
      `same-work floor worker: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);
