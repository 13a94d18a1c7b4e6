import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../common/config';
import {
  cacheForMemory,
  capWorkflowThreadHeap,
  cgroupMemoryMiB,
  MIB_PER_CACHED_WORKFLOW,
  WORKER_BASELINE_MIB,
  workerTuningOptions,
  workflowCacheSize,
  workflowHeapLimitMiB,
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

describe("the workflow thread's heap from its cache", () => {
  const runtime = (execArgv: string[] = [], nodeOptions?: string) => {
    const set: string[] = [];
    return { set, execArgv, nodeOptions, setFlags: (f: string) => void set.push(f) };
  };

  it("is a base and each cached workflow's share half again over its measured size", () => {
    expect(workflowHeapLimitMiB(1000)).toBe(439);
    expect(workflowHeapLimitMiB(500)).toBe(252);
    expect(workflowHeapLimitMiB(832)).toBe(376);
  });

  it('sets the old-space flag for the thread to come', () => {
    const r = runtime(['--max-semi-space-size=32'], '--enable-source-maps');
    expect(capWorkflowThreadHeap(1000, r)).toBe(439);
    expect(r.set).toEqual(['--max-old-space-size=439']);
  });

  it("leaves an operator's own limit alone, in node's options or NODE_OPTIONS", () => {
    for (const r of [
      runtime(['--max-old-space-size=2048']),
      runtime([], '--max-semi-space-size=32 --max-old-space-size=900'),
      runtime(['--max-old-space-size', '900']),
    ]) {
      expect(capWorkflowThreadHeap(1000, r)).toBeUndefined();
      expect(r.set).toEqual([]);
    }
  });

  it("bounds the next thread's heap in a real node, not the main thread's", () => {
    // A process of its own: V8's flags are the whole process's.
    const probe = `
      import v8 from 'node:v8';
      import { Worker } from 'node:worker_threads';
      import { capWorkflowThreadHeap } from ${JSON.stringify(path.resolve('common/worker-tuning.ts'))};
      const mib = (n) => Math.round(n / 1048576);
      const main = mib(v8.getHeapStatistics().heap_size_limit);
      const set = capWorkflowThreadHeap(1000);
      const w = new Worker("import v8 from 'node:v8'; import { parentPort } from 'node:worker_threads'; parentPort.postMessage(v8.getHeapStatistics().heap_size_limit);", { eval: true });
      w.on('message', (limit) => { console.log(JSON.stringify({ main, after: mib(v8.getHeapStatistics().heap_size_limit), set, thread: mib(limit) })); process.exit(0); });
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    const r = JSON.parse(out.trim().split('\n').pop() as string);
    expect(r.set).toBe(439);
    expect(r.after).toBe(r.main);
    // Old space as set, plus the young generation V8 adds to a heap's limit.
    expect(r.thread).toBeGreaterThanOrEqual(439);
    expect(r.thread).toBeLessThan(439 + 200);
    expect(r.thread).toBeLessThan(r.main);
  });
});
