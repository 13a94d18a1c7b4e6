import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { DecisionProof } from './decision';
import type { LivenessStatus } from './flow';
import type { OnboardingInput, ReviewDecision } from './onboarding-input';

// The onboarding's contract: KYC, then liveness, then (often) an operator's review. What it is
// started with and an operator's decision are checked by the schemas in onboarding-input.ts.

export type { OnboardingInput, ReviewDecision };

const ONBOARDING_ID_PREFIX = 'onboarding-';

/**
 * `onboarding-<keyed hash of the CPF>`, never the CPF: workflow ids are stored and shown in plain
 * text by Temporal, so a bare CPF there would defeat the payload encryption. Still a business id:
 * the same CPF always finds the same flow. The hash is common/pii.ts `cpfHash` with the
 * configured key.
 */
export const onboardingWorkflowId = (cpfHash: string) => `${ONBOARDING_ID_PREFIX}${cpfHash}`;

/** The keyed CPF hash an onboarding's workflow id holds; undefined for another flow's id. */
export const cpfHashOfOnboarding = (workflowId: string): string | undefined =>
  workflowId.startsWith(ONBOARDING_ID_PREFIX) ? workflowId.slice(ONBOARDING_ID_PREFIX.length) : undefined;

/** Every status an onboarding can be in, in the order it may pass them (GET /v1/flows checks against these). */
export const onboardingStatuses = [
  'kyc',
  'awaiting_liveness',
  'awaiting_review',
  'approved',
  'rejected',
  'expired',
] as const;
export type OnboardingStatus = (typeof onboardingStatuses)[number];
export const onboardingFinalStatuses: readonly OnboardingStatus[] = ['approved', 'rejected', 'expired'];

/**
 * A liveness callback, as the ingress signals it: with the ids of the request it answers (the
 * ingress signals only callbacks that name one of the flow's requests). A signal naming no
 * request at all never comes from the ingress: pixflow's own (tests, tools) may leave them out.
 */
export interface LivenessProgress {
  statusVerification: LivenessStatus;
  transactionId?: string;
  correlationId?: string;
  at?: string;
}

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
  /**
   * true: an earlier ask was already answered with this same link; false: no one asked for it
   * before (the first ask after the flow issued it, or a new one the provider just issued).
   */
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

/** Failure type of `livenessLink` on an onboarding that has already ended. */
export const ONBOARDING_FINISHED = 'OnboardingFinished';

export const livenessLinkUpdate = defineUpdate<LivenessLinkAnswer, []>('livenessLink');
export const livenessProgressSignal = defineSignal<[LivenessProgress]>('livenessProgress');
/** An operator's review, with the id of the record the API or back office wrote. */
export type ReviewSignal = ReviewDecision & DecisionProof;
export const reviewSignal = defineSignal<[ReviewSignal]>('review');
export const onboardingStateQuery = defineQuery<OnboardingState>('state');
