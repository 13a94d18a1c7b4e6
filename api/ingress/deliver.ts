import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { INBOX_DEFAULTS } from '../../common/config';
import { maskCpfsIn } from '../../common/mask';
import { type InboxRow, markDelivered, markGaveUp, markRetry } from '../../db/inbox';
import type { Pool } from '../../db/pool';
import { withTimeout } from './timeout';

// Signals one inbox row to its workflow and records the outcome. Shared by the request's fast
// path and the relay, so both treat "not found", "closed" and "Temporal down" the same way.

export interface DeliveryOptions {
  /** Bound on each Temporal call, so an unreachable server cannot hold a row forever. */
  signalTimeoutMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** A workflow still missing this long after the notification arrived: stop trying. */
  giveUpAfterMs: number;
  /** Identical copies within this long of a signal wait for its end: one signal per window. */
  coalesceMs: number;
}

export const defaultDeliveryOptions: DeliveryOptions = {
  signalTimeoutMs: 5_000,
  retryBaseMs: 1_000,
  retryMaxMs: INBOX_DEFAULTS.retryMaxMs,
  giveUpAfterMs: INBOX_DEFAULTS.giveUpMs,
  coalesceMs: INBOX_DEFAULTS.coalesceMs,
};

/** The operator's settings (common/config.ts) over the defaults. */
export function deliveryOptionsFrom(config: {
  INBOX_RETRY_MAX_MS?: number;
  INBOX_GIVE_UP_MS?: number;
  INBOX_COALESCE_MS?: number;
}): DeliveryOptions {
  return {
    ...defaultDeliveryOptions,
    ...(config.INBOX_RETRY_MAX_MS ? { retryMaxMs: config.INBOX_RETRY_MAX_MS } : {}),
    ...(config.INBOX_GIVE_UP_MS ? { giveUpAfterMs: config.INBOX_GIVE_UP_MS } : {}),
    ...(config.INBOX_COALESCE_MS ? { coalesceMs: config.INBOX_COALESCE_MS } : {}),
  };
}

/** How long a claimed row is left alone: past every Temporal call one delivery can make. */
export const leaseMs = (o: DeliveryOptions) => 2 * o.signalTimeoutMs + 5_000;

export type Outcome = 'delivered' | 'closed' | 'not_found' | 'gave_up' | 'unavailable';

export interface DeliveryContext {
  pool: Pool;
  temporal: Client;
  options: DeliveryOptions;
}

function temporalCall<T>(temporal: Client, ms: number, fn: () => Promise<T>): Promise<T> {
  // The gRPC deadline covers the call; the timer also covers a lazy connection still dialling.
  const call = temporal.connection.withDeadline(Date.now() + ms, fn);
  call.catch(() => {});
  return withTimeout(call, ms, 'temporal call');
}

export function backoffMs(attempts: number, o: DeliveryOptions): number {
  const base = Math.min(o.retryMaxMs, o.retryBaseMs * 2 ** Math.min(attempts, 30));
  // Jitter spreads retries of a burst that failed together (e.g. while Temporal restarted).
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

const describeError = (err: unknown) =>
  maskCpfsIn(err instanceof Error ? err.message : String(err)).slice(0, 500);

/** Tries once; never throws for Temporal trouble (the row stays pending), only for Postgres. */
export async function deliverRow(ctx: DeliveryContext, row: InboxRow): Promise<Outcome> {
  const { pool, temporal, options } = ctx;
  const handle = temporal.workflow.getHandle(row.workflowId);
  // Temporal unreachable or slow: try this row again after its back-off.
  const retryLater = (err: unknown) =>
    markRetry(pool, row.id, describeError(err), new Date(Date.now() + backoffMs(row.attempts, options)));
  try {
    await temporalCall(temporal, options.signalTimeoutMs, () =>
      handle.signal(row.signalName, row.signalPayload),
    );
    await markDelivered(pool, row.id);
    return 'delivered';
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) {
      await retryLater(err);
      return 'unavailable';
    }
  }
  // Not found: either no such workflow (yet), or its last run has closed. Ask which.
  try {
    const d = await temporalCall(temporal, options.signalTimeoutMs, () => handle.describe());
    if (d.status.name === 'RUNNING') {
      // It started between our two calls: signal it on the next round.
      await markRetry(pool, row.id, 'workflow started meanwhile', new Date(Date.now() + options.retryBaseMs));
      return 'not_found';
    }
    await markDelivered(pool, row.id, `workflow already closed (${d.status.name}); nothing to deliver`);
    return 'closed';
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) {
      await retryLater(err);
      return 'unavailable';
    }
  }
  if (Date.now() - row.receivedAt.getTime() >= options.giveUpAfterMs) {
    await markGaveUp(pool, row.id, `workflow never appeared within ${options.giveUpAfterMs} ms; gave up`);
    return 'gave_up';
  }
  await markRetry(
    pool,
    row.id,
    'workflow not found (yet)',
    new Date(Date.now() + backoffMs(row.attempts, options)),
  );
  return 'not_found';
}
