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
 * tries hands over to the activity through the server (isLocalActivityFailure), whose long
 * retries add nothing to history.
 */
export const LOCAL_LOOK_OPTIONS = {
  startToCloseTimeout: '10s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumAttempts: 3 },
} as const;

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

/** A flow's row of one of its statuses. */
export type RowOf<Status extends string> = FlowRecord & { status: Status };

interface TrackedState<Status extends string> {
  status: Status;
  updatedAt: string;
  finishedAt?: string;
}

/**
 * A flow's status changes, each shown in up to three places: the PixflowStatus search attribute
 * (Temporal UI filters; see `statusesInSearch`), the UI's current-details line, and the flow's row
 * in the Postgres `flows` table (GET /v1/flows, the back office, the events outbox). Tags the flow for the UI's
 * filters (type, masked CPF, amount, merchant) at once. Each flow extends it with what its row
 * says of its state (`details`).
 *
 * The row protocol, the one place it is written down:
 * - One row per workflow id, upserted. Every write carries a sequence number (`seq`), and the
 *   upsert keeps the row with the highest (db/flows.ts): a late retry of an older write, or a
 *   write that lost a race, never moves the row back. seq only orders writes: it may skip.
 * - Every row the flow names takes the next seq at once: the rows it writes itself (`moveTo`, a
 *   local activity, `recordFlow`) and the rows it hands to an activity (`nextRow`), which writes
 *   one along with its own work so the change costs no activity of its own. Such an activity says
 *   so in its name (`…AndRecord…`); one that may not write it (a look that finds no outcome)
 *   leaves its seq unused.
 * - A row an activity wrote counts once the flow is told (`wrote`): shown everywhere else. If a
 *   later row was named meanwhile (a payout's deadline mark, written while the activity ran), one
 *   of the two may have lost in Postgres, so the change is written again, after both.
 * - A run continued as new (a held deposit) goes on from the seq its first run reached
 *   (`lastSeq`); a new run of the same id (an onboarding started again) counts from 1, and the
 *   upsert lets it replace the closed run's row.
 */
export abstract class FlowTracker<Status extends string, State extends TrackedState<Status>> {
  private seq: number;
  /** Whether status changes go to the PixflowStatus search attribute from now on. */
  private statusInSearch: boolean;

  /**
   * `seqBefore`: the seq the run this one continues reached; its rows come after.
   * `statusesInSearch`: which statuses the PixflowStatus search attribute shows, `every` one or
   * only those listed and every status after the first of them, so that once set it never goes
   * stale. Each upsert is a billed Temporal action and a visibility write, while the flows row
   * already shows every status: a flow lists the ones an operator filters for in the Temporal UI.
   * A status the starter set (an API of an earlier release) is kept current all the same.
   */
  constructor(
    private readonly record: RecordBase,
    readonly state: State,
    private readonly finalStatuses: readonly Status[],
    seqBefore = 0,
    private readonly statusesInSearch: readonly Status[] | 'every' = 'every',
  ) {
    this.seq = seqBefore;
    this.statusInSearch =
      statusesInSearch === 'every' || workflowInfo().typedSearchAttributes.get(FlowStatusKey) !== undefined;
    tagForFilters(record);
  }

  /** What the flow's row says of its state, besides its status and reason. */
  protected abstract details(): Record<string, unknown>;

  /** Keeps the reason a status change gives in the state: its `reason`, unless a flow says otherwise. */
  protected keepReason(reason: string | undefined): void {
    Object.assign(this.state, { reason });
  }

  isFinal(): boolean {
    return this.finalStatuses.includes(this.state.status);
  }

  /** The last seq named: where a run continued as new starts. */
  lastSeq(): number {
    return this.seq;
  }

  /** The row of the next status change, for an activity to write (it takes the next seq now). */
  nextRow(status: Status, reason?: string): RowOf<Status> {
    this.seq += 1;
    const { workflowId } = workflowInfo();
    return { ...this.record, workflowId, status, seq: this.seq, reason, details: this.details() };
  }

  /** Shows the status in the state, the search attribute and the UI's line: everywhere but its row. */
  show(status: Status, reason?: string): void {
    this.state.status = status;
    this.keepReason(reason);
    this.state.updatedAt = isoNow();
    if (this.isFinal()) this.state.finishedAt = this.state.updatedAt;
    this.statusInSearch ||= this.statusesInSearch !== 'every' && this.statusesInSearch.includes(status);
    if (this.statusInSearch) upsertSearchAttributes([{ key: FlowStatusKey, value: status }]);
    setCurrentDetails(`**${escapeMarkdown(status)}**${reason ? ` — ${escapeMarkdown(reason)}` : ''}`);
  }

  /** Shows the status and writes its row. */
  async moveTo(status: Status, reason?: string): Promise<void> {
    this.show(status, reason);
    await recordFlow(this.nextRow(status, reason));
  }

  /** An activity wrote `row` (nextRow): shown, and written again if a later row was named meanwhile. */
  async wrote(row: RowOf<Status>): Promise<void> {
    if (row.seq !== this.seq) return this.moveTo(row.status, row.reason);
    this.show(row.status, row.reason);
  }

  /** Lets running handlers answer, then hands back the final state. */
  async settle(): Promise<State> {
    await condition(allHandlersFinished);
    return this.state;
  }

  /** Moves to a final status, then settles. */
  async finish(status: Status, reason?: string): Promise<State> {
    await this.moveTo(status, reason);
    return this.settle();
  }
}

/**
 * The record of a deposit or a withdrawal: the person who pays or is paid, the amount, and the
 * brand it belongs to (its row's; none named: the default brand's).
 */
export function paymentRecord(
  type: 'deposit' | 'withdrawal',
  businessId: string,
  input: { client: { cpf: string }; merchant: string; amountCentavos: number; brand?: string },
): RecordBase {
  return {
    type,
    businessId,
    cpf: input.client.cpf,
    merchant: input.merchant,
    amountCentavos: input.amountCentavos,
    ...(input.brand === undefined ? {} : { brand: input.brand }),
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
 * Waits for the next provider hint (from the ingress, or from reconciliation when the provider's
 * was lost) until the deadline (epoch ms): true when the flow should look for its outcome, false
 * once the deadline has passed (the flow decides then: a deposit looks once more).
 */
export async function awaitHint(hint: ProviderHint, deadline: number, summary: string): Promise<boolean> {
  const left = deadline - Date.now();
  if (left <= 0) return false;
  // The summary costs each payment's TIMER_STARTED event one sealed payload; an operator reading
  // the timeline sees what the timer waits for instead of a bare duration.
  const woke = await condition(() => hint.pending, left, { summary });
  if (!woke && deadline <= Date.now()) return false;
  hint.pending = false;
  return true;
}
