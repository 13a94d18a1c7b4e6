import { readFileSync } from 'node:fs';
import v8 from 'node:v8';
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
 * over 80 to 800 open, 17 samples). A quarter of the memory is left to what is not cached: the
 * evicted flows' garbage between collections, held down by the workflow thread's heap cap below.
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

/**
 * The workflow thread's heap, capped from its cache. V8 sizes a heap's limit from the machine
 * (4 GiB on 24 GiB), and a workflow thread whose flows are evicted as fast as new ones arrive
 * grows toward it before collecting. Measured by the open-flows part (2026-11-28, 1,000 cached
 * deposits, 3,500 opened at 10/s): the thread's live heap after a collection was some 185 MiB;
 * uncapped its heap grew to 380 MiB and the worker's RSS past 1 GiB at 3,500 open, where capped
 * at 440 MiB (this rule) its heap held at 290 MiB and the RSS at 945 MiB. A cached flow's share
 * is counted half again over its measured size, so a cache of heavier flows (withdrawals) still
 * fits.
 */
export const WORKFLOW_HEAP_BASE_MIB = 64;
const WORKFLOW_HEAP_HEADROOM = 1.5;

/** The old-space limit (MiB) of a workflow thread caching `cache` workflows. */
export function workflowHeapLimitMiB(cache: number): number {
  return Math.ceil(WORKFLOW_HEAP_BASE_MIB + cache * MIB_PER_CACHED_WORKFLOW * WORKFLOW_HEAP_HEADROOM);
}

const OLD_SPACE_FLAG = /--max-old-space-size(=|\s|$)/;

/**
 * Caps the heap of the workflow thread the SDK starts next, for a cache of `cache` workflows: V8's flags are the process's, read by
 * each isolate as it is made, so this leaves the main thread's heap as it is. Call it just before
 * `Worker.create`. An operator's own `--max-old-space-size` (node's options or NODE_OPTIONS) wins:
 * nothing is set then. Returns the limit set, in MiB.
 */
export function capWorkflowThreadHeap(
  cache: number,
  runtime: { execArgv: string[]; nodeOptions?: string; setFlags: (flags: string) => void } = {
    execArgv: process.execArgv,
    nodeOptions: process.env.NODE_OPTIONS,
    setFlags: v8.setFlagsFromString,
  },
): number | undefined {
  const own = [...runtime.execArgv, runtime.nodeOptions ?? ''].some((a) => OLD_SPACE_FLAG.test(a));
  if (own) return undefined;
  const limit = workflowHeapLimitMiB(cache);
  runtime.setFlags(`--max-old-space-size=${limit}`);
  return limit;
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
