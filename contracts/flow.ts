import { defineSignal } from '@temporalio/workflow';

// What every flow's contract is built from: the waits a flow may be given, the provider's
// notification hint, the progress of a payment and the row each state change writes.
// Workflows, activities, the API, the bench and the tests import from here and from one file
// per flow beside it. No zod here or in <flow>.ts: a workflow imports these at run time, and
// every cached workflow evaluates its imports again (the SDK keeps a module cache per workflow),
// so zod and its schemas would be held again by each open flow. The input schemas, for the
// API's boundary, are in flow-input.ts and <flow>-input.ts.

export type FlowType = 'onboarding' | 'deposit' | 'withdrawal' | 'biometrics';

/**
 * The brand a flow belongs to when it names none: every flow started before brands, and every
 * flow of a single-brand install. The same id as contracts/brand.ts's DEFAULT_BRAND_ID, which a
 * workflow cannot import (zod).
 */
export const DEFAULT_BRAND = 'default';

/**
 * A flow's workflow id, scoped by the brand it belongs to: the default brand's is the id it always
 * was (`deposit-<txid>`), so running and closed flows and every caller that knows only the
 * business id keep working; another brand's is that id after the brand and `:`
 * (`bet-rio:deposit-<txid>`). `:` is in no brand id, txid or transactionId, so the brand ends at
 * the first one: two brands' ids never meet, and neither do a brand's flows of two kinds. (The
 * brand after the kind, `deposit-bet-rio:<txid>`, would let a brand named `return-bet-rio` take
 * bet-rio's `deposit-return-bet-rio:<txid>`.)
 */
export const brandScopedId = (id: string, brand: string = DEFAULT_BRAND) =>
  brand === DEFAULT_BRAND ? id : `${brand}:${id}`;

/**
 * Where a liveness check stands, in pixflow's words (every connector maps its own to these):
 * a person's check ends passed (`completed`, `manual_approved`) or refused (`failed`,
 * `manual_refused`); `manual_approve_pending` waits for a person at the provider.
 */
export const LIVENESS_STATUSES = [
  'requested',
  'processing',
  'completed',
  'failed',
  'manual_approve_pending',
  'manual_approved',
  'manual_refused',
] as const;
export type LivenessStatus = (typeof LIVENESS_STATUSES)[number];

/** How long the flows wait, in production. Tests and configuration shorten them per flow. */
export const DEFAULT_TIMINGS = {
  livenessLinkTtlMs: 30 * 60_000,
  onboardingDeadlineMs: 7 * 24 * 3600_000,
  withdrawalDeadlineMs: 3 * 24 * 3600_000,
} as const;

/** Durations the flows wait, in ms; short values in tests, the defaults in production. */
export interface FlowTimings {
  /** Onboarding: how long a liveness link is reused (provider: 30 minutes). */
  livenessLinkTtlMs: number;
  /** Onboarding: an abandoned flow ends `expired` after this. */
  onboardingDeadlineMs: number;
  /** Withdrawal: give up waiting for a final outcome after this (then it stays for an operator). */
  withdrawalDeadlineMs: number;
}

/** The defaults with a flow's overrides on top. */
export function resolveTimings(overrides: Partial<FlowTimings> | undefined): FlowTimings {
  return { ...DEFAULT_TIMINGS, ...overrides };
}

/**
 * A provider notification about a deposit or a withdrawal, as the ingress signals it. Only a
 * hint to look: the flow proves the outcome with an inquiry.
 */
export interface ProviderNotification {
  type: 'deposit' | 'withdraw';
  action: 'requested' | 'updated';
  id: string;
  receivedAt?: string;
  /** Set when the reconciliation, not the provider, sent it: it found the flow settled. */
  source?: 'reconciliation';
}
export const providerNotificationSignal = defineSignal<[ProviderNotification]>('providerNotification');

/** What a deposit's and a withdrawal's state say of their progress besides their own facts. */
export interface PaymentProgress {
  reason?: string;
  /** Provider notifications received, and inquiries made, so far. */
  notifications: number;
  inquiries: number;
  startedAt: string;
  updatedAt: string;
  finishedAt?: string;
}

/** One state change of a flow, as its row in the Postgres `flows` table (GET /v1/flows). */
export interface FlowRecord {
  workflowId: string;
  type: FlowType;
  businessId: string;
  status: string;
  cpf?: string;
  merchant?: string;
  amountCentavos?: number;
  reason?: string;
  details?: Record<string, unknown>;
  /** Increases with every state change of the flow: a late retry of an older write is ignored. */
  seq: number;
  /** The brand the flow belongs to; absent: the default brand's (every flow from before brands). */
  brand?: string;
}
