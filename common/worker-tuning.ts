import { readFileSync } from 'node:fs';
import type { WorkerOptions } from '@temporalio/worker';
import { type Config, envSchema } from './config';

// Worker concurrency and cache settings from config (WORKER_MAX_*), shared by the worker and
// the bench's floor worker so both run with the same settings. Unset: the SDK's defaults, but
// for the cache, which follows the memory the worker is given.

const MiB = 1024 * 1024;

/**
 * What a cache is sized from, measured by the bench's open-flows part (bench/README.md, part 6;
 * 2026-11-28, Node 24, 800 cached, 20 deposits/s): the worker holds some 560 MiB resident with
 * nothing open (its bundle, pools, the SDK's core and workflow thread, having served 200
 * onboardings), and each cached deposit adds some 0.24 MiB while the cache fills (the RSS slope
 * over 80 to 800 open, 17 samples). A quarter of the memory is left to what is not cached: past
 * the cache the evicted flows' garbage kept the RSS rising (some 0.25 MiB a flow over the next
 * 500) until the workflow thread's collector reclaimed it.
 */
export const WORKER_BASELINE_MIB = 560;
export const MIB_PER_CACHED_WORKFLOW = 0.25;
const CACHED_SHARE = 0.75;
/** The SDK's own floor for a cache it sizes itself. */
const MIN_CACHE = 10;

/** The default cache when nothing says how much memory the worker has. */
const DEFAULT_CACHE: number = envSchema.shape.WORKER_MAX_CACHED_WORKFLOWS.parse(undefined);

/** The cgroup (v2) memory limit of this process in MiB; undefined when there is none ("max") or no cgroup. */
export function cgroupMemoryMiB(file = '/sys/fs/cgroup/memory.max'): number | undefined {
  try {
    const v = readFileSync(file, 'utf8').trim();
    const bytes = Number(v);
    return v !== 'max' && Number.isFinite(bytes) && bytes > 0 ? Math.floor(bytes / MiB) : undefined;
  } catch {
    return undefined;
  }
}

/** Workflows a worker given `memoryMiB` caches: (¾ of the memory − its baseline) ÷ a cached workflow's size. */
export function cacheForMemory(memoryMiB: number): number {
  const cached = Math.floor((memoryMiB * CACHED_SHARE - WORKER_BASELINE_MIB) / MIB_PER_CACHED_WORKFLOW);
  return Math.max(MIN_CACHE, cached);
}

/**
 * The cache: WORKER_MAX_CACHED_WORKFLOWS when set; else sized from WORKER_MEMORY_MIB, or from the
 * cgroup's limit; else the default.
 */
export function workflowCacheSize(
  config: Pick<Config, 'WORKER_MAX_CACHED_WORKFLOWS' | 'WORKER_MEMORY_MIB'>,
  cgroupMiB: () => number | undefined = cgroupMemoryMiB,
): number {
  if (config.WORKER_MAX_CACHED_WORKFLOWS !== undefined) return config.WORKER_MAX_CACHED_WORKFLOWS;
  const memory = config.WORKER_MEMORY_MIB ?? cgroupMiB();
  return memory === undefined ? DEFAULT_CACHE : cacheForMemory(memory);
}

export function workerTuningOptions(
  config: Pick<
    Config,
    | 'WORKER_MAX_CACHED_WORKFLOWS'
    | 'WORKER_MEMORY_MIB'
    | 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS'
    | 'WORKER_MAX_CONCURRENT_ACTIVITIES'
  >,
): Partial<WorkerOptions> {
  const o: Partial<WorkerOptions> = {};
  o.maxCachedWorkflows = workflowCacheSize(config);
  if (config.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS !== undefined)
    o.maxConcurrentWorkflowTaskExecutions = config.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS;
  if (config.WORKER_MAX_CONCURRENT_ACTIVITIES !== undefined)
    o.maxConcurrentActivityTaskExecutions = config.WORKER_MAX_CONCURRENT_ACTIVITIES;
  return o;
}
