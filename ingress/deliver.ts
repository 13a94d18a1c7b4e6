import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { INBOX_DEFAULTS } from '../common/config';
import { maskCpfsIn } from '../common/mask';
import type { ApiMetrics } from '../common/metrics';
import { readLivenessCallback } from '../connectors/identity-payments';
import { isBiometricsWorkflowId } from '../contracts/biometrics';
import { type ProviderNotification, providerNotificationSignal } from '../contracts/flow';
import type { LivenessProgress } from '../contracts/onboarding';
import { suspendIfContradicted } from '../customers/contradicted-onboarding';
import { type InboxRow, markDelivered, markGaveUp, markRetry, rawBodyOf } from '../db/inbox';
import { namesLivenessRequest } from '../db/liveness-requests';
import type { Pool } from '../db/pool';
import { withTemporalDeadline } from '../http/temporal-deadline';
import { askReversalCheck, isReversalCheck } from './api-pix-reversals';

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
  /** A liveness callback naming no request of its flow waits this long for the request's record. */
  requestWaitMs: number;
  /** Where a deposit's reversal checks run (the worker's task queue). */
  taskQueue: string;
}

export const defaultDeliveryOptions: DeliveryOptions = {
  signalTimeoutMs: 5_000,
  retryBaseMs: 1_000,
  retryMaxMs: INBOX_DEFAULTS.retryMaxMs,
  giveUpAfterMs: INBOX_DEFAULTS.giveUpMs,
  coalesceMs: INBOX_DEFAULTS.coalesceMs,
  requestWaitMs: INBOX_DEFAULTS.livenessRequestWaitMs,
  taskQueue: 'pixflow',
};

/** The operator's settings (common/config.ts) over the defaults. */
export function deliveryOptionsFrom(config: {
  INBOX_RETRY_MAX_MS?: number;
  INBOX_GIVE_UP_MS?: number;
  INBOX_COALESCE_MS?: number;
  INBOX_LIVENESS_REQUEST_WAIT_MS?: number;
  TEMPORAL_TASK_QUEUE?: string;
}): DeliveryOptions {
  return {
    ...defaultDeliveryOptions,
    ...(config.TEMPORAL_TASK_QUEUE ? { taskQueue: config.TEMPORAL_TASK_QUEUE } : {}),
    ...(config.INBOX_RETRY_MAX_MS ? { retryMaxMs: config.INBOX_RETRY_MAX_MS } : {}),
    ...(config.INBOX_GIVE_UP_MS ? { giveUpAfterMs: config.INBOX_GIVE_UP_MS } : {}),
    ...(config.INBOX_COALESCE_MS ? { coalesceMs: config.INBOX_COALESCE_MS } : {}),
    ...(config.INBOX_LIVENESS_REQUEST_WAIT_MS
      ? { requestWaitMs: config.INBOX_LIVENESS_REQUEST_WAIT_MS }
      : {}),
  };
}

/** How long a claimed row is left alone: past every Temporal call one delivery can make. */
export const leaseMs = (o: DeliveryOptions) => 2 * o.signalTimeoutMs + 5_000;

export type Outcome =
  | 'delivered'
  | 'kept'
  | 'closed'
  | 'not_found'
  | 'gave_up'
  | 'unavailable'
  | 'awaiting_request'
  | 'unmatched';

/**
 * The provider's `requested` notification of a deposit or a payout announces what the flow itself
 * just asked for: it would wake the flow only to count it. Kept in the inbox, not signalled (a
 * signal and a workflow task less per payment, in time and in history).
 */
export function announcesOwnRequest(row: Pick<InboxRow, 'signalName' | 'signalPayload'>): boolean {
  return (
    row.signalName === providerNotificationSignal.name &&
    (row.signalPayload as Partial<ProviderNotification> | null)?.action === 'requested'
  );
}

export const OWN_REQUEST_NOTE = "not signalled: it announces the flow's own request";

export const UNMATCHED_NOTE = 'not signalled: it names no liveness request pixflow made for this person';
export const UNMATCHED_LOG = 'liveness callback names no request pixflow made; kept, not signalled';

