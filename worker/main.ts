import http from 'node:http';
import path from 'node:path';
import { NativeConnection, Worker } from '@temporalio/worker';
import { pixflowDataConverter } from '../common/codec';
import { loadConfigOrExit } from '../common/config';
import { listen, onShutdown } from '../common/http';
import { createLogger } from '../common/logger';
import { temporalConnectionOptions } from '../common/temporal-connection';
import { createWorkerActivities } from './activities';

// The worker process: polls task queue `pixflow`, runs the flows' workflows and activities,
// and answers /healthz on WORKER_HTTP_PORT (metrics join it later).

async function main() {
  const config = loadConfigOrExit();
  const log = createLogger('worker', config.LOG_LEVEL);
  const { activities, close } = await createWorkerActivities(config, log);
  const connection = await NativeConnection.connect(temporalConnectionOptions(config));
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    workflowsPath: path.join(__dirname, '..', 'workflows', 'index.ts'),
    activities,
    // Payloads are encrypted before they reach Temporal (common/codec.ts).
    dataConverter: pixflowDataConverter(config.codecKeys),
  });

  const health = http.createServer((req, res) => {
    const ok = worker.getState() === 'RUNNING';
    res.writeHead(req.url === '/healthz' ? (ok ? 200 : 503) : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: ok ? 'ok' : worker.getState() }));
  });
  await listen(health, config.WORKER_HTTP_PORT, config.HTTP_HOST);
  log.info({ taskQueue: config.TEMPORAL_TASK_QUEUE, healthPort: config.WORKER_HTTP_PORT }, 'worker started');

  onShutdown(async () => {
    worker.shutdown();
  });
  await worker.run();
  health.close();
  await close();
  await connection.close();
  log.info('worker stopped');
}

main().catch((err) => {
  process.stderr.write(`worker failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
