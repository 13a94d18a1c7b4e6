import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  TimeoutFailure,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { escapeMarkdown } from '../common/markdown';
import { maskCpf } from '../common/mask';
import {
  AmountKey,
  CpfMaskedKey,
  FlowStatusKey,
  FlowTypeKey,
  MerchantKey,
} from '../common/search-attributes';
import { type FlowRecord, providerNotificationSignal } from '../contracts/flow';

// What every flow does the same way: keep its state record, show each status change where
// operators look, and wait for an outcome a hint announces (the provider's or reconciliation's).

/**
 * Retries of provider calls: 1 s doubling to at most 15 s, forever (business 4xx errors are
 * non-retryable and stop at once). A short cap means flows resume within seconds once a
 * provider outage or a burst of faults ends, instead of waiting out a long back-off.
 */
const PROVIDER_RETRY = {
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval: '15s',
} as const;

/** An activity that calls the provider: 30 s an attempt, retried as PROVIDER_RETRY. */
export const PROVIDER_CALL_OPTIONS = { startToCloseTimeout: '30s', retry: PROVIDER_RETRY } as const;

/** An idempotent write in our own Postgres: short attempts, retried soon, at most 10 s apart. */
export const POSTGRES_WRITE_OPTIONS = {
  startToCloseTimeout: '10s',
  retry: { initialInterval: '500ms', maximumInterval: '10s' },
} as const;

// A local activity: one idempotent upsert in our own Postgres, run inside the workflow task that
// changed the state instead of an activity task round trip through the server. The seq guard
// keeps a re-run after a retried workflow task harmless.
// No summary: its name says it, and an encrypted summary would be kept in every state change's
// history event.
const { recordFlow } = proxyLocalActivities<{ recordFlow(r: FlowRecord): Promise<void> }>(
  POSTGRES_WRITE_OPTIONS,
);

/**
 * A look at the provider that a hint wakes runs first as a local activity, inside the workflow
 * task the hint started: no activity task and no second workflow task through the server, so an
 * outcome is seen sooner and costs the server less. A provider that does not answer in these few
 * tries hands over to the activity through the server, whose long retries add nothing to history.
 */
export const LOCAL_LOOK_OPTIONS = {
  startToCloseTimeout: '10s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumAttempts: 3 },
} as const;

/** The look as a local activity (LOCAL_LOOK_OPTIONS), then as an activity through the server if it failed. */
export async function lookAsLocalActivityFirst<A extends unknown[], R>(
  local: (...args: A) => Promise<R>,
  throughServer: (...args: A) => Promise<R>,
  ...args: A
): Promise<R> {
  try {
    return await local(...args);
  } catch (err) {
    if (isLocalActivityFailure(err)) return throughServer(...args);
    throw err;
  }
}

/** A local activity's failure: it arrives either wrapped in an ActivityFailure or as its cause. */
export function isLocalActivityFailure(
  err: unknown,
): err is ActivityFailure | ApplicationFailure | TimeoutFailure {
  return err instanceof ActivityFailure || err instanceof ApplicationFailure || err instanceof TimeoutFailure;
}

export function isoNow(): string {
  return new Date().toISOString();
}

type RecordBase = Omit<FlowRecord, 'workflowId' | 'status' | 'seq' | 'reason' | 'details'>;

interface TrackedState<Status extends string> {
  status: Status;
  updatedAt: string;
  finishedAt?: string;
}

export interface FlowTracking<Status extends string, State extends TrackedState<Status>> {
  /** The flow's record: type, business id, and the person and amount it is about. */
  record: RecordBase;
  state: State;
  finalStatuses: readonly Status[];
  /** Where the state keeps the reason a status change gives; unset: its `reason`. */
  keepReason?: (reason: string | undefined) => void;
  /** What the flows row says of the state, besides its status and reason. */
  details: () => Record<string, unknown>;
  /** The flows rows the run this one continues wrote already: its rows come after them. */
  rowsBefore?: number;
}

/**
 * A flow's status changes, each shown in three places: the PixflowStatus search attribute
 * (Temporal UI filters), the UI's current-details line, and the Postgres flows table (GET
 * /v1/flows). Tags the flow for the UI's filters (type, masked CPF, amount, merchant) at once.
 */
