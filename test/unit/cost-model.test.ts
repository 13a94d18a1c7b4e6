import { readFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import {
  actionsPrice,
  COST_MODEL_PAGE,
  costModelSection,
  latestCostRun,
  withCostModel,
} from '../../bench/cost-model';
import { asPixflowStartsIt, HISTORIES_DIR, historyFacts, savedHistories } from '../../bench/temporal-actions';

// docs/cost-model.md's figures are generated from the saved histories and the latest bench
// results: stale, this fails (`npm run docs:cost-model` writes them again).

const page = readFileSync(COST_MODEL_PAGE, 'utf8');
const isCurrent = (section: string) => withCostModel(page, section) === page;
const { EventType } = temporal.api.enums.v1;
/** An event as protobuf's fromObject takes it: ids as plain numbers. */
type Event = Record<string, unknown>;

/** A history of these events, numbered in order. */
function historyOf(...events: Event[]) {
  return temporal.api.history.v1.History.fromObject({
    events: events.map((e, i) => ({ ...e, eventId: i + 1 })),
  });
}
const started = (workflowType: string, more: object = {}): Event => ({
  eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
  workflowExecutionStartedEventAttributes: { workflowType: { name: workflowType }, ...more },
});
const of = (eventType: number, more: Event = {}): Event => ({ eventType, ...more });
const marker = (task: number): Event =>
  of(EventType.EVENT_TYPE_MARKER_RECORDED, {
    markerRecordedEventAttributes: { markerName: 'core_local_activity', workflowTaskCompletedEventId: task },
  });
const upsert = (...keys: string[]): Event =>
  of(EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES, {
    upsertWorkflowSearchAttributesEventAttributes: {
      searchAttributes: { indexedFields: Object.fromEntries(keys.map((k) => [k, {}])) },
    },
  });

describe('the cost model page', () => {
  it('shows what the saved histories and the latest results file give', () => {
    expect(isCurrent(costModelSection()), 'run npm run docs:cost-model').toBe(true);
    const run = latestCostRun();
    expect(run, 'a results file with a cost part').toBeDefined();
    expect(page).toContain(`From \`${run?.file}\``);
  });

  it('goes stale when a history costs one action more', () => {
    const all = savedHistories();
    const more = all.map((h) => (h.name === 'deposit-paid' ? { ...h, actions: h.actions + 1 } : h));
    expect(isCurrent(costModelSection(more))).toBe(false);
  });

  it('goes stale when a newer run measures other CPU', () => {
    const run = latestCostRun();
    if (!run) throw new Error('no results file with a cost part');
    const worker = (run.deposit.cpuMs.worker ?? 0) * 0.9;
    const newer = { ...run, deposit: { ...run.deposit, cpuMs: { ...run.deposit.cpuMs, worker } } };
    expect(isCurrent(costModelSection(savedHistories(), newer))).toBe(false);
  });
});

describe("the flows' billed actions", () => {
  // What a flow costs on Temporal Cloud, as pixflow runs it: a change that adds an action to one
  // of these paths fails here before it reaches the cost model's page.
  it.each([
    ['deposit-paid', 6],
    ['deposit-expired-one-look', 5],
    ['withdrawal-reconciliation-hint', 8],
  ])('%s: at most %i actions', (name, most) => {
    const history = savedHistories().find((h) => h.name === name);
    expect(history, name).toBeDefined();
    expect(history?.actions).toBeLessThanOrEqual(most);
    // No status upsert on the plain paths: their rows show the status.
    expect(history?.facts.statusChanges).toBe(0);
  });
});

describe('Temporal Cloud actions counted from a history', () => {
  it('bills each operation by its rule', () => {
    const facts = historyFacts(
      historyOf(
        started('depositWorkflow'),
        of(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED),
        // Two local activities' markers in the same workflow task: one action.
        marker(2),
        marker(2),
        // A patch's search attribute bills nothing; a status change does.
        upsert('TemporalChangeVersion'),
        upsert('PixflowStatus'),
        of(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED, {
          workflowExecutionUpdateAcceptedEventAttributes: { acceptedRequest: { input: { name: 'qrCode' } } },
        }),
        of(EventType.EVENT_TYPE_TIMER_STARTED),
        // An activity that ran three attempts: three actions.
        of(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED),
        of(EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED, {
          activityTaskStartedEventAttributes: { scheduledEventId: 9, attempt: 3 },
        }),
        of(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED),
        of(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED),
        marker(12),
        // Counted where it arrives, not here.
        of(EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED),
        // The child's start and its execution.
        of(EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED),
        of(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED),
      ),
      1000,
    );
    expect(facts.actions).toEqual({
      starts: 1,
      updates: 1,
      signals: 1,
      timers: 1,
      activityAttempts: 3,
      markerTasks: 2,
      upserts: 1,
      other: 2,
      total: 12,
    });
    expect(facts).toMatchObject({ statusChanges: 1, signalsSent: 1, startedByClient: true });
  });

  it("bills no start for a child (its parent's) and one for a run continued as new", () => {
    const child = historyFacts(historyOf(started('x', { parentWorkflowExecution: { workflowId: 'p' } })), 1);
    const continued = historyFacts(historyOf(started('x', { continuedExecutionRunId: 'r' })), 1);
    expect(child.actions.starts).toBe(0);
    expect(continued.actions).toMatchObject({ starts: 1 });
    expect(continued.startedByClient).toBe(false);
  });

  it('adds what pixflow starts a flow with that a test did not', () => {
    const byHand = historyFacts(
      historyOf(
        started('withdrawalWorkflow'),
        upsert('PixflowType', 'PixflowCpfMasked', 'PixflowAmountCentavos'),
      ),
      1,
    );
    expect(asPixflowStartsIt(byHand).map((a) => a.delta)).toEqual([-1, 1]);
    const onboarding = historyFacts(historyOf(started('onboardingWorkflow')), 1);
    expect(asPixflowStartsIt(onboarding)).toEqual([
      { delta: 1, why: 'the query that answers POST /v1/onboardings' },
    ]);
  });

  it("counts a paid deposit's saved history event by event", () => {
    const bytes = readFileSync(path.join(HISTORIES_DIR, 'deposit-paid.history.pb'));
    const facts = historyFacts(temporal.api.history.v1.History.decode(bytes), bytes.length);
    // Its start, the qrCode update, the QR's local activity (first task), the QR's timer, the
    // notification's signal, the look and the row (one task); and the tags the test's start left
    // out. No status upsert: its row shows the status.
    expect(facts.actions).toEqual({
      starts: 1,
      updates: 1,
      signals: 1,
      timers: 1,
      activityAttempts: 0,
      markerTasks: 2,
      upserts: 1,
      other: 0,
      total: 7,
    });
    expect(facts.statusChanges).toBe(0);
  });

  it("prices a month's actions by tier", () => {
    expect(actionsPrice(11.25e6)).toEqual({ usd: 525, overMillions: 0 });
    expect(actionsPrice(250e6)).toEqual({ usd: 5925, overMillions: 50 });
  });
});
