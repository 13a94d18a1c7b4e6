import {
  proxyLocalActivities,
  setCurrentDetails,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { FlowRecord } from '../activities/flows';
import { maskCpf } from '../common/mask';
import {
  AmountKey,
  CpfMaskedKey,
  FlowStatusKey,
  FlowTypeKey,
  MerchantKey,
} from '../common/search-attributes';

// A local activity: one idempotent upsert in our own Postgres, run inside the workflow task that
// changed the state instead of an activity task round trip through the server (a withdrawal
// records three changes; bench/README.md measures the difference). The seq guard keeps a re-run
// after a retried workflow task harmless.
const { recordFlow } = proxyLocalActivities<{ recordFlow(r: FlowRecord): Promise<void> }>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '500ms', maximumInterval: '10s' },
  summary: 'Record the state change in the flows table',
});

type Base = Omit<FlowRecord, 'workflowId' | 'status' | 'seq' | 'reason' | 'details'>;

/**
 * Tags the flow for the Temporal UI's filters (type, masked CPF, amount, merchant) at once, then
 * records every state change in three places: the PixflowStatus search attribute (Temporal
 * UI filters), the UI's current-details line, and the Postgres flows table (GET /v1/flows).
 */
export function flowRecorder(base: Base) {
  // Only what the starter did not set already (the API sets them all): an upsert is a history
  // event and a visibility write.
  const atStart = workflowInfo().typedSearchAttributes;
  const tags = [
    { key: FlowTypeKey, value: base.type },
    ...(base.cpf ? [{ key: CpfMaskedKey, value: maskCpf(base.cpf) }] : []),
    ...(base.amountCentavos !== undefined ? [{ key: AmountKey, value: base.amountCentavos }] : []),
    ...(base.merchant ? [{ key: MerchantKey, value: base.merchant }] : []),
  ].filter((t) => atStart.get(t.key) !== t.value);
  if (tags.length) upsertSearchAttributes(tags);
  let seq = 0;
  type Extra = { reason?: string; details?: Record<string, unknown>; summary?: string };
  /** The state change where the Temporal UI shows it: the status attribute and the details line. */
  const show = (status: string, extra: Extra = {}) => {
    upsertSearchAttributes([{ key: FlowStatusKey, value: status }]);
    setCurrentDetails(extra.summary ?? `**${status}**${extra.reason ? ` — ${extra.reason}` : ''}`);
  };
  /** The flows-table row of the next state change. */
  const row = (status: string, extra: Extra = {}): FlowRecord => {
    seq += 1;
    return {
      ...base,
      workflowId: workflowInfo().workflowId,
      status,
      seq,
      reason: extra.reason,
      details: extra.details,
    };
  };
  const record = async (status: string, extra: Extra = {}) => {
    show(status, extra);
    await recordFlow(row(status, extra));
  };
  // `row` and `show` apart: for an activity that writes the row along with its own work, so the
  // state change costs no activity of its own (see the deposit's QR).
  return Object.assign(record, { row, show });
}

export function isoNow(): string {
  return new Date().toISOString();
}
