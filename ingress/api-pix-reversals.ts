import type { Client } from '@temporalio/client';
import type { Logger } from '../common/logger';
import {
  type ReversalCheck,
  reversalCheckSignal,
  reversalSweepWorkflowId,
} from '../contracts/deposit-reversal';
import type { ProviderNotification } from '../contracts/flow';

// What a PSP speaking the API Pix told pixflow of one received Pix, as the inbox keeps it: a hint
// to the deposit (the same signal the first provider's notifications send), and, when the Pix
// lists returns, a check of the deposit's reversals (workflows/deposit-reversals.ts).

/** The inbox's notification point of the API Pix webhooks. */
export const API_PIX_POINT = 'api-pix';

/** The hint to `deposit-<txid>`. */
export type ApiPixHint = ProviderNotification;

/** The workflow type the worker registers (workflows/deposit-reversals.ts). */
const REVERSALS_WORKFLOW = 'depositReversalsWorkflow';

/** Whether an inbox row asks a deposit's reversal check rather than signals a flow. */
export const isReversalCheck = (row: { signalName: string }) => row.signalName === reversalCheckSignal.name;

/**
 * Starts the deposit's reversal check (`workflowId`, deposit-reversals-<txid>) with its signal, or
 * signals the one running: every webhook and every copy of one lands in the same run, which asks
 * the PSP about each received Pix once per wave.
 */
export async function askReversalCheck(
  temporal: Client,
  taskQueue: string,
  workflowId: string,
  payload: unknown,
): Promise<void> {
  await temporal.workflow.signalWithStart(REVERSALS_WORKFLOW, {
    workflowId,
    taskQueue,
    signal: reversalCheckSignal,
    signalArgs: [payload as ReversalCheck],
  });
}

/**
 * Starts the task queue's reversal sweep unless it runs already (workflows/deposit-reversals.ts):
 * every API process that takes API Pix webhooks asks at start. Temporal unreachable: asks again
 * every `retryMs` until `stopped()`.
 */
export async function ensureReversalSweep(
  temporal: Client,
  taskQueue: string,
  log: Logger,
  opts: { retryMs: number; stopped: () => boolean },
): Promise<void> {
  const workflowId = reversalSweepWorkflowId(taskQueue);
  while (!opts.stopped()) {
    try {
      await temporal.workflow.start('depositReversalSweepWorkflow', {
        workflowId,
        taskQueue,
        args: [],
        workflowIdConflictPolicy: 'USE_EXISTING',
        staticSummary: 'Reversal sweep: looks again at recent deposits for returns whose webhooks were lost',
      });
      log.info({ workflowId }, 'reversal sweep running');
      return;
    } catch (err) {
      log.warn({ workflowId, err: String(err) }, 'could not start the reversal sweep yet; asking again');
      await new Promise((r) => setTimeout(r, opts.retryMs));
    }
  }
}
