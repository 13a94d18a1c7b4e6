import { defineSignal } from '@temporalio/workflow';
import { brandScopedId } from './flow';

// A deposit's reversals: money of a completed deposit that went back to its payer without pixflow
// asking (a MED return the payer's side started, or any return whose id pixflow did not ask for).
// Recorded beside the deposit; the deposit's own status stays what it was (docs/flows.md).

/**
 * One reversals workflow per deposit: repeated and concurrent webhooks signal the same one. Scoped
 * by the deposit's brand as its id is.
 */
export const depositReversalsWorkflowId = (txid: string, brand?: string) =>
  brandScopedId(`deposit-reversals-${txid}`, brand);

/**
 * The sweep that makes up for a reversal whose webhooks were all lost: recent completed deposits of
 * connectors that tell their returns, looked at again, a batch at a time, at a low rate, for ever.
 * One per task queue, started by the API processes that take API Pix webhooks.
 */
export const reversalSweepWorkflowId = (taskQueue: string) => `deposit-reversal-sweep-${taskQueue}`;

/** Where a sweep stands in the deposits it goes through: after this one, by its row's last change. */
export interface ReversalSweepCursor {
  /** The row's updated_at in microseconds since the epoch, as text (exact). */
  updatedUs: string;
  workflowId: string;
}

export const REVERSAL_SWEEP = {
  /** Deposits completed this long ago at most (a MED return is asked for within 80 days). */
  windowMs: 90 * 86_400_000,
  /** Deposits looked at per batch, and PSP lookups a second at most. */
  batch: 50,
  perSecond: 1,
  /** Between batches; after the last one of the window, until the next pass over it. */
  pauseMs: 60_000,
  restMs: 6 * 3_600_000,
  /** Batches per run before it continues as new, keeping its history short. */
  batchesPerRun: 200,
} as const;

/** What one batch of the sweep did, and where the next one starts (none: the window is done). */
export interface ReversalSweepBatch {
  checked: number;
  recorded: number;
  next?: ReversalSweepCursor;
}

/** What the ingress (or a sweep) asks: look at this received Pix of the deposit again. */
export interface ReversalCheck {
  txid: string;
  /** The received Pix's end-to-end id; what the PSP says of it is asked, never the webhook's body. */
  e2eId: string;
  /** Who asked: the PSP's webhook, or the sweep over recent deposits. */
  source: 'webhook' | 'sweep';
}

export const reversalCheckSignal = defineSignal<[ReversalCheck]>('reversalCheck');

/** A reversal's state: the PSP's return's, `returned` and `failed` final. */
export const reversalStates = ['processing', 'returned', 'failed'] as const;
export type ReversalState = (typeof reversalStates)[number];

/** A reversal as the deposit's flows row (`details.reversed`) and its event show it. */
export interface DepositReversal {
  e2eId: string;
  returnId: string;
  nature: string;
  amountCentavos: number;
  /** Less than the deposit's amount. */
  partial: boolean;
  state: ReversalState;
  firstSeenAt: string;
  settledAt?: string;
}

/** What one check found: the returns it recorded new, and those whose state moved. */
export interface ReversalCheckResult {
  recorded: number;
  updated: number;
}
