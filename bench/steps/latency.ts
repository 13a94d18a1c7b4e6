import type { Bench } from '../harness';
import { type Launched, step } from '../load';
import { completedAt, completedFlows, type FlowType, sandboxState } from '../pixflow';
import { settings } from '../settings';
import { round, type Summary, summarize } from '../stats';

// Latency of a flow at a given rate: the POST as the client sees it, and the provider's payment
// (a deposit paid, a payout settled, by the sandbox's own clock) to the flow's `completed` row.

export interface Latency {
  offered: number;
  achieved: number;
  post: Summary;
  paymentToCompleted: Summary;
  errors: number;
  errorsBy: Record<string, number>;
  stealPct: number;
  /** Flows of the step not completed when it ended. */
  incomplete: number;
}

/** A step 1.5 times a ramp step's length at `rate`. */
export async function latencyStep(
  b: Bench,
  rate: number,
  launch: () => Promise<Launched>,
  type: FlowType,
): Promise<Latency> {
  const r = await step(rate, settings.stepMs * 1.5, launch, completedFlows(b, type), { drainMs: 60_000 });
  const state = await sandboxState(b);
  const paid = new Map(
    (type === 'withdrawal' ? state.withdrawals : state.deposits)
      .filter((d) => d.payedAt)
      .map((d) => [d.txid, Date.parse(d.payedAt)]),
  );
  const done = await completedAt(b, type, r.ids);
  const toCompleted = r.ids
    .filter((id) => paid.has(id) && done.has(id))
    .map((id) => (done.get(id) as number) - (paid.get(id) as number));
  return {
    offered: round(rate),
    achieved: r.point.achieved,
    post: summarize(r.latenciesMs),
    paymentToCompleted: summarize(toCompleted),
    errors: r.errors,
    errorsBy: r.errorsBy,
    stealPct: r.stealPct,
    incomplete: r.ids.length - done.size,
  };
}
