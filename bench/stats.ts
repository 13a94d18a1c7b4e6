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
  // Equal neighbours (infinite ones too, which would interpolate to NaN) are the answer as they are.
  return a === b || hi === lo ? a : a + (b - a) * (rank - lo);
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

/** The middle value (the mean of the two middle ones for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** (max − min) / median: how far apart repeated measurements of one thing landed; NaN when empty. */
export function spread(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const m = median(values);
  return m > 0 ? (Math.max(...values) - Math.min(...values)) / m : Number.NaN;
}

/**
 * How many of `n` samples must reach `target` for the p-th percentile (as `percentile` computes
 * it) to reach it too, whatever the other samples are: from then on a step can stop early.
 */
export function overTargetThatDecides(n: number, p = 99): number {
  if (n <= 1) return 1;
  const rank = (Math.min(100, Math.max(0, p)) / 100) * (n - 1);
  // The interpolation reads sorted[floor(rank)] and the one above it: both must be at or over.
  return n - Math.floor(rank);
}

/**
 * The p-th percentile of a step's answers counting each failed offer (an error or a timeout) as
 * an answer that never came: over any target.
 */
export function percentileWithFailures(latencies: readonly number[], failures: number, p = 99): number {
  return percentile([...latencies, ...Array.from({ length: failures }, () => Number.POSITIVE_INFINITY)], p);
}

/** One point of a capacity search: a rate tried, and whether it met the target there. */
export interface SearchPoint {
  rate: number;
  pass: boolean;
}

export interface SearchResult {
  /** The highest rate that passed (0 when none did). */
  capacity: number;
  points: SearchPoint[];
}

/**
 * The highest rate that meets a target, by trying rates in turn (`probe`): from `start`, ×`coarse`
 * while they pass (÷`coarse` while they fail, if `start` already fails), then ×`fine` up from the
 * last good rate while below the first bad one. The answer is the last good rate: a lower bound
 * within a factor `fine` of the knee.
 */
export async function searchCapacity(
  probe: (rate: number) => Promise<boolean>,
  start: number,
  opts: { coarse?: number; fine?: number; maxPoints?: number; minRate?: number } = {},
): Promise<SearchResult> {
  const { coarse = 1.5, fine = 1.2, maxPoints = 12, minRate = 0.25 } = opts;
  const points: SearchPoint[] = [];
  let good = 0;
  let bad = Number.POSITIVE_INFINITY;
  const tryRate = async (rate: number) => {
    const pass = await probe(rate);
    points.push({ rate, pass });
    if (pass) good = Math.max(good, rate);
    else bad = Math.min(bad, rate);
    return pass;
  };
  // Coarse: up while the rates pass, or down until one does.
  const up = await tryRate(start);
  for (let rate = start; points.length < maxPoints; ) {
    rate = up ? rate * coarse : rate / coarse;
    if (rate < minRate || (await tryRate(rate)) !== up) break;
  }
  if (good === 0) return { capacity: 0, points };
  // Fine: up from the last good rate while below the first bad one.
  for (let rate = good * fine; rate < bad * 0.999 && points.length < maxPoints; rate *= fine) {
    if (!(await tryRate(rate))) break;
  }
  return { capacity: good, points };
}

/**
 * A flow's CPU over its floor's, process by process (`pairs`: the flow's part, the floor's part
 * doing the same job, named by the flow's), and over all those parts together (`total`). NaN
 * where the floor spent nothing.
 */
export function ratiosByProcess(
  flow: Readonly<Record<string, number>>,
  floor: Readonly<Record<string, number>>,
  pairs: readonly (readonly [string, string])[],
): Record<string, number> {
  const of = (ms: number, floorMs: number) => (floorMs > 0 ? round(ms / floorMs) : Number.NaN);
  const out: Record<string, number> = {};
  let sum = 0;
  let floorSum = 0;
  for (const [part, floorPart] of pairs) {
    const ms = flow[part] ?? 0;
    const floorMs = floor[floorPart] ?? 0;
    out[part] = of(ms, floorMs);
    sum += ms;
    floorSum += floorMs;
  }
  out.total = of(sum, floorSum);
  return out;
}
