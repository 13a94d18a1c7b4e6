import type { Client } from '@temporalio/client';
import { depositReversalsWorkflowId, reversalCheckSignal } from '../contracts/deposit-reversal';
import type { ProviderNotification } from '../contracts/flow';

// What a PSP speaking the API Pix told pixflow of one received Pix, as the inbox keeps it: the
// deposit's provider hint (the same signal the first provider's notifications send), with the
// Pix's end-to-end id, which the deposit's reversal check asks the PSP about.

/** The inbox's notification point of the API Pix webhooks. */
export const API_PIX_POINT = 'api-pix';

/** The hint to `deposit-<txid>`, carrying the received Pix's e2eId for its reversal check. */
export type ApiPixHint = ProviderNotification & { e2eId: string };

/** The workflow type the worker registers (workflows/deposit-reversals.ts). */
const REVERSALS_WORKFLOW = 'depositReversalsWorkflow';

/**
 * Starts the deposit's reversal check, or signals the one running: every webhook and every copy
 * of one lands in the same run, which checks each received Pix once per wave.
 */
export async function askReversalCheck(temporal: Client, taskQueue: string, payload: unknown): Promise<void> {
  const hint = payload as Partial<ApiPixHint> | null;
  if (!hint?.id || !hint.e2eId) return;
  await temporal.workflow.signalWithStart(REVERSALS_WORKFLOW, {
    workflowId: depositReversalsWorkflowId(hint.id),
    taskQueue,
    signal: reversalCheckSignal,
    signalArgs: [{ txid: hint.id, e2eId: hint.e2eId, source: 'webhook' }],
  });
}
