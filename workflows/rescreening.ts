import {
  continueAsNew,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  setWorkflowOptions,
  workflowInfo,
} from '@temporalio/workflow';
import type { createRescreeningActivities } from '../activities/rescreening';
import {
  BATCHES_PER_RUN,
  RESCREEN_BATCH_SIZE,
  type RescreeningInput,
  type RescreeningProgress,
  rescreeningProgressQuery,
  zeroRescreeningProgress,
} from '../contracts/rescreening';

type RescreeningActivities = ReturnType<typeof createRescreeningActivities>;

const { rescreenBatch } = proxyActivities<RescreeningActivities>({
  // A batch paces itself (a hundred people at the configured rate); the heartbeat tells a dead
  // worker's batch apart, and its retry resumes after the last person heartbeated.
  startToCloseTimeout: '1h',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '1s', maximumInterval: '1m' },
  summary: 'Ask the registry of impeded people about the next active customers',
});

function showProgress(p: RescreeningProgress, startedAt: string) {
  // What the Temporal UI shows for the run (no CPF, no hash: counts only).
  setCurrentDetails(
    [
      `**Rescreening** of the customers active before ${startedAt}${p.done ? ': done' : ''}`,
      '',
      `- screened: ${p.screened}`,
      `- impeded: ${p.impeded}`,
      `- registry unavailable: ${p.unavailable}`,
      `- no CPF on file: ${p.noCpf}`,
    ].join('\n'),
  );
}

/**
 * One pass of the rescreening (docs/rules.md, Eligibility), started by its Schedule: the active
 * customers in keyset batches, the cursor and counts carried across runs.
 */
export async function rescreeningWorkflow(input: RescreeningInput = {}): Promise<RescreeningProgress> {
  const startedAt = input.startedAt ?? new Date(workflowInfo().startTime).toISOString();
  const batchSize = input.batchSize ?? RESCREEN_BATCH_SIZE;
  let progress = input.progress ?? zeroRescreeningProgress();
  setHandler(rescreeningProgressQuery, () => progress);
  for (let batch = 0; batch < BATCHES_PER_RUN; batch++) {
    showProgress(progress, startedAt);
    const r = await rescreenBatch({ startedAt, after: progress.cursor, limit: batchSize });
    progress = {
      screened: progress.screened + r.screened,
      impeded: progress.impeded + r.impeded,
      unavailable: progress.unavailable + r.unavailable,
      noCpf: progress.noCpf + r.noCpf,
      cursor: r.cursor,
      done: r.done,
    };
    if (progress.done) break;
  }
  showProgress(progress, startedAt);
  if (progress.done) return progress;
  return continueAsNew<typeof rescreeningWorkflow>({ startedAt, progress, batchSize });
}
// A pass lasts many batches: each batch runs on the current build.
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, rescreeningWorkflow);
