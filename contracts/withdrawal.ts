import { defineQuery, defineUpdate } from '@temporalio/workflow';
import { z } from 'zod';
import { pixKeyProblem } from '../provider/pix-key';
import { pixTypeSchema, withdrawClientSchema } from '../provider/schemas';
import { amountCentavosSchema, cpfSchema, type FlowTimings, type PaymentProgress } from './shared';

// The withdrawal's contract: a payout sent exactly once per transactionId, its outcome
// confirmed, its receipt stored.

/** Money moves once per transactionId, ever: the id is the flow's. */
export const withdrawalWorkflowId = (transactionId: string) => `withdrawal-${transactionId}`;

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

/** What the caller asked for: the input without its test-only timings. */
export type WithdrawalRequest = Omit<WithdrawalInput, 'timings'>;

export type WithdrawalStatus = 'validating' | 'sending' | 'processing' | 'completed' | 'failed' | 'stuck';
export const withdrawalFinalStatuses: readonly WithdrawalStatus[] = ['completed', 'failed', 'stuck'];

export interface WithdrawalState extends PaymentProgress {
  status: WithdrawalStatus;
  transactionId: string;
  amountCentavos: number;
  e2eId?: string;
  receiptStatus?: number;
  receiptStored: boolean;
  paidAt?: string;
}

/** Why a second, different request for a transactionId is refused (validator and API alike). */
export const WITHDRAWAL_CONFLICT = 'transactionId already used for a different withdrawal';

/**
 * Failure type of sendPayout when the provider refused the payout on create (a 4xx other than a
 * repeated transactionId): nothing was sent. The details carry the HTTP status.
 */
export const PAYOUT_REJECTED = 'PAYOUT_REJECTED';

export const withdrawalStateQuery = defineQuery<WithdrawalState>('state');
/**
 * The API's update-with-start: answers the state as the first workflow task leaves it, and
 * refuses (validator) a request for this transactionId that differs from the one that started it.
 */
export const withdrawalRequestUpdate = defineUpdate<WithdrawalState, [WithdrawalRequest]>('request');
