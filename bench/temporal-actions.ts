import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import {
  AmountKey,
  CpfMaskedKey,
  FlowStatusKey,
  FlowTypeKey,
  MerchantKey,
} from '../common/search-attributes';

// Temporal Cloud's billable actions counted from a workflow's history, by the rules of its
// actions page (https://docs.temporal.io/cloud/actions): what the server records is counted the
// way the server bills it; what it bills without an event (queries, activity heartbeats,
// rejected updates) is not in a history and is left to the cost model's page to add.

type History = temporal.api.history.v1.IHistory;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const { EventType } = temporal.api.enums.v1;

export const HISTORIES_DIR = path.resolve(__dirname, '../test/fixtures/histories');

/** A history's billable actions, by the rule that bills them. */
export interface Actions {
  /** Workflow started (a client start, or the run a continue-as-new began); a child's is its parent's. */
  starts: number;
  /** Updates accepted (a rejected update is billed too, but leaves no event). */
  updates: number;
  /** Signals received; one a workflow sends is counted where it arrives, once. */
  signals: number;
  timers: number;
  /** Every attempt of every activity through the server: a retry is one more. */
  activityAttempts: number;
  /** Workflow tasks that recorded markers (local activities, patches): one action a task, whatever their number. */
  markerTasks: number;
  /** Search attribute upserts, but for one that sets only TemporalChangeVersion. */
  upserts: number;
  /** Child workflows (two actions each: the start and the execution), Nexus operations, options updated. */
  other: number;
  total: number;
}

/** What a history weighs and writes besides its actions. */
export interface HistoryFacts {
  workflowType: string;
  events: number;
  /** As the server keeps it: protobuf, payloads encrypted. */
  bytes: number;
  /** PixflowStatus upserts: the status changes after the one the flow started with. */
  statusChanges: number;
  /** Signals this workflow sent to another one (counted in the receiver's history). */
  signalsSent: number;
  /** Names of the updates it accepted, in order. */
  updateNames: string[];
  /** Search attribute keys of each billable upsert, in order. */
  upsertKeys: string[][];
  /** Started by a client, not by a parent nor a continue-as-new. */
  startedByClient: boolean;
  actions: Actions;
}

const CHANGE_VERSION = 'TemporalChangeVersion';

/** Per activity scheduled: its attempts, from the started event the server writes for the last one. */
function activityAttempts(events: HistoryEvent[]): number {
  const lastAttempt = new Map<string, number>();
  for (const e of events) {
    const started = e.activityTaskStartedEventAttributes;
    if (started) lastAttempt.set(String(started.scheduledEventId), started.attempt ?? 1);
  }
  return events
    .filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
    .reduce((n, e) => n + (lastAttempt.get(String(e.eventId)) ?? 1), 0);
}

export function historyFacts(history: History, bytes: number): HistoryFacts {
  const events = history.events ?? [];
  const count = (type: number) => events.filter((e) => e.eventType === type).length;
  const started = events[0]?.workflowExecutionStartedEventAttributes;
  const upsertKeys = events
    .map((e) => e.upsertWorkflowSearchAttributesEventAttributes)
    .filter((u) => u !== undefined && u !== null)
    .map((u) => Object.keys(u.searchAttributes?.indexedFields ?? {}))
    .filter((keys) => keys.some((k) => k !== CHANGE_VERSION));
  const markerTasks = new Set(
    events
      .map((e) => e.markerRecordedEventAttributes?.workflowTaskCompletedEventId)
      .filter((id) => id !== undefined && id !== null)
      .map(String),
  ).size;
  const actions: Omit<Actions, 'total'> = {
    starts: started && !started.parentWorkflowExecution ? 1 : 0,
    updates: count(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED),
    signals: count(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED),
    timers: count(EventType.EVENT_TYPE_TIMER_STARTED),
    activityAttempts: activityAttempts(events),
    markerTasks,
    upserts: upsertKeys.length,
    other:
      2 * count(EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED) +
      count(EventType.EVENT_TYPE_NEXUS_OPERATION_SCHEDULED) +
      count(EventType.EVENT_TYPE_NEXUS_OPERATION_CANCEL_REQUESTED) +
      count(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_OPTIONS_UPDATED),
  };
  return {
    workflowType: started?.workflowType?.name ?? 'unknown',
    events: events.length,
    bytes,
    statusChanges: upsertKeys.filter((keys) => keys.includes(FlowStatusKey.name)).length,
    signalsSent: count(EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED),
    updateNames: events
      .map((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name)
      .filter((n): n is string => typeof n === 'string'),
    upsertKeys,
    startedByClient: Boolean(started && !started.parentWorkflowExecution && !started.continuedExecutionRunId),
    actions: { ...actions, total: Object.values(actions).reduce((a, b) => a + b, 0) },
  };
}

/** A change between a recorded history and the same flow run as pixflow runs it, and why. */
export interface Adjustment {
  delta: number;
  why: string;
}

/** The filter tags every starter sets at the start (starters/*.ts). */
const START_TAGS = new Set([FlowTypeKey.name, CpfMaskedKey.name, AmountKey.name, MerchantKey.name]);

/** The update each flow started by update-with-start is started with. */
const START_UPDATES: Record<string, string[]> = {
  depositWorkflow: ['qrCode'],
  withdrawalWorkflow: ['request'],
  biometricsWorkflow: ['biometricLink', 'biometricStepUp'],
};

/**
 * The saved histories were recorded by tests, some of which start a workflow by hand: what the
 * same run costs when pixflow's API (or activity) starts it. Its starters set the filter tags at
 * the start, where they bill nothing, and start deposits, withdrawals and identifications with
 * update-with-start; `POST /v1/onboardings` answers from a query, which no history shows.
 */
export function asPixflowStartsIt(f: HistoryFacts): Adjustment[] {
  const out: Adjustment[] = [];
  const tagOnly = f.upsertKeys.filter((keys) => keys.every((k) => START_TAGS.has(k))).length;
  if (tagOnly) out.push({ delta: -tagOnly, why: 'filter tags set at the start, not upserted' });
  const startUpdates = START_UPDATES[f.workflowType];
  if (f.startedByClient && startUpdates && !f.updateNames.some((n) => startUpdates.includes(n)))
    out.push({ delta: 1, why: 'started with its update (update-with-start)' });
  if (f.workflowType === 'onboardingWorkflow' && f.startedByClient)
    out.push({ delta: 1, why: 'the query that answers POST /v1/onboardings' });
  return out;
}

export interface SavedHistory {
  /** The file's name without `.history.pb`: flow, then path. */
  name: string;
  facts: HistoryFacts;
  adjustments: Adjustment[];
  /** Actions as pixflow runs it: the recorded ones plus the adjustments. */
  actions: number;
}

/** Every saved history (test/fixtures/histories), read as the server keeps it, by name. */
export function savedHistories(dir = HISTORIES_DIR): SavedHistory[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.history.pb'))
    .sort()
    .map((file) => {
      const bytes = readFileSync(path.join(dir, file));
      const facts = historyFacts(temporal.api.history.v1.History.decode(bytes), bytes.length);
      const adjustments = asPixflowStartsIt(facts);
      return {
        name: path.basename(file, '.history.pb'),
        facts,
        adjustments,
        actions: facts.actions.total + adjustments.reduce((a, b) => a + b.delta, 0),
      };
    });
}
