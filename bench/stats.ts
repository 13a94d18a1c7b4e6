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

/** One point of a capacity sweep: a rate tried, its answers' p99 and whether its flows kept up. */
export interface SweepPoint {
  rate: number;
  p99: number;
  /** Its flows completed at the rate (≥ 0.9 of it) and the offering was not stopped early. */
  held: boolean;
}

/** Whether a point meets a p99 bound: under it, and its flows kept up. */
export const passes = (p: SweepPoint, boundMs: number) => p.held && p.p99 < boundMs;

/**
 * The next rate of a sweep over several p99 bounds, or undefined when it is done: from `start`,
 * ×`factor` while the highest rate tried passes the largest bound; then, if the lowest rate tried
 * fails the smallest bound, ÷`factor` below it until one passes it, never under `start / 2`
 * (lower, a point of enough answers takes many minutes, and the figure is a rate too low to use).
 * One sweep answers every bound (`capacitiesAt`), where a search per bound would repeat points.
 */
export function nextSweepRate(
  points: readonly SweepPoint[],
  start: number,
  boundsMs: readonly number[],
  factor = 1.2,
  maxPoints = 16,
): number | undefined {
  if (points.length === 0) return start;
  if (points.length >= maxPoints) return undefined;
  const largest = Math.max(...boundsMs);
  const smallest = Math.min(...boundsMs);
  const highest = points.reduce((a, p) => (p.rate > a.rate ? p : a));
  const lowest = points.reduce((a, p) => (p.rate < a.rate ? p : a));
  // Up first, while every point so far has been higher than the one before and the top one passes
  // the largest bound (so every bound); once a point was tried below, the climb is over.
  const climbing = points.every((p, i) => i === 0 || p.rate > (points[i - 1] as SweepPoint).rate);
  if (climbing && passes(highest, largest)) return highest.rate * factor;
  if (passes(lowest, smallest)) return undefined;
  const down = lowest.rate / factor;
  return down >= (start / 2) * 0.999 ? down : undefined;
}

/** Capacity at each bound (by bound): the highest rate tried that passed it, 0 when none did. */
export function capacitiesAt(
  points: readonly SweepPoint[],
  boundsMs: readonly number[],
): Record<number, number> {
  const out: Record<number, number> = {};
  for (const bound of boundsMs) {
    out[bound] = points.filter((p) => passes(p, bound)).reduce((a, p) => Math.max(a, p.rate), 0);
  }
  return out;
}

/** Tries the rates `nextSweepRate` asks for (`probe`), in turn; the points and the capacity at each bound. */
export async function sweepCapacity<P extends SweepPoint>(
  probe: (rate: number) => Promise<P>,
  start: number,
  boundsMs: readonly number[],
  factor = 1.2,
): Promise<{ points: P[]; capacity: Record<number, number> }> {
  const points: P[] = [];
  for (let rate = nextSweepRate(points, start, boundsMs, factor); rate !== undefined; ) {
    points.push(await probe(rate));
    rate = nextSweepRate(points, start, boundsMs, factor);
  }
  return { points, capacity: capacitiesAt(points, boundsMs) };
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