export function trackFlow<Status extends string, State extends TrackedState<Status>>(
  f: FlowTracking<Status, State>,
) {
  tagForFilters(f.record);
  let seq = f.rowsBefore ?? 0;
  const rowOf = (status: Status, reason?: string, details?: Record<string, unknown>): FlowRecord => {
    seq += 1;
    return { ...f.record, workflowId: workflowInfo().workflowId, status, seq, reason, details };
  };
  /** The status in the state, the search attribute and the UI's details: everywhere but Postgres. */
  const showStatus = (status: Status, reason?: string) => {
    f.state.status = status;
    if (f.keepReason) f.keepReason(reason);
    else Object.assign(f.state, { reason });
    f.state.updatedAt = isoNow();
    if (f.finalStatuses.includes(status)) f.state.finishedAt = f.state.updatedAt;
    upsertSearchAttributes([{ key: FlowStatusKey, value: status }]);
    setCurrentDetails(`**${escapeMarkdown(status)}**${reason ? ` — ${escapeMarkdown(reason)}` : ''}`);
  };

  const moveTo = async (status: Status, reason?: string) => {
    showStatus(status, reason);
    await recordFlow(rowOf(status, reason, f.details()));
  };

  const recorded = async (status: Status, row: FlowRecord) => {
    if (row.seq !== seq + 1) return moveTo(status);
    seq = row.seq;
    showStatus(status);
  };

  /** Lets running handlers answer, then hands back the final state. */
  const settle = async (): Promise<State> => {
    await condition(allHandlersFinished);
    return f.state;
  };

  return {
    isFinal: () => f.finalStatuses.includes(f.state.status),
    moveTo,
    settle,
    /** Moves to a final status, then settles. */
    async finish(status: Status, reason?: string): Promise<State> {
      await moveTo(status, reason);
      return settle();
    },
    /**
     * The flows row of the next status change, for an activity that writes it along with its own
     * work, so the change costs no activity of its own (the deposit's QR, the payout).
     */
    nextRow: (status: Status) => rowOf(status),
    /** A status change whose flows row an activity writes (nextRow): shown everywhere else. */
    showStatus: (status: Status) => showStatus(status),
    /**
     * The row the next status change would write, for an activity that may write it (it is
     * counted only once `finishRecorded` says the activity did).
     */
    rowAfter: (status: Status): FlowRecord => ({
      ...f.record,
      workflowId: workflowInfo().workflowId,
      status,
      seq: seq + 1,
      details: f.details(),
    }),
    /**
     * A status change whose row (rowAfter) an activity wrote: counted, and shown everywhere else.
     * Had another row taken its seq while the activity ran (a payout's deadline mark), one of the
     * two lost to the other in Postgres, so the change is written again after both.
     */
    recorded,
    /** The flow's last status, whose row (rowAfter) an activity wrote (see recorded), then settles. */
    async finishRecorded(status: Status, row: FlowRecord): Promise<State> {
      await recorded(status, row);
      return settle();
    },
    /** How many flows rows this run and the runs before it wrote: where a continued run starts. */
    rowsWritten: () => seq,
  };
}

/** The record of a deposit or a withdrawal: the person who pays or is paid, and the amount. */
export function paymentRecord(
  type: 'deposit' | 'withdrawal',
  businessId: string,
  input: { client: { cpf: string }; merchant: string; amountCentavos: number },
): RecordBase {
  return {
    type,
    businessId,
    cpf: input.client.cpf,
    merchant: input.merchant,
    amountCentavos: input.amountCentavos,
  };
}

/** The record's filter tags the starter did not set already (the API sets them all). */
function tagForFilters(record: RecordBase) {
  // Each upsert is a history event and a visibility write: only what is missing.
  const atStart = workflowInfo().typedSearchAttributes;
  const tags = [
    { key: FlowTypeKey, value: record.type },
    ...(record.cpf ? [{ key: CpfMaskedKey, value: maskCpf(record.cpf) }] : []),
    ...(record.amountCentavos !== undefined ? [{ key: AmountKey, value: record.amountCentavos }] : []),
    ...(record.merchant ? [{ key: MerchantKey, value: record.merchant }] : []),
  ].filter((t) => atStart.get(t.key) !== t.value);
  if (tags.length) upsertSearchAttributes(tags);
}

/** Set by a provider notification, cleared when the flow looks. */
export interface ProviderHint {
  pending: boolean;
}

/**
 * Counts the provider's notifications into the state; an `updated` one is a hint that the outcome
 * may have changed, never the outcome itself.
 */
export function listenForProviderHints(state: { notifications: number }): ProviderHint {
  const hint: ProviderHint = { pending: false };
  setHandler(providerNotificationSignal, (n) => {
    state.notifications += 1;
    if (n.action === 'updated') hint.pending = true;
  });
  return hint;
}

/**
 * Looks for the outcome on each provider hint (from the ingress, or from reconciliation when the
 * provider's was lost) until `look` finds one or the deadline (epoch ms) passes: then undefined.
 */
export async function waitForOutcome<T>(w: {
  hint: ProviderHint;
  deadline: number;
  look: () => Promise<T | undefined>;
  /** The deadline timer's name in the Temporal UI. */
  summary: string;
}): Promise<T | undefined> {
  for (;;) {
    const left = w.deadline - Date.now();
    if (left <= 0) return undefined;
    // The summary costs each payment's TIMER_STARTED event one sealed payload; an operator
    // reading the timeline sees what the timer waits for instead of a bare duration.
    const woke = await condition(() => w.hint.pending, left, { summary: w.summary });
    // At the deadline the caller decides (a deposit looks once more): no look here too.
    if (!woke && w.deadline <= Date.now()) return undefined;
    w.hint.pending = false;
    const outcome = await w.look();
    if (outcome !== undefined) return outcome;
  }
}
