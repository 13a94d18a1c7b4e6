import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../common/config';
import {
  cacheForMemory,
  cgroupMemoryMiB,
  MIB_PER_CACHED_WORKFLOW,
  WORKER_BASELINE_MIB,
  workerTuningOptions,
  workflowCacheSize,
} from '../../common/worker-tuning';

// The worker's cache follows the memory it is given, unless WORKER_MAX_CACHED_WORKFLOWS says.

const config = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', ...env });
const noCgroup = () => undefined;

describe("the worker's cache from its memory", () => {
  it('is (¾ of the memory − the baseline) ÷ a cached workflow, never under the SDK floor', () => {
    expect(cacheForMemory(1024)).toBe(Math.floor((768 - WORKER_BASELINE_MIB) / MIB_PER_CACHED_WORKFLOW));
    expect(cacheForMemory(1024)).toBe(832);
    expect(cacheForMemory(2048)).toBe(3904);
    expect(cacheForMemory(768)).toBe(64);
    expect(cacheForMemory(700)).toBe(10);
  });

  it('takes WORKER_MEMORY_MIB over the cgroup, and an explicit cache over both', () => {
    expect(workflowCacheSize(config({ WORKER_MEMORY_MIB: '2048' }), () => 1024)).toBe(3904);
    expect(workflowCacheSize(config({}), () => 1024)).toBe(832);
    const explicit = config({ WORKER_MEMORY_MIB: '2048', WORKER_MAX_CACHED_WORKFLOWS: '300' });
    expect(workflowCacheSize(explicit, () => 1024)).toBe(300);
    expect(workerTuningOptions(explicit).maxCachedWorkflows).toBe(300);
  });

  it('keeps 1,000 when nothing says how much memory there is', () => {
    expect(workflowCacheSize(config({}), noCgroup)).toBe(1000);
  });

  it('refuses a memory too small for the worker itself, naming the variable', () => {
    expect(() => config({ WORKER_MEMORY_MIB: '512' })).toThrow(/WORKER_MEMORY_MIB=.*at least 768/);
  });
});

describe("the cgroup's memory limit", () => {
  const file = (content: string) => {
    const p = path.join(mkdtempSync(path.join(os.tmpdir(), 'cgroup-')), 'memory.max');
    writeFileSync(p, content);
    return p;
  };

  it('reads bytes as MiB, and no limit as none', () => {
    expect(cgroupMemoryMiB(file(`${1536 * 1024 * 1024}\n`))).toBe(1536);
    expect(cgroupMemoryMiB(file('max\n'))).toBeUndefined();
    expect(cgroupMemoryMiB('/nonexistent/memory.max')).toBeUndefined();
  });
});
