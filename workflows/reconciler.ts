import {
  ActivityFailure,
  continueAsNew,
  log,
  proxyActivities,
  setWorkflowOptions,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { createReconciliationActivities } from '../activities/reconciliation';
import { SWEEPS_PER_RUN } from '../contracts/reconciler';

type ReconciliationActivities = ReturnType<typeof createReconciliationActivities>;

const { reconcileDue } = proxyActivities<ReconciliationActivities>({
  // A sweep paces itself over about one interval; the heartbeat tells a dead worker's sweep apart.
  startToCloseTimeout: '5m',
  heartbeatTimeout: '30s',
  // A failed sweep is not retried: the next one takes the same due rows.
  retry: { maximumAttempts: 1 },
  summary: 'Look up the flows due for reconciliation; tell those found settled',
});

/**
 * Reconciliation's clock: a sweep, then the wait the sweep asks for (none while it is behind),
 * for ever. The flows themselves keep no reconciliation timer (activities/reconciliation.ts).
 */
export async function reconcilerWorkflow(): Promise<never> {
  for (let sweep = 0; sweep < SWEEPS_PER_RUN && !workflowInfo().continueAsNewSuggested; sweep++) {
    let nextInMs = 10_000;
    try {
      ({ nextInMs } = await reconcileDue());
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      log.warn('reconciliation sweep failed; the next one takes its rows', { error: String(err.cause) });
    }
    // Never a busy loop: a sweep behind its schedule still yields a second.
    await sleep(Math.max(1_000, nextInMs), { summary: 'Next reconciliation sweep' });
  }
  return continueAsNew<typeof reconcilerWorkflow>();
}
// It runs for ever: each sweep runs on the current build.
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, reconcilerWorkflow);
