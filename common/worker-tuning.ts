import type { WorkerOptions } from '@temporalio/worker';
import type { Config } from './config';

// Worker concurrency and cache settings from config (WORKER_MAX_*), shared by the worker and
// the bench's floor worker so both run with the same settings. Unset: the SDK's defaults, but
// for the cache, which config bounds.
export function workerTuningOptions(
  config: Pick<
    Config,
    | 'WORKER_MAX_CACHED_WORKFLOWS'
    | 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS'
    | 'WORKER_MAX_CONCURRENT_ACTIVITIES'
  >,
): Partial<WorkerOptions> {
  const o: Partial<WorkerOptions> = {};
  o.maxCachedWorkflows = config.WORKER_MAX_CACHED_WORKFLOWS;
  if (config.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS !== undefined)
    o.maxConcurrentWorkflowTaskExecutions = config.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS;
  if (config.WORKER_MAX_CONCURRENT_ACTIVITIES !== undefined)
    o.maxConcurrentActivityTaskExecutions = config.WORKER_MAX_CONCURRENT_ACTIVITIES;
  return o;
}
