import { isValid as isValidCpf } from '@fnando/cpf';
import { defineSignal } from '@temporalio/workflow';
import { z } from 'zod';
import { txidSchema } from '../provider/schemas';

// What every flow's contract is built from: the person's CPF, amounts, the Pix txid, the waits
// a flow may be given, the provider's notification hint and the row each state change writes.
// Workflows, activities, the API, the bench and the tests import from here and from one file
// per flow beside it; nothing here does I/O, so the workflow bundle can import it.

export type FlowType = 'onboarding' | 'deposit' | 'withdrawal';

export const cpfSchema = z
  .string()
  .regex(/^\d{11}$/, 'must be 11 digits')
  .refine((v) => isValidCpf(v), 'has invalid check digits');

export const amountCentavosSchema = z
  .number()
  .int('must be whole centavos')
  .min(1, 'must be at least 1 centavo')
  .max(100_000_000_00, 'must be at most R$ 100.000.000,00');

/** The provider's rule for a deposit's txid (digits only, at most 33). */
export { txidSchema };

/** How long the flows wait, in production. Tests and configuration shorten them per flow. */
export const DEFAULT_TIMINGS = {
  livenessLinkTtlMs: 30 * 60_000,
  onboardingDeadlineMs: 7 * 24 * 3600_000,
  // Reconciliation is the backstop for a lost notification, not the way payments arrive: look
  // soon after creation, when most Pix are paid, then rarely (hourly; a 30-minute QR gets its
  // last look at expiry instead). Every look costs a timer, an activity and two workflow tasks
  // per open flow: with 10,000 deposits open, 5-minute polls alone were 33 inquiries a second.
  pollScheduleMs: [30_000, 120_000, 600_000, 3_600_000],
  withdrawalDeadlineMs: 3 * 24 * 3600_000,
} as const;

/** Durations the flows wait, in ms; short values in tests, the defaults in production. */
export const flowTimingsSchema = z.object({
  /** Onboarding: how long a liveness link is reused (provider: 30 minutes). */
  livenessLinkTtlMs: z.number().int().positive().default(DEFAULT_TIMINGS.livenessLinkTtlMs),
  /** Onboarding: an abandoned flow ends `expired` after this. */
  onboardingDeadlineMs: z.number().int().positive().default(DEFAULT_TIMINGS.onboardingDeadlineMs),
  /** Deposit and withdrawal: reconciliation polls the inquiry at these intervals, the last one repeating. */
  pollScheduleMs: z
    .array(z.number().int().positive())
    .min(1)
    .default([...DEFAULT_TIMINGS.pollScheduleMs]),
  /** Withdrawal: give up waiting for a final outcome after this (then it stays for an operator). */
  withdrawalDeadlineMs: z.number().int().positive().default(DEFAULT_TIMINGS.withdrawalDeadlineMs),
});
export type FlowTimings = z.infer<typeof flowTimingsSchema>;

/** The defaults with a flow's overrides on top. */
export function resolveTimings(overrides: Partial<FlowTimings> | undefined): FlowTimings {
  return { ...DEFAULT_TIMINGS, pollScheduleMs: [...DEFAULT_TIMINGS.pollScheduleMs], ...overrides };
}

/**
 * A provider notification about a deposit or a withdrawal, as the ingress signals it. Only a
 * hint to look: the flow proves the outcome with an inquiry.
 */
export const providerNotificationSchema = z.object({
  type: z.enum(['deposit', 'withdraw']),
  action: z.enum(['requested', 'updated']),
  id: z.string(),
  receivedAt: z.string().optional(),
});
export type ProviderNotification = z.infer<typeof providerNotificationSchema>;
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
}
