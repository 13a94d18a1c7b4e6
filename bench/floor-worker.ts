import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { pixflowDataConverter } from '../common/codec';
import { loadConfig } from '../common/config';
import { workerTuningOptions } from '../common/worker-tuning';
import { FLOOR_QUEUE } from './settings';

// The floor's worker, a process of its own as pixflow's worker is (forked by harness.ts with the
// stack's environment): the floor workflows and the signal sinks on task queue `bench-floor`,
// with the same data converter and worker settings as pixflow's worker. It tells the bench when
// each floor workflow ran its last activity, and stops when told to or when the bench is gone.

const send = (m: unknown) => process.send?.(m);

async function main() {
  const config = loadConfig(process.env);
  // Errors only: the signal sinks, terminated with workflow tasks still running, make the SDK's
  // core warn once for each of those tasks.
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, console: {} } },
  });
  const connection = await NativeConnection.connect({ address: process.env.BENCH_TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: FLOOR_QUEUE,
    workflowsPath: require.resolve('./floor-workflow'),
    activities: {
      async noop() {},
      async done(id: string) {
        send({ done: id, at: Date.now() });
      },
    },
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
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(
      `floor worker: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);
