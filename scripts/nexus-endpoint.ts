import { z } from 'zod';
import { PIXFLOW_NEXUS_ENDPOINT } from '../nexus/service';
import { cliConnectionArgs, runTool, type TemporalCliTarget } from './temporal-server';

// The Nexus endpoint through which other namespaces' workflows call pixflow's Nexus service
// (docs/nexus.md): a name in the server's endpoint registry that routes to pixflow's namespace
// and task queue, where the worker serves the service.

export interface NexusTarget {
  namespace: string;
  taskQueue: string;
}

/** What `temporal operator nexus endpoint get -o json` says of an endpoint's target. */
const endpointSchema = z.object({
  spec: z.object({
    target: z.object({
      worker: z.object({ namespace: z.string(), taskQueue: z.string() }).optional(),
    }),
  }),
});

const DESCRIPTION =
  "pixflow's Nexus service `pixflow`: startOnboarding, createDeposit, requestWithdrawal, waitForOutcome (docs/nexus.md)";

/**
 * Creates the endpoint, or points it again at pixflow's namespace and task queue when it targets
 * others: the dev server keeps its endpoints in the data folder across starts, and
 * TEMPORAL_NAMESPACE or TEMPORAL_TASK_QUEUE may have changed since. Says what it did.
 */
export async function ensureNexusEndpoint(
  cli: string,
  at: TemporalCliTarget,
  target: NexusTarget,
  name = PIXFLOW_NEXUS_ENDPOINT,
): Promise<'created' | 'updated' | 'unchanged'> {
  const on = [...cliConnectionArgs(at), '--name', name];
  const targetArgs = ['--target-namespace', target.namespace, '--target-task-queue', target.taskQueue];
  const found = await runTool(cli, ['operator', 'nexus', 'endpoint', 'get', ...on, '-o', 'json']).then(
    (out) => endpointSchema.parse(JSON.parse(out)),
    (err: Error) => {
      if (/not found/i.test(err.message)) return undefined;
      throw err;
    },
  );
  if (!found) {
    await runTool(cli, [
      'operator',
      'nexus',
      'endpoint',
      'create',
      ...on,
      ...targetArgs,
      '--description',
      DESCRIPTION,
    ]);
    return 'created';
  }
  const now = found.spec.target.worker;
  if (now?.namespace === target.namespace && now.taskQueue === target.taskQueue) return 'unchanged';
  await runTool(cli, ['operator', 'nexus', 'endpoint', 'update', ...on, ...targetArgs]);
  return 'updated';
}