export interface DeliveryContext {
  pool: Pool;
  temporal: Client;
  options: DeliveryOptions;
  metrics?: Pick<ApiMetrics, 'countUnmatchedLiveness'> | undefined;
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
  if (announcesOwnRequest(row)) {
    await markDelivered(pool, row.id, OWN_REQUEST_NOTE);
    return 'kept';
  }
  if (row.point === 'liveness') {
    const unmatched = await unmatchedRequest(ctx, row);
    if (unmatched) return unmatched;
  }
  if (isReversalCheck(row)) return deliverReversalCheck(ctx, row);
  const handle = temporal.workflow.getHandle(row.workflowId);
  // Temporal unreachable or slow: try this row again after its back-off.
  const retryLater = (err: unknown) =>
    markRetry(pool, row.id, describeError(err), new Date(Date.now() + backoffMs(row.attempts, options)));
  try {
    await withTemporalDeadline(temporal, options.signalTimeoutMs, () =>
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
    const d = await withTemporalDeadline(temporal, options.signalTimeoutMs, () => handle.describe());
    if (d.status.name === 'RUNNING') {
      // It started between our two calls: signal it on the next round.
      await markRetry(pool, row.id, 'workflow started meanwhile', new Date(Date.now() + options.retryBaseMs));
      return 'not_found';
    }
    const suspended = await suspendOnContradiction(pool, row);
    await markDelivered(
      pool,
      row.id,
      `workflow already closed (${d.status.name}); ${suspended ?? 'nothing to deliver'}`,
    );
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

/**
 * A deposit's reversal check (ingress/api-pix-reversals.ts) is started with its signal, or the
 * running one signalled: it needs no deposit workflow, whose history may long be gone when a MED
 * return comes, only the deposit's row.
 */
async function deliverReversalCheck(ctx: DeliveryContext, row: InboxRow): Promise<Outcome> {
  try {
    await withTemporalDeadline(ctx.temporal, ctx.options.signalTimeoutMs, () =>
      askReversalCheck(ctx.temporal, ctx.options.taskQueue, row.workflowId, row.signalPayload),
    );
  } catch (err) {
    await markRetry(
      ctx.pool,
      row.id,
      describeError(err),
      new Date(Date.now() + backoffMs(row.attempts, ctx.options)),
    );
    return 'unavailable';
  }
  await markDelivered(ctx.pool, row.id);
  return 'delivered';
}

/**
 * A liveness callback moves a flow only when it names a request that flow made (its
 * correlation_id or transaction_id, db/liveness-requests.ts): whoever learnt the webhook URL could
 * otherwise approve an onboarding, or suspend a person. A request's record can still be on its
 * way when its first callback comes: the row waits `requestWaitMs` for it; after that it is kept,
 * unsignalled, with a note, and counted. Undefined when the callback names a request.
 */
async function unmatchedRequest(ctx: DeliveryContext, row: InboxRow): Promise<Outcome | undefined> {
  const { pool, options } = ctx;
  const ids = row.signalPayload as Pick<LivenessProgress, 'correlationId' | 'transactionId'> | null;
  const named = await namesLivenessRequest(pool, {
    workflowId: row.workflowId,
    correlationId: ids?.correlationId,
    transactionId: ids?.transactionId,
  });
  if (named) return undefined;
  const waitEnds = row.receivedAt.getTime() + options.requestWaitMs;
  if (Date.now() < waitEnds) {
    const next = Math.min(Date.now() + backoffMs(row.attempts, options), waitEnds);
    await markRetry(pool, row.id, 'names no liveness request of this flow (yet)', new Date(next));
    return 'awaiting_request';
  }
  await markDelivered(pool, row.id, UNMATCHED_NOTE);
  ctx.metrics?.countUnmatchedLiveness(isBiometricsWorkflowId(row.workflowId) ? 'biometrics' : 'onboarding');
  return 'unmatched';
}

/**
 * A liveness outcome for an onboarding that has closed may contradict the person's verification
 * (customers/contradicted-onboarding.ts). Returns the note for the inbox row when it suspended them.
 */
async function suspendOnContradiction(pool: Pool, row: InboxRow): Promise<string | undefined> {
  if (row.point !== 'liveness') return undefined;
  const reason = await suspendIfContradicted(pool, {
    onboarding: row.workflowId,
    progress: row.signalPayload as LivenessProgress,
    source: async () => ({
      statusOnboarding: statusOnboardingOf(await rawBodyOf(pool, row.id)),
      receivedAt: row.receivedAt.toISOString(),
      inboxId: row.id,
    }),
  });
  return reason ? `customer suspended (${reason})` : undefined;
}

/** The callback's step in the provider's flow (the body is kept whole in the inbox; only this is copied). */
function statusOnboardingOf(raw: string | undefined): string | null {
  try {
    const read = readLivenessCallback(JSON.parse(raw ?? ''));
    return read.success && read.data.step !== '' ? read.data.step : null;
  } catch {
    return null;
  }
}
