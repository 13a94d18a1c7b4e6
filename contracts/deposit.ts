import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { CustomerVerification } from './customer';
import type { DecisionProof } from './decision';
import type { DepositInput, DepositResolutionRequest } from './deposit-input';
import { brandScopedId, type PaymentProgress } from './flow';
import type { DepositLimitPeriod } from './rules';

// The deposit's contract: a Pix QR code at once, then payment proven by inquiry. What it is
// started with is checked by the schema in deposit-input.ts.

export type { DepositInput, DepositResolutionRequest };

/**
 * One deposit per txid and brand, ever: the provider refuses a txid twice. The default brand's is
 * `deposit-<txid>`, as before brands (contracts/flow.ts brandScopedId).
 */
export const depositWorkflowId = (txid: string, brand?: string) => brandScopedId(`deposit-${txid}`, brand);

/**
 * Every status a deposit can be in (GET /v1/flows checks against these). `held` waits for an
 * operator's resolution. A held deposit's money goes back through the connector that received it
 * (`return_requested`, then `returned` or `return_failed`); `to_return` is final: the money is to
 * be sent back by hand, its connector cannot return it.
 */
export const depositStatuses = [
  'creating',
  'awaiting_payment',
  'held',
  'completed',
  'expired',
  'failed',
  'to_return',
  'refused',
  'return_requested',
  'returned',
  'return_failed',
] as const;
export type DepositStatus = (typeof depositStatuses)[number];
/** `refused`: the rules refused it before anything was created at the provider (docs/rules.md). */
export const depositFinalStatuses: readonly DepositStatus[] = [
  'completed',
  'expired',
  'failed',
  'to_return',
  'refused',
  'returned',
  'return_failed',
];

/** Why a deposit is refused: the person's onboarding is not approved. */
export const NOT_VERIFIED = 'not_verified';

/**
 * Why the rules refused a deposit (its `reason`), with what the caller needs to act on it: the
 * person's verification, the registry's impediment, what is left of the person's own limits.
 * Nothing personal: it crosses to a Nexus caller in the clear.
 */
export type DepositRefusal =
  | { reason: 'not_verified'; verification: Exclude<CustomerVerification, 'approved'> }
  | { reason: 'impeded'; impeded: { reason: string; since: string; until: string | null } }
  | { reason: 'closed' }
  | {
      reason: 'deposit_limit_exceeded';
      exceeded: DepositLimitPeriod[];
      remainingCentavos: Partial<Record<DepositLimitPeriod, number>>;
    }
  /** The registry of impeded people gave no answer while the screening kept asking (fail closed). */
  | { reason: 'eligibility_unavailable' };
export type DepositRefusalReason = DepositRefusal['reason'];

/**
 * Failure type of the `qrCode` update when the rules refused the deposit: its details are the
 * DepositRefusal with the `policyVersion` it was decided under.
 */
export const DEPOSIT_REFUSED = 'DepositRefused';

/**
 * Failure type of the deposit's screening when the registry gave no answer and the rules do not
 * let a deposit through unscreened (`eligibility.failClosed`): retried for a while, its details
 * carry the policy's version for the refusal the flow records once it stops asking.
 */
export const DEPOSIT_ELIGIBILITY_UNAVAILABLE = 'EligibilityUnavailable';

/**
 * Why a paid deposit is held instead of credited (the reason of `held`, and of `to_return`):
 * someone other than the person paid it.
 */
export const THIRD_PARTY_PAYER = 'third_party_payer';
export type DepositHoldReason = typeof THIRD_PARTY_PAYER;

/** What an operator decides for a held deposit: credit it, or send the money back. */
export type DepositDecision = DepositResolutionRequest['decision'];

/** The decision as the deposit keeps it (state and flows row), with when it was taken. */
export interface DepositResolution extends DepositResolutionRequest {
  at: string;
  /** The rules policy's version an automatic return (`by: 'rules'`) was decided under. */
  policyVersion?: number;
  /** With it, the brand's overrides' version laid on it, when the brand sets rules of its own. */
  brandPolicyVersion?: number;
}

/** The `resolution` update's answer: the decision, and the status it led to. */
export interface DepositResolutionAnswer extends DepositResolutionRequest {
  txid: string;
  status: DepositStatus;
}

