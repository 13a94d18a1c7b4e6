import type { temporal } from '@temporalio/proto';
import { depositWorkflowId } from '../../contracts/deposit';
import type { ActivityKind, FloorShape } from '../floor-workflow';
import type { Bench } from '../harness';
import { completedFlows, postDeposit } from '../pixflow';
import { say, sleep } from '../settings';

// The shape of a deposit, read from a real one's history: the floor workflow copies it.

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** What one deposit's history held, for the record. */
export interface DepositShape {
  activities: number;
  activityNames: string[];
  localActivities: number;
  signals: number;
  updates: number;
  historyEvents: number;
}

/** Runs one deposit to the end and reads its activities, signals and updates from its history. */
export async function readDepositShape(b: Bench): Promise<{ shape: FloorShape; depositShape: DepositShape }> {
  say('one deposit, to count its activities, signals and updates...');
  const probe = await postDeposit(b);
  let probeTimes: number[] = [];
  for (let i = 0; i < 60 && probeTimes.length === 0; i++) {
    await sleep(500);
    probeTimes = await completedFlows(b, 'deposit')([probe.id]);
  }
  await sleep(1_000);
  const history = await b.client.workflow.getHandle(depositWorkflowId(probe.id)).fetchHistory();
  const events = history.events ?? [];
  const { shape, activityNames } = floorShapeOf(events);
  const depositShape = {
    activities: activityNames.length,
    activityNames,
    localActivities: shape.activities.filter((k) => k === 'local').length,
    signals: shape.signals,
    updates: events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length,
    historyEvents: events.length,
  };
  say(`a deposit: ${JSON.stringify(depositShape)}; the floor: ${JSON.stringify(shape)}`);
  return { shape, depositShape };
}

/**
 * A history's activities in order, each local (a local activity leaves a marker instead of
 * scheduled, started and completed events) or remote, with the signals received before each;
 * and the names of the remote ones.
 */
function floorShapeOf(events: HistoryEvent[]): { shape: FloorShape; activityNames: string[] } {
  const shape: FloorShape = { activities: [], signalsBefore: [], signals: 0 };
  const activityNames: string[] = [];
  for (const e of events) {
    if (e.workflowExecutionSignaledEventAttributes) shape.signals += 1;
    const scheduled = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (scheduled) activityNames.push(scheduled);
    const kind: ActivityKind | undefined = scheduled
      ? 'remote'
      : e.markerRecordedEventAttributes?.markerName === 'core_local_activity'
        ? 'local'
        : undefined;
    if (kind) {
      shape.activities.push(kind);
      shape.signalsBefore.push(shape.signals);
    }
  }
  return { shape, activityNames };
}
