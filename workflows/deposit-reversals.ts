import {
  ActivityFailure,
  condition,
  continueAsNew,
  log,
  proxyActivities,
  setHandler,
  setWorkflowOptions,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { createDepositReversalActivities } from '../activities/deposit-reversals';
import {
  REVERSAL_SWEEP,
  type ReversalCheck,
  type ReversalSweepCursor,
  reversalCheckSignal,
} from '../contracts/deposit-reversal';

type ReversalActivities = ReturnType<typeof createDepositReversalActivities>;

const { checkDepositReversals } = proxyActivities<ReversalActivities>({
  startToCloseTimeout: '30s',
  // The PSP unreachable: asked again for about a day, then the run fails and the next webhook
  // (or the sweep) starts another.
  scheduleToCloseTimeout: '1d',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '10m' },
  summary: "Ask the deposit's PSP for its received Pix's returns; record the ones pixflow did not ask for",
});

const { sweepDepositReversals } = proxyActivities<ReversalActivities>({
  // A batch paces itself at the sweep's rate; the heartbeat tells a dead worker's batch apart.
  startToCloseTimeout: '10m',
  heartbeatTimeout: '1m',
  // A failed batch is not retried: the next pass over the window takes its deposits.
  retry: { maximumAttempts: 1 },
  summary: 'Look again at recent completed deposits for returns whose webhooks were lost',
});

/**
 * Quiet this long after its last check, the run ends: the copies and retries of one webhook come
 * within seconds, and a later webhook starts the next run.
 */
const LINGER = '10s';

/**
 * A deposit's reversal checks (workflow id `deposit-reversals-<txid>`): started with a signal by
 * whoever hears of a return (the ingress), so repeated and concurrent webhooks coalesce into one
 * run that checks each received Pix named since its last check, once.
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

/**
 * The sweep for reversals whose webhooks were all lost (workflow id
 * `deposit-reversal-sweep-<task queue>`): recent completed deposits, a batch at a time with a
 * pause between, then a rest before the next pass over the window, for ever.
 */
export async function depositReversalSweepWorkflow(start?: ReversalSweepCursor): Promise<never> {
  let cursor = start;
  for (let i = 0; i < REVERSAL_SWEEP.batchesPerRun && !workflowInfo().continueAsNewSuggested; i++) {
    let done = false;
    try {
      const batch = await sweepDepositReversals(cursor ?? null);
      cursor = batch.next;
      done = batch.next === undefined;
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      log.warn('reversal sweep batch failed; the next pass over the window takes its deposits', {
        error: String(err.cause),
      });
    }
    await sleep(done ? REVERSAL_SWEEP.restMs : REVERSAL_SWEEP.pauseMs, {
      summary: done ? 'Next pass over recent deposits' : 'Next batch of recent deposits',
    });
  }
  return continueAsNew<typeof depositReversalSweepWorkflow>(cursor);
}
// It runs for ever: each batch runs on the current build.
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, depositReversalSweepWorkflow);
