import { condition, proxyActivities, setHandler, setWorkflowOptions } from '@temporalio/workflow';
import type { createDepositReversalActivities } from '../activities/deposit-reversals';
import { type ReversalCheck, reversalCheckSignal } from '../contracts/deposit-reversal';

type ReversalActivities = ReturnType<typeof createDepositReversalActivities>;

const { checkDepositReversals } = proxyActivities<ReversalActivities>({
  startToCloseTimeout: '30s',
  // The PSP unreachable: asked again for about a day, then the run fails and the next webhook
  // (or the sweep) starts another.
  scheduleToCloseTimeout: '1d',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '10m' },
  summary: "Ask the deposit's PSP for its received Pix's returns; record the ones pixflow did not ask for",
});

/**
 * Quiet this long after its last check, the run ends: the copies and retries of one webhook come
 * within seconds, and a later webhook starts the next run.
 */
const LINGER = '10s';

/**
 * A deposit's reversal checks (workflow id `deposit-reversals-<txid>`): started with a signal by
 * whoever hears of a return (the ingress, the sweep), so repeated and concurrent webhooks
 * coalesce into one run that checks each received Pix named since its last check, once.
 */
export async function depositReversalsWorkflow(): Promise<{ checks: number; recorded: number }> {
  const pending = new Map<string, ReversalCheck>();
  setHandler(reversalCheckSignal, (check) => {
    pending.set(check.e2eId, check);
  });
  let checks = 0;
  let recorded = 0;
  for (;;) {
    if (!(await condition(() => pending.size > 0, LINGER))) break;
    const batch = [...pending.values()];
    pending.clear();
    for (const check of batch) {
      const r = await checkDepositReversals(check);
      checks++;
      recorded += r.recorded;
    }
  }
  return { checks, recorded };
}
// Seconds long: a run ends on the build it started on.
setWorkflowOptions({ versioningBehavior: 'PINNED' }, depositReversalsWorkflow);
