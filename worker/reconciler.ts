import type { Client } from '@temporalio/client';
import type { Logger } from '../common/logger';
import { escapeMarkdown } from '../common/markdown';
import { reconcilerWorkflowId } from '../contracts/reconciler';

/**
 * Starts the task queue's reconciler unless it runs already: every worker asks at boot, so it
 * runs as long as any worker does, and only once however many there are. Temporal unreachable:
 * asks again every `retryMs` until `stopped()`.
 */
export async function ensureReconciler(
  client: Client,
  taskQueue: string,
  log: Logger,
  opts: { retryMs: number; stopped: () => boolean },
): Promise<void> {
  const workflowId = reconcilerWorkflowId(taskQueue);
  while (!opts.stopped()) {
    try {
      await client.workflow.start('reconcilerWorkflow', {
        workflowId,
        taskQueue,
        workflowIdConflictPolicy: 'USE_EXISTING',
        staticSummary: escapeMarkdown(
          'Reconciliation: looks up deposits and payouts waiting for the provider',
        ),
      });
      log.info({ workflowId }, 'reconciler running');
      return;
    } catch (err) {
      log.warn({ workflowId, err: String(err) }, 'could not start the reconciler yet; asking again');
      await new Promise((r) => setTimeout(r, opts.retryMs));
    }
  }
}
