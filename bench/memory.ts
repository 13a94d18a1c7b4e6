import { sumOf } from './prom-text';
import { round } from './stats';

// What the open-flows part computes from its samples: a Prometheus text's value, a least-squares
// slope, and how much a process grows per 1,000 open flows once the worker's cache is full.

/** One reading of the stack while deposits are opened. */
export interface MemorySample {
  /** ms since the part began. */
  atMs: number;
  /** Deposits of the part awaiting payment so far (the flows table's count: nobody pays). */
  open: number;
  workerRss: number;
  apiRss: number;
  /** V8 heap of each process's main thread (the worker's workflows run in a thread of their own). */
  workerHeapUsed: number;
  workerHeapTotal: number;
  apiHeapUsed: number;
  apiHeapTotal: number;
  /** Workflows in the worker's sticky cache (the SDK's gauge); NaN when it does not export it. */
  stickyCache: number;
}

/**
 * The sum of a metric's samples in a Prometheus text, whatever its labels and prefix (prom-client
 * prefixes pixflow's own: `pixflow_worker_nodejs_heap_size_used_bytes`); NaN when it is absent.
 */
export const promValue = (text: string, name: string): number => sumOf(text, name, true);

/** The least-squares slope of y over x; NaN with fewer than two distinct x. */
export function slope(points: readonly { x: number; y: number }[]): number {
  const pts = points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  const n = pts.length;
  if (n < 2) return Number.NaN;
  const mx = pts.reduce((a, p) => a + p.x, 0) / n;
  const my = pts.reduce((a, p) => a + p.y, 0) / n;
  const sxx = pts.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  if (sxx === 0) return Number.NaN;
  return pts.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0) / sxx;
}

const MiB = 1024 * 1024;

type Field = 'workerRss' | 'apiRss' | 'workerHeapUsed' | 'apiHeapUsed';

/**
 * MiB a process grows per further 1,000 open flows once the worker's cache is full: the slope
 * over the samples with at least `cacheSize` open. Each flow past the cache costs only what is
 * kept per open flow outside it, which is what must stay flat.
 */
export function growthPerThousandPastCache(
  samples: readonly MemorySample[],
  cacheSize: number,
  field: Field,
): { mibPerThousand: number; samples: number } {
  const past = samples.filter((s) => s.open >= cacheSize);
  const perFlow = slope(past.map((s) => ({ x: s.open, y: s[field] })));
  return { mibPerThousand: round((perFlow * 1000) / MiB), samples: past.length };
}

/**
 * MiB a cached workflow costs the worker: the slope of its RSS over the open flows while the
 * cache fills (fewer open than `cacheSize`), past the first tenth, where the process's own warm-up
 * (its first tasks, its pools) still moves it.
 */
export function mibPerCachedWorkflow(samples: readonly MemorySample[], cacheSize: number): number {
  const filling = samples.filter((s) => s.open >= cacheSize / 10 && s.open < cacheSize);
  return round(slope(filling.map((s) => ({ x: s.open, y: s.workerRss }))) / MiB, 3);
}

/** The sample with the most flows open (the last one), or undefined when there is none. */
export const lastSample = (samples: readonly MemorySample[]) =>
  samples.reduce<MemorySample | undefined>((a, s) => (a && a.open > s.open ? a : s), undefined);
