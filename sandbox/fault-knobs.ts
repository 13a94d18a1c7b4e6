// The per-endpoint fault knobs both emulations share (the first provider's sandbox/faults.ts and
// the API Pix PSP's sandbox/api-pix/faults.ts): added latency, 503s before acting, and calls that
// act and then fail. Each emulation names its own endpoints and failure modes.

export interface LatencyKnob {
  fixedMs: number;
  spikeMs: number;
  spikeProbability: number;
}

interface ActThenFailKnob<M extends string> {
  mode: M;
  count: number;
  delayMs: number;
}

/** The added latency of one call: the fixed part, plus a spike with its probability. */
export function latencyFor(faults: { latency: LatencyKnob }, random: () => number): number {
  const { fixedMs, spikeMs, spikeProbability } = faults.latency;
  return fixedMs + (spikeMs > 0 && random() < spikeProbability ? spikeMs : 0);
}

/** True when this call answers 503 before acting (consumes one `failNext`). */
export function takeFailure<E extends string>(
  faults: { failNext: Partial<Record<E, number>>; errorRate: Partial<Record<E, number>> },
  endpoint: E,
  random: () => number,
): boolean {
  const next = faults.failNext[endpoint] ?? 0;
  if (next > 0) {
    faults.failNext[endpoint] = next - 1;
    return true;
  }
  const rate = faults.errorRate[endpoint] ?? 0;
  return rate > 0 && random() < rate;
}

/** The way this call fails after acting, when a knob says so (consumes one of its `count`). */
export function takeActThenFail<E extends string, M extends string>(
  faults: { actThenFail: Partial<Record<E, ActThenFailKnob<M>>> },
  endpoint: E,
): { mode: M; delayMs: number } | undefined {
  const knob = faults.actThenFail[endpoint];
  if (!knob || knob.count <= 0) return undefined;
  knob.count -= 1;
  return { mode: knob.mode, delayMs: knob.delayMs };
}
