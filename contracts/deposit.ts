import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { DepositInput } from './deposit-input';
import type { PaymentProgress } from './shared';

// The deposit's contract: a Pix QR code at once, then payment proven by inquiry. What it is
// started with is checked by the schema in deposit-input.ts.

export type { DepositInput };

/** One deposit per txid, ever: the provider refuses a txid twice. */
export const depositWorkflowId = (txid: string) => `deposit-${txid}`;

/** Every status a deposit can be in (GET /v1/flows checks against these). */
export const depositStatuses = ['creating', 'awaiting_payment', 'completed', 'expired', 'failed'] as const;
export type DepositStatus = (typeof depositStatuses)[number];
export const depositFinalStatuses: readonly DepositStatus[] = ['completed', 'expired', 'failed'];

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

export interface DepositState extends PaymentProgress {
  status: DepositStatus;
  txid: string;
  amountCentavos: number;
  qr?: DepositQr;
  payment?: { e2eId: string; payerName?: string; payerCpfMasked?: string; paidAt?: string };
}

/** Why a second request for a txid is refused (the update's validator and the API say the same). */
export const DEPOSIT_CONFLICT =
  'txid already used for a different deposit (amount, payer or merchant differ)';

/** Failure type of the `qrCode` update when the provider did not create the QR. */
export const DEPOSIT_FAILED = 'DepositFailed';

export const qrCodeUpdate = defineUpdate<DepositQrAnswer, [DepositQrRequest]>('qrCode');
export const depositStateQuery = defineQuery<DepositState>('state');
