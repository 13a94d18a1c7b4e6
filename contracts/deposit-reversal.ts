import { defineSignal } from '@temporalio/workflow';

// A deposit's reversals: money of a completed deposit that went back to its payer without pixflow
// asking (a MED return the payer's side started, or any return whose id pixflow did not ask for).
// Recorded beside the deposit; the deposit's own status stays what it was (docs/flows.md).

/** One reversals workflow per deposit: repeated and concurrent webhooks signal the same one. */
export const depositReversalsWorkflowId = (txid: string) => `deposit-reversals-${txid}`;

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
