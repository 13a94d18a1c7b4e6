import { isValid as isValidCpf } from '@fnando/cpf';
import { z } from 'zod';
import { pixKeyProblem } from '../provider/pix-key';
import {
  depositClientSchema,
  pixTypeSchema,
  planSchema,
  statusVerificationSchema,
  withdrawClientSchema,
} from '../provider/schemas';
import { DEFAULT_TIMINGS } from './timings';

// What each flow is started with. The API validates requests with these schemas (so a bad
// request is a 400 naming the field, and no flow starts); workflows import only the types.

export const cpfSchema = z
  .string()
  .regex(/^\d{11}$/, 'must be 11 digits')
  .refine((v) => isValidCpf(v), 'has invalid check digits');

export const amountCentavosSchema = z
  .number()
  .int('must be whole centavos')
  .min(1, 'must be at least 1 centavo')
  .max(100_000_000_00, 'must be at most R$ 100.000.000,00');

/** Durations the flows wait, in ms; short values in tests, the defaults in production */
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
export type FlowTimingsInput = z.input<typeof flowTimingsSchema>;

export const onboardingInputSchema = z.object({
  cpf: cpfSchema,
  plan: planSchema,
  event: z.string().min(1).max(100),
  redirectUrl: z
    .string()
    .max(500)
    .regex(/^\/(?!\/)[^\s]*$/, 'must be a path starting with a single "/"')
    .optional(),
  userRef: z.string().min(1).max(200).optional(),
});
export type OnboardingInput = z.infer<typeof onboardingInputSchema> & { timings?: Partial<FlowTimings> };

export const txidSchema = z.string().regex(/^\d{1,33}$/, 'must be digits only, at most 33');

export const depositInputSchema = z.object({
  txid: txidSchema,
  merchant: z.string().min(1).max(100),
  client: depositClientSchema.extend({ cpf: cpfSchema, email: z.email() }),
  amountCentavos: amountCentavosSchema,
});
export type DepositInput = z.infer<typeof depositInputSchema> & {
  timings?: Partial<FlowTimings>;
  /** The API request that started the flow: its `qrCode` update answers `created`. */
  requestId?: string;
};

export const transactionIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._-]+$/, 'must be letters, digits, ".", "_" or "-"');

export const withdrawalInputSchema = z
  .object({
    transactionId: transactionIdSchema,
    merchant: z.string().min(1).max(100),
    client: withdrawClientSchema.extend({ cpf: cpfSchema, email: z.email() }),
    pixKey: z.string().min(1).max(200),
    pixType: pixTypeSchema,
    amountCentavos: amountCentavosSchema,
  })
  .superRefine((v, ctx) => {
    const problem = pixKeyProblem(v.pixKey, v.pixType);
    if (problem) ctx.addIssue({ code: 'custom', path: ['pixKey'], message: problem });
  });
export type WithdrawalInput = z.infer<typeof withdrawalInputSchema> & { timings?: Partial<FlowTimings> };

export const livenessProgressSchema = z.object({
  statusVerification: statusVerificationSchema,
  transactionId: z.string().optional(),
  at: z.string().optional(),
});
export type LivenessProgress = z.infer<typeof livenessProgressSchema>;

export const reviewDecisionSchema = z.object({
  decision: z.enum(['approve', 'refuse']),
  by: z.string().min(1).max(200),
  reason: z.string().min(1).max(1000),
});
export type ReviewDecision = z.infer<typeof reviewDecisionSchema>;

export const providerNotificationSchema = z.object({
  type: z.enum(['deposit', 'withdraw']),
  action: z.enum(['requested', 'updated']),
  id: z.string(),
  receivedAt: z.string().optional(),
});
export type ProviderNotification = z.infer<typeof providerNotificationSchema>;
