import { type Client, ScheduleAlreadyRunning, type ScheduleOptions } from '@temporalio/client';
import type { Logger } from '../common/logger';
import { escapeMarkdown } from '../common/markdown';
import { rescreeningScheduleId } from '../contracts/rescreening';

/**
 * Creates the task queue's rescreening Schedule, or brings an existing one to the configured
 * interval: every worker asks at boot, so the Schedule follows the settings of the last worker
 * started. A pass still running makes the next start skip. Temporal unreachable: asks again
 * every `retryMs` until `stopped()`.
 */
export async function ensureRescreeningSchedule(
  client: Client,
  taskQueue: string,
  everyMs: number,
  log: Logger,
  opts: { retryMs: number; stopped: () => boolean },
): Promise<void> {
  const scheduleId = rescreeningScheduleId(taskQueue);
  const options = {
    scheduleId,
    spec: { intervals: [{ every: everyMs }] },
    action: {
      type: 'startWorkflow' as const,
      workflowType: 'rescreeningWorkflow',
      workflowId: scheduleId,
      taskQueue,
      args: [{}],
      staticSummary: escapeMarkdown(
        'Rescreening: asks the registry of impeded people about every active customer again',
      ),
    },
    policies: { overlap: 'SKIP' as const },
  } satisfies ScheduleOptions;
  while (!opts.stopped()) {
    try {
      try {
        await client.schedule.create(options);
      } catch (err) {
        if (!(err instanceof ScheduleAlreadyRunning)) throw err;
        await client.schedule.getHandle(scheduleId).update((prev) => ({
          ...prev,
          spec: options.spec,
          action: options.action,
          policies: { ...prev.policies, overlap: options.policies.overlap },
        }));
      }
      log.info({ scheduleId, everyMs }, 'rescreening scheduled');
      return;
    } catch (err) {
      log.warn({ scheduleId, err: String(err) }, 'could not set the rescreening schedule yet; asking again');
      await new Promise((r) => setTimeout(r, opts.retryMs));
    }
  }
}
