import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { PaymentProgress } from './flow';
import type { StepUpCause } from './reasons';
import type { WithdrawalInput } from './withdrawal-input';

export type { WithdrawalInput };

// The withdrawal's contract: a payout sent exactly once per transactionId, its outcome
// confirmed, its receipt stored. What it is started with is checked by the schema in
// withdrawal-input.ts.

/** Money moves once per transactionId, ever: the id is the flow's. */
export const withdrawalWorkflowId = (transactionId: string) => `withdrawal-${transactionId}`;

/** What the caller asked for: the input without its test-only timings. */
export type WithdrawalRequest = Omit<WithdrawalInput, 'timings'>;

/** Every status a withdrawal can be in (GET /v1/flows checks against these). */
export const withdrawalStatuses = [
  'validating',
  'awaiting_biometrics',
  'sending',
  'processing',
  'completed',
  'failed',
  'stuck',
  'refused',
] as const;
export type WithdrawalStatus = (typeof withdrawalStatuses)[number];
/** `refused`: a money rule refused it before anything was sent (docs/rules.md; reason codes in rules.ts). */
export const withdrawalFinalStatuses: readonly WithdrawalStatus[] = [
  'completed',
  'failed',
  'stuck',
  'refused',
];

/** Why a withdrawal waits for a biometric identification before it is sent. */
export type { StepUpCause } from './reasons';

/** The biometric identification a withdrawal waits for: the person's link, without its QR image. */
interface StepUp {
  cause: StepUpCause;
  /** The person's biometrics flow; its link's QR image is served by the API. */
  biometricsWorkflowId: string;
  url?: string;
  issuedAt?: string;
  expiresAt?: string;
  /** passed, failed, expired or unavailable, once known. */
  outcome?: string;
}

export interface WithdrawalState extends PaymentProgress {
  status: WithdrawalStatus;
  transactionId: string;
  amountCentavos: number;
  e2eId?: string;
  receiptStatus?: number;
  receiptStored: boolean;
  paidAt?: string;
  stepUp?: StepUp;
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

/** Failure type of requestStepUp when the provider gives the person no biometric identification. */
export const BIOMETRICS_UNAVAILABLE = 'BIOMETRICS_UNAVAILABLE';
