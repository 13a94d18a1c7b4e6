import { z } from 'zod';
import { type EndpointName, endpointNameSchema } from '../connectors/identity-payments/wire/schemas';

// Fault knobs, set through POST /sandbox/faults (a partial update merged into the current knobs).

const count = z.number().int().min(0);
const probability = z.number().min(0).max(1);

const faultsSchema = z.object({
  /** Added latency on every provider endpoint: fixed, plus a random spike with a probability. */
  latency: z.object({
    fixedMs: count.default(0),
    spikeMs: count.default(0),
    spikeProbability: probability.default(0),
  }),
  /** Probability per endpoint of answering 503 without acting. */
  errorRate: z.partialRecord(endpointNameSchema, probability),
  /** The next N calls of an endpoint answer 503 without acting. */
  failNext: z.partialRecord(endpointNameSchema, count),
  /**
   * The next `count` calls of an endpoint ACT (a payout is created, a deposit exists, ...) and then either
   * answer 500 (`mode: 'error'`), answer only after `delayMs` (`mode: 'timeout'`, past the caller's
   * timeout), never answer (`mode: 'hang'`: held until the caller gives up or dies), or answer
   * 200 with a body no client can read (`mode: 'garbled'`: plain text).
   */
  actThenFail: z.partialRecord(
    endpointNameSchema,
    z.object({
      mode: z.enum(['timeout', 'error', 'hang', 'garbled']),
      count: count,
      delayMs: count.default(30_000),
    }),
  ),
  /** The next N token requests answer 429 with Retry-After. */
  tokenRateLimitNext: count,
  retryAfterSeconds: count,
  /** A completed withdrawal's receipt has an empty invoice for the first N receipt calls. */
  receiptLagCalls: count,
  notifications: z.object({
    /** Drop the next N messages (never delivered). */
    dropNext: count.default(0),
    /** Deliver every message 1 + N times. */
    duplicate: count.default(0),
    /** Hold messages until N are buffered (or holdMs passes), then deliver them newest first. */
    reorderWindow: count.default(0),
    reorderHoldMs: count.default(1000),
    /** Delay every delivery by N ms. */
    delayMs: count.default(0),
  }),
});
/**
 * A call that acted and whose answer the sandbox holds (`actThenFail` timeout or hang), listed
 * from the moment it acted until its answer goes or its caller hangs up: a test can act on the
 * caller while the provider has the request and the caller has no answer.
 */
export interface HeldAnswer {
  endpoint: EndpointName;
  /** The request's `transactionId` (or deposit `txid`), when it has one. */
  id?: string;
  /** The caller's end of the connection: which process is waiting. */
  callerPort?: number;
  since: string;
}

export type Faults = z.infer<typeof faultsSchema> & { held: HeldAnswer[] };

export const faultsPatchSchema = z
  .object({
    latency: faultsSchema.shape.latency.partial(),
    errorRate: faultsSchema.shape.errorRate,
    failNext: faultsSchema.shape.failNext,
    actThenFail: faultsSchema.shape.actThenFail,
    tokenRateLimitNext: count,
    retryAfterSeconds: count,
    receiptLagCalls: count,
    notifications: faultsSchema.shape.notifications.partial(),
  })
  .partial()
  .strict();
export type FaultsPatch = z.infer<typeof faultsPatchSchema>;

export function defaultFaults(): Faults {
  return {
    latency: { fixedMs: 0, spikeMs: 0, spikeProbability: 0 },
    errorRate: {},
    failNext: {},
    actThenFail: {},
    tokenRateLimitNext: 0,
    retryAfterSeconds: 1,
    receiptLagCalls: 0,
    notifications: { dropNext: 0, duplicate: 0, reorderWindow: 0, reorderHoldMs: 1000, delayMs: 0 },
    held: [],
  };
}

export function applyFaultsPatch(faults: Faults, patch: FaultsPatch): Faults {
  return {
    ...faults,
    ...patch,
    latency: { ...faults.latency, ...patch.latency },
    errorRate: { ...faults.errorRate, ...patch.errorRate },
    failNext: { ...faults.failNext, ...patch.failNext },
    actThenFail: { ...faults.actThenFail, ...patch.actThenFail },
    notifications: { ...faults.notifications, ...patch.notifications },
  };
}

export { latencyFor, takeActThenFail, takeFailure } from './fault-knobs';
