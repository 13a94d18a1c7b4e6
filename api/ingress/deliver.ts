import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { INBOX_DEFAULTS } from '../../common/config';
import { maskCpfsIn } from '../../common/mask';
import type { LivenessProgress } from '../../contracts/onboarding';
import { type ProviderNotification, providerNotificationSignal } from '../../contracts/shared';
import { suspendVerification, verificationOfHash } from '../../db/customers';
import { type InboxRow, markDelivered, markGaveUp, markRetry, rawBodyOf } from '../../db/inbox';
import type { Pool } from '../../db/pool';
import { withTemporalDeadline } from '../temporal-deadline';

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

export type Outcome = 'delivered' | 'kept' | 'closed' | 'not_found' | 'gave_up' | 'unavailable';

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

export const KEPT_NOTE = "not signalled: it announces the flow's own request";

export interface DeliveryContext {
  pool: Pool;
  temporal: Client;
  options: DeliveryOptions;
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
    await markDelivered(pool, row.id, KEPT_NOTE);
    return 'kept';
  }
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

const ONBOARDING_PREFIX = 'onboarding-';
/** Liveness outcomes that contradict a closed onboarding's verification. */
const CONTRADICTS: Record<string, readonly string[]> = {
  approved: ['failed', 'manual_refused'],
  rejected: ['completed', 'manual_approved'],
};

/**
 * A liveness outcome for an onboarding that has already closed the other way (the provider
 * refused after pixflow approved, or approved after it rejected) cannot reach the flow; the two
 * would disagree for ever. It suspends the person's verification instead, with the evidence,
 * until an operator decides. Returns the note for the inbox row when it did.
 */
async function suspendOnContradiction(pool: Pool, row: InboxRow): Promise<string | undefined> {
  if (row.point !== 'liveness' || !row.workflowId.startsWith(ONBOARDING_PREFIX)) return undefined;
  const progress = row.signalPayload as LivenessProgress;
  const cpfHash = row.workflowId.slice(ONBOARDING_PREFIX.length);
  const verification = await verificationOfHash(pool, cpfHash);
  if (!verification || !CONTRADICTS[verification]?.includes(progress.statusVerification)) return undefined;
  const reason = `provider_contradicts: ${progress.statusVerification}`;
  const suspended = await suspendVerification(pool, {
    cpfHash,
    expected: verification,
    reason,
    at: new Date(),
    evidence: {
      onboarding: row.workflowId,
      verificationBefore: verification,
      statusVerification: progress.statusVerification,
      statusOnboarding: statusOnboardingOf(await rawBodyOf(pool, row.id)),
      transactionId: progress.transactionId ?? null,
      providerAt: progress.at ?? null,
      receivedAt: row.receivedAt.toISOString(),
      inboxId: row.id,
    },
  });
  return suspended ? `customer suspended (${reason})` : undefined;
}

/** The callback's status_onboarding (the body is kept whole in the inbox; only this is copied). */
function statusOnboardingOf(raw: string | undefined): string | null {
  try {
    const body = JSON.parse(raw ?? '') as { status_onboarding?: unknown };
    return typeof body.status_onboarding === 'string' ? body.status_onboarding : null;
  } catch {
    return null;
  }
}