export interface DepositQr {
  txid: string;
  /** The Pix copy-and-paste (BR Code); the API draws the QR image from it. */
  payload: string;
  /** data:image/png;base64,... when a history carries it; else the API draws it from `payload`. */
  image?: string;
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
  payment?: {
    e2eId: string;
    payerName?: string;
    payerCpfMasked?: string;
    paidAt?: string;
    /** Whether the person paid it themselves (an empty payer CPF counts as theirs); unset when not checked. */
    payerIsClient?: boolean;
  };
  /** An operator's decision on a held deposit. */
  resolution?: DepositResolution;
  /** The version of the rules the deposit was screened under; unset in runs from before it was kept. */
  policyVersion?: number;
  /** The brand's overrides' version laid on that one, when its brand sets rules of its own. */
  brandPolicyVersion?: number;
  /** Why the rules refused it, with the details a caller acts on (`refused` only). */
  refusal?: DepositRefusal;
  /**
   * The connector that made its charge: its inquiries and returns go to it only. Unset in runs
   * from before routing, which all went to `identity-payments`.
   */
  connector?: string;
  /** The money sent back to the payer through that connector, once asked. */
  return?: DepositReturn;
  /**
   * Set when the money is to be sent back by hand (`to_return`): the deposit's connector cannot
   * return received Pix, or the worker has no connector of that name.
   */
  returnByHand?: { connector: string; why: ReturnByHandReason };
}

/** Why a return is left to an operator's hands. */
export type ReturnByHandReason = 'connector_cannot_return' | 'connector_not_configured';

/** The connector every deposit went to before deposits were routed. */
export const FIRST_CONNECTOR = 'identity-payments';

/** A held deposit's money on its way back to the payer. */
export interface DepositReturn {
  /** pixflow's id of the return, derived from the deposit: asking again is asking once. */
  returnId: string;
  amountCentavos: number;
  requestedAt: string;
  /** `returned` and `failed` are outcomes. */
  state: 'requested' | 'returned' | 'failed';
  /** Who decided it: an operator, or `rules` (the automatic return of a third party's money). */
  by: string;
  rtrId?: string;
  returnedAt?: string;
  /** Why it failed, as the connector said. */
  reason?: string;
  /** The rules policy's version an automatic return (`by: 'rules'`) was decided under. */
  policyVersion?: number;
  /** With it, the brand's overrides' version laid on it, when the brand sets rules of its own. */
  brandPolicyVersion?: number;
}

/** Who decided an automatic return: the rules, after the review delay (deposits.autoReturnAfterMs). */
export const RETURNED_BY_RULES = 'rules';

/**
 * pixflow's id of a deposit's return (API Pix `id`, `[a-zA-Z0-9]{1,35}`): the txid (digits, at
 * most 33) and `D1`, its first and only return, as connectors/api-pix's returnIdFor makes it, so
 * the same deposit always asks for the same return.
 */
export const depositReturnId = (txid: string) => `${txid}D1`;

/**
 * The short flow that returns a completed deposit's money (an impeded person's account closed),
 * scoped by the deposit's brand as its id is.
 */
export const depositReturnWorkflowId = (txid: string, brand?: string) =>
  brandScopedId(`deposit-return-${txid}`, brand);

/**
 * What returning a completed deposit's money starts with: the deposit as its row holds it (the
 * return's status changes are written on that row, after its seq, its details kept) and who asked.
 */
export interface DepositReturnInput {
  txid: string;
  amountCentavos: number;
  merchant: string;
  /** The received Pix's end-to-end id. */
  e2eId: string;
  connector: string;
  row: { seq: number; details: Record<string, unknown> };
  /** The operator who decided it: the flow asks nothing of the PSP unless the decision is proven. */
  by: string;
  /** The operator_decisions row the back office wrote for it (kind `deposit.return`). */
  decisionId?: string;
  reason?: string;
}

/** Why a second request for a txid is refused (the update's validator and the API say the same). */
export const DEPOSIT_CONFLICT =
  'txid already used for a different deposit (amount, payer or merchant differ)';

/** Failure type of the `qrCode` update when the provider did not create the QR. */
export const DEPOSIT_FAILED = 'DepositFailed';

/** Why a resolution is refused: only a held deposit, not yet decided, takes one. */
export const depositNotHeld = (status: DepositStatus, decided?: DepositDecision) =>
  decided
    ? `the deposit's hold is already decided (${decided}): it is ${status}`
    : `the deposit is ${status}: only a held deposit takes a resolution`;

export const qrCodeUpdate = defineUpdate<DepositQrAnswer, [DepositQrRequest]>('qrCode');
export const depositStateQuery = defineQuery<DepositState>('state');
/** An operator's resolution of a held deposit, with the id of the record the API or back office wrote. */
export type DepositResolutionDecision = DepositResolutionRequest & DecisionProof;
export const resolutionUpdate = defineUpdate<DepositResolutionAnswer, [DepositResolutionDecision]>(
  'resolution',
);
