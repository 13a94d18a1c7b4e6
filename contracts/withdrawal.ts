import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { DecisionProof } from './decision';
import { brandScopedId, type PaymentProgress } from './flow';
import type { StepUpCause } from './reasons';
import type { WithdrawalInput } from './withdrawal-input';

export type { WithdrawalInput };

// The withdrawal's contract: a payout sent exactly once per transactionId, its outcome
// confirmed, its receipt stored. What it is started with is checked by the schema in
// withdrawal-input.ts.

/**
 * Money moves once per transactionId and brand, ever: the id is the flow's. The default brand's is
 * `withdrawal-<transactionId>`, as before brands (contracts/flow.ts brandScopedId).
 */
export const withdrawalWorkflowId = (transactionId: string, brand?: string) =>
  brandScopedId(`withdrawal-${transactionId}`, brand);

/** What the caller asked for: the input without its test-only timings. */
export type WithdrawalRequest = Omit<WithdrawalInput, 'timings'>;

/** Every status a withdrawal can be in (GET /v1/flows checks against these). */
export const withdrawalStatuses = [
  'validating',
  'awaiting_biometrics',
  'awaiting_approval',
  'awaiting_authorization',
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

/**
 * The prize deadline: the payout is due the rules policy's `payouts.deadlineMs` after the person
 * asked for it; at `payouts.atRiskShare` of that, still not completed, it is at risk.
 */
export interface PayoutDeadline {
  dueAt: string;
  atRiskAt: string;
  /** Set once the withdrawal, still open, passed atRiskAt (`at_risk`) or dueAt (`missed`). */
  state?: 'at_risk' | 'missed';
  /** Time spent waiting for the person (the biometric step-up), apart from pixflow's and the provider's. */
  waitedForPersonMs: number;
}

/** One operator's approval of a large payout (four eyes). */
export interface PayoutApproval {
  /** The operator's e-mail address, lower-cased. */
  operator: string;
  at: string;
}

/** A large payout's wait for operators (`awaiting_approval`), once the rules and step-up passed. */
export interface PayoutApprovals {
  /** How many different operators must approve (the rules policy's `payouts.approvers`). */
  required: number;
  approvals: PayoutApproval[];
  /** The operator who refused it, and why. */
  refusedBy?: string;
  refusal?: string;
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
  /** Set once the rules have been read (every withdrawal the rules do not refuse at once). */
  deadline?: PayoutDeadline;
  /** Only for a payout above the rules policy's `payouts.approvalAboveCentavos`. */
  approval?: PayoutApprovals;
  /** The operator who asked for a manual payout (input `requestedBy`): they may not approve it. */
  requestedBy?: string;
  /** Only when the operator's backend was asked (PAYOUT_AUTHORIZATION_URL): what it answered. */
  authorization?: PayoutAuthorizationOutcome;
  /** The version of the rules the withdrawal was decided under; unset in runs from before it was kept. */
  policyVersion?: number;
  /** The brand's overrides' version laid on that one, when its brand sets rules of its own. */
  brandPolicyVersion?: number;
}

/** The operator's backend on a payout: approve, deny with its reason, or no valid answer (why). */
export interface PayoutAuthorizationOutcome {
  decision: 'approve' | 'deny' | 'no_answer';
  reason?: string;
}

/** Why a second, different request for a transactionId is refused (validator and API alike). */
export const WITHDRAWAL_CONFLICT = 'transactionId already used for a different withdrawal';

/**
 * Failure type of sendPayoutAndRecord when the provider refused the payout on create (a 4xx other than a
 * repeated transactionId): nothing was sent. The details carry the HTTP status.
 */
export const PAYOUT_REJECTED = 'PAYOUT_REJECTED';

export const withdrawalStateQuery = defineQuery<WithdrawalState>('state');

/**
 * An operator's decision on a payout awaiting approval; a refusal needs a reason. It counts only
 * with `decisionId`, the record the back office wrote (contracts/decision.ts).
 */
export interface PayoutDecision extends DecisionProof {
  /** The deciding operator's e-mail address, lower-cased. */
  operator: string;
  decision: 'approve' | 'refuse';
  reason?: string;
}

/**
 * The back office's decision on a payout in `awaiting_approval`. Its validator refuses, with one
 * of the messages below, a decision the four-eyes rule forbids; nothing changes then. Answers
 * the state once the decision is applied.
 */
export const payoutDecisionUpdate = defineUpdate<WithdrawalState, [PayoutDecision]>('decidePayout');
export const PAYOUT_NOT_AWAITING_APPROVAL = 'the payout is not awaiting approval';
export const PAYOUT_APPROVER_IS_REQUESTER = 'the operator who asked for this payout may not approve it';
export const PAYOUT_ALREADY_APPROVED_BY = 'this operator has already approved this payout';
export const PAYOUT_REFUSAL_NEEDS_REASON = 'a refusal needs a reason';
/**
 * The API's update-with-start: answers the state as the first workflow task leaves it, and
 * refuses (validator) a request for this transactionId that differs from the one that started it.
 */
export const withdrawalRequestUpdate = defineUpdate<WithdrawalState, [WithdrawalRequest]>('request');

/** Failure type of requestStepUp when the provider gives the person no biometric identification. */
export const BIOMETRICS_UNAVAILABLE = 'BIOMETRICS_UNAVAILABLE';
