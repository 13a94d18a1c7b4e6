import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { LivenessProgress, ProviderNotification, ReviewDecision, WithdrawalInput } from './inputs';

// Signals, queries and updates of the three flows, in one module the API imports too, so both
// sides agree on names and types.

export const TASK_QUEUE = 'pixflow';

/** Why a second request for a flow's business id is refused (the validators and the API say the same). */
export const conflictReasons = {
  deposit: 'txid already used for a different deposit (amount, payer or merchant differ)',
  withdrawal: 'transactionId already used for a different withdrawal',
};

/**
 * Failure type of sendPayout when the provider refused the payout on create (a 4xx other than a
 * repeated transactionId): nothing was sent. The details carry the HTTP status.
 */
export const PAYOUT_REJECTED = 'PAYOUT_REJECTED';

export const workflowIds = {
  /**
   * A keyed hash of the CPF, not the CPF: workflow ids are stored and shown in plain text by
   * Temporal, so a bare CPF there would defeat the payload encryption. Still a business id:
   * the same CPF always finds the same flow. Compute it with common/pii.ts onboardingWorkflowId.
   */
  onboarding: (cpfHash: string) => `onboarding-${cpfHash}`,
  deposit: (txid: string) => `deposit-${txid}`,
  withdrawal: (transactionId: string) => `withdrawal-${transactionId}`,
};

// ----------------------------------------------------------------------------- onboarding

export type OnboardingStatus =
  | 'kyc'
  | 'awaiting_liveness'
  | 'awaiting_review'
  | 'approved'
  | 'rejected'
  | 'expired';

export interface LivenessLink {
  url: string;
  qrcode: string;
  type: 'onboarding' | 'biometric_identification';
  /** ISO times; the link is reused until expiresAt or until the user completes the process. */
  issuedAt: string;
  expiresAt: string;
}

export interface LivenessLinkAnswer {
  link: LivenessLink;
  /** true: the current link was still valid and is returned again; false: the provider issued a new one. */
  reused: boolean;
}

export interface OnboardingState {
  status: OnboardingStatus;
  /** Machine-readable codes, e.g. kyc_status_suspenso, restricted_document, liveness_failed. */
  reasons: string[];
  flags: { pep: boolean };
  link?: LivenessLink;
  livenessStatus?: string;
  review?: ReviewDecision;
  startedAt: string;
  updatedAt: string;
  finishedAt?: string;
}

export const livenessLinkUpdate = defineUpdate<LivenessLinkAnswer, []>('livenessLink');
export const livenessProgressSignal = defineSignal<[LivenessProgress]>('livenessProgress');
export const reviewSignal = defineSignal<[ReviewDecision]>('review');
export const onboardingStateQuery = defineQuery<OnboardingState>('state');

// ----------------------------------------------------------------------------- deposit

export type DepositStatus = 'creating' | 'awaiting_payment' | 'completed' | 'expired' | 'failed';

export interface DepositQr {
  txid: string;
  payload: string;
  /** data:image/png;base64,... */
  image: string;
  expiresAt: string;
  amountCentavos: number;
}

/** What the caller asked for: a second request with the same txid must ask for the same thing. */
export interface DepositFingerprint {
  amountCentavos: number;
  payerCpf: string;
  merchant: string;
}

/** The `qrCode` update's argument: the fingerprint, and the id of the asking request. */
export interface DepositQrRequest extends DepositFingerprint {
  requestId?: string;
}

/** The QR, and whether the asking request is the one that started the flow (201, else 200). */
export interface DepositQrAnswer {
  qr: DepositQr;
  created: boolean;
}

export interface DepositState {
  status: DepositStatus;
  txid: string;
  amountCentavos: number;
  qr?: DepositQr;
  payment?: { e2eId: string; payerName?: string; payerCpfMasked?: string; paidAt?: string };
  reason?: string;
  notifications: number;
  inquiries: number;
  startedAt: string;
  updatedAt: string;
  finishedAt?: string;
}

export const qrCodeUpdate = defineUpdate<DepositQrAnswer, [DepositQrRequest]>('qrCode');
export const providerNotificationSignal = defineSignal<[ProviderNotification]>('providerNotification');
export const depositStateQuery = defineQuery<DepositState>('state');

// ----------------------------------------------------------------------------- withdrawal

export type WithdrawalStatus = 'validating' | 'sending' | 'processing' | 'completed' | 'failed' | 'stuck';

export interface WithdrawalState {
  status: WithdrawalStatus;
  transactionId: string;
  amountCentavos: number;
  e2eId?: string;
  receiptStatus?: number;
  receiptStored: boolean;
  paidAt?: string;
  reason?: string;
  notifications: number;
  inquiries: number;
  startedAt: string;
  updatedAt: string;
  finishedAt?: string;
}

/** What the caller asked for: the input without its test-only timings. */
export type WithdrawalRequest = Omit<WithdrawalInput, 'timings'>;

export const withdrawalStateQuery = defineQuery<WithdrawalState>('state');
/**
 * The API's update-with-start: answers the state as the first workflow task leaves it, and
 * refuses (validator) a request for this transactionId that differs from the one that started it.
 */
export const withdrawalRequestUpdate = defineUpdate<WithdrawalState, [WithdrawalRequest]>('request');
