import { DefaultLogger, NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { pixflowDataConverter } from '../common/codec';
import { type Config, loadConfig } from '../common/config';
import { temporalConnectionOptions } from '../common/temporal-connection';
import { capWorkflowThreadHeap, workerTuningOptions, workflowCacheSize } from '../common/worker-tuning';

// The life of a bench worker process (the floor's, the same-work floor's), forked by harness.ts
// with the stack's environment as pixflow's worker is: pixflow's data converter and worker
// settings, ready once it says so, stopped when the bench says so or is gone.

/** A message to the bench that forked this process. */
export const tellBench = (m: unknown) => process.send?.(m);

/** What a bench worker runs, and what it closes once its worker has stopped. */
export type BenchWorker = Pick<WorkerOptions, 'taskQueue' | 'workflowsPath' | 'activities'> & {
  close?: () => Promise<void>;
};

/** Runs the worker `setup` gives until the bench stops it; the process exits 0, or 1 with the error. */
export function runBenchWorker(name: string, setup: (config: Config) => Promise<BenchWorker>): void {
  const main = async () => {
    const config = loadConfig(process.env);
    // Errors only: workflows terminated with tasks still running (the signal sinks) make the SDK's
    // core warn once for each of those tasks.
    Runtime.install({
      logger: new DefaultLogger('WARN'),
      telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, console: {} } },
    });
    const { close, ...own } = await setup(config);
    const connection = await NativeConnection.connect({
      ...temporalConnectionOptions(config),
      address: process.env.BENCH_TEMPORAL_ADDRESS,
    });
    // The same bound as pixflow's worker: its collections are part of what the floor costs.
    capWorkflowThreadHeap(workflowCacheSize(config));
    const worker = await Worker.create({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      ...own,
      dataConverter: pixflowDataConverter(config.codecKeys),
      ...workerTuningOptions(config),
    });
    const stop = () => worker.getState() === 'RUNNING' && worker.shutdown();
    process.on('message', (m) => m === 'stop' && stop());
    process.on('disconnect', stop);
    const running = worker.run();
    tellBench({ ready: true });
    await running;
    await connection.close();
    await close?.();
  };
  main().then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`${name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
