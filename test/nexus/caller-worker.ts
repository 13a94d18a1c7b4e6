import { NativeConnection, Worker } from '@temporalio/worker';
import { z } from 'zod';

// A backend's worker, in its own namespace and its own process, running caller-workflows.ts from
// a bundle made once by the test: the test kills it (SIGKILL) while its workflow waits on pixflow
// and starts another. It holds no pixflow key: Temporal's default data converter reads what
// pixflow answers (docs/nexus.md).

const env = z
  .object({
    TEMPORAL_ADDRESS: z.string().min(1),
    CALLER_NAMESPACE: z.string().min(1),
    CALLER_TASK_QUEUE: z.string().min(1),
    CALLER_BUNDLE: z.string().min(1),
  })
  .parse(process.env);

async function main() {
  const connection = await NativeConnection.connect({ address: env.TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    namespace: env.CALLER_NAMESPACE,
    taskQueue: env.CALLER_TASK_QUEUE,
    workflowBundle: { codePath: env.CALLER_BUNDLE },
  });
  const running = worker.run();
  process.stdout.write('caller worker polling\n');
  await running;
  await connection.close();
}

main().catch((err) => {
  process.stderr.write(`caller worker failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
