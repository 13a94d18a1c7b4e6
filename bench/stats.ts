// Statistics helpers of the bench: percentiles, summaries and saturation detection. Pure
// functions, unit-tested in test/unit/bench-stats.test.ts.

/** The p-th percentile (0-100) by linear interpolation between closest ranks; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 1) return sorted[0] as number;
  const rank = (Math.min(100, Math.max(0, p)) / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * (rank - lo);
}

export interface Summary {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

export function summarize(values: readonly number[]): Summary {
  return {
    n: values.length,
    p50: round(percentile(values, 50)),
    p99: round(percentile(values, 99)),
    max: round(values.length ? Math.max(...values) : Number.NaN),
  };
}

export function round(x: number, digits = 2): number {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** One step of a ramp: the load offered (per second) and the throughput achieved (per second). */
export interface RampPoint {
  offered: number;
  achieved: number;
}

/**
 * Whether a ramp has stopped rising: the last step fell clearly short of what it offered
 * (below `keepUp` of it) and did not beat the best earlier step by more than `minGain`.
 */
export function saturated(points: readonly RampPoint[], keepUp = 0.85, minGain = 0.1): boolean {
  const last = points.at(-1);
  if (!last || points.length < 2) return false;
  const bestBefore = Math.max(...points.slice(0, -1).map((p) => p.achieved));
  return last.achieved < keepUp * last.offered && last.achieved <= (1 + minGain) * bestBefore;
}

/** Throughput at saturation: the best step of the ramp. */
export function saturationThroughput(points: readonly RampPoint[]): number {
  return points.length ? Math.max(...points.map((p) => p.achieved)) : 0;
}

/**
 * Completions per second inside [from, to] (ms timestamps): the steady part of a step, after
 * its warm-up, so the pipeline's fill and drain do not count.
 */
export function ratePerSecond(times: readonly number[], from: number, to: number): number {
  if (to <= from) return 0;
  let n = 0;
  for (const t of times) if (t >= from && t <= to) n++;
  return (n * 1000) / (to - from);
}

/**
 * Throughput of a batch from its completion times alone: (n - 1) completions over the span
 * from the first to the last. Below capacity it is the offered rate; above it, the batch
 * queues and completions come out at the system's capacity, whatever the latency.
 */
export function completionRate(times: readonly number[]): number {
  if (times.length < 2) return 0;
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const t of times) {
    if (t < lo) lo = t;
    if (t > hi) hi = t;
  }
  return hi > lo ? ((times.length - 1) * 1000) / (hi - lo) : 0;
}
