import { temporal } from '@temporalio/proto';
import { depositWorkflowId } from '../../contracts/deposit';
import { onboardingWorkflowId } from '../../contracts/onboarding';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import type { ActivityKind, FloorShape } from '../floor-workflow';
import type { Bench } from '../harness';
import type { Launched } from '../load';
import { completedFlows, type FlowType, onboardSomeone, postDeposit, postWithdrawal } from '../pixflow';
import { say, sleep } from '../settings';

// The shape of a flow, read from a real one's history: the floor workflow copies it. And what a
// history weighs, as the server stores it.

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** What one flow's history held, for the record. */
export interface FlowShape {
  activities: number;
  activityNames: string[];
  localActivities: number;
  signals: number;
  updates: number;
  historyEvents: number;
  historyBytes: number;
}

/** A workflow's history: its events, and its size encoded as the server sends it (payloads encrypted). */
export async function readHistory(b: Bench, workflowId: string) {
  const history = await b.client.workflow.getHandle(workflowId).fetchHistory();
  return {
    events: history.events ?? [],
    bytes: temporal.api.history.v1.History.encode(history).finish().length,
  };
}

/** Runs one flow of this type to the end and reads its shape from its history. */
async function readShape(
  b: Bench,
  type: FlowType,
  launch: () => Promise<Launched>,
  workflowIdOf: (id: string) => string,
): Promise<{ shape: FloorShape; flowShape: FlowShape }> {
  say(`one ${type} to the end, to read its activities, signals and answer from its history...`);
  const probe = await launch();
  if (!probe.ok) throw new Error(`the ${type} to read a shape from was refused: ${probe.status}`);
  let done: number[] = [];
  for (let i = 0; i < 120 && done.length === 0; i++) {
    await sleep(500);
    done = await completedFlows(b, type)([probe.id]);
  }
  if (!done.length) throw new Error(`the ${type} to read a shape from did not finish in 60 s`);
  await sleep(1_000);
  const { events, bytes } = await readHistory(b, workflowIdOf(probe.id));
  const { shape, activityNames } = floorShapeOf(events);
  const flowShape: FlowShape = {
    activities: activityNames.length,
    activityNames,
    localActivities: shape.activities.filter((k) => k === 'local').length,
    signals: shape.signals,
    updates: events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length,
    historyEvents: events.length,
    historyBytes: bytes,
  };
  say(`the ${type}: ${JSON.stringify(flowShape)}; its floor: ${JSON.stringify(shape)}`);
  return { shape, flowShape };
}

export const readDepositShape = (b: Bench) =>
  readShape(b, 'deposit', () => postDeposit(b), depositWorkflowId);

export const readWithdrawalShape = (b: Bench) =>
  readShape(b, 'withdrawal', () => postWithdrawal(b), withdrawalWorkflowId);

/** An onboarding's business id is the CPF's keyed hash, as is its workflow id's tail. */
export const readOnboardingShape = (b: Bench) =>
  readShape(b, 'onboarding', () => onboardSomeone(b), onboardingWorkflowId);

/**
 * A history's activities in order, each local (a local activity leaves a marker instead of
 * scheduled, started and completed events) or remote, with the signals received before each;
 * how its caller was answered (an update, at the point its answer was written; otherwise a
 * query after the start); and the names of the remote ones.
 */
export function floorShapeOf(events: HistoryEvent[]): { shape: FloorShape; activityNames: string[] } {
  const shape: FloorShape = {
    activities: [],
    signalsBefore: [],
    signals: 0,
    answer: 'query',
    answerAfter: 0,
  };
  const activityNames: string[] = [];
  for (const e of events) {
    if (e.workflowExecutionSignaledEventAttributes) shape.signals += 1;
    if (e.workflowExecutionUpdateCompletedEventAttributes && shape.answer === 'query') {
      shape.answer = 'update';
      shape.answerAfter = shape.activities.length;
    }
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
