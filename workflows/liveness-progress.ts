// Liveness callbacks can arrive out of order, and a late earlier stage must not hide a later one:
// requested, processing, pending review, then any outcome.
const LIVENESS_STAGE: Record<string, number> = { requested: 0, processing: 1, manual_approve_pending: 2 };

/** The order of a liveness status; any outcome comes after every stage before it. */
export const livenessStageOf = (s: string | undefined) => (s === undefined ? -1 : (LIVENESS_STAGE[s] ?? 3));
