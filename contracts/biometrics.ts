import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { BiometricsInput } from './biometrics-input';
import type { LivenessStatus } from './flow';
import type { LivenessLink, LivenessLinkAnswer } from './onboarding';

// A biometric identification of an approved person: one provider liveness link of type
// `biometric_identification`, then its outcome from the provider's callbacks. What it is started
// with is checked by the schema in biometrics-input.ts.

export type { BiometricsInput, LivenessLinkAnswer };

const BIOMETRICS_ID_PREFIX = 'biometrics-';

/**
 * `biometrics-<keyed hash of the CPF>` (never the CPF, as the onboarding's id). One open at a
 * time per person; a closed one is followed by a new run under the same id.
 */
export const biometricsWorkflowId = (cpfHash: string) => `${BIOMETRICS_ID_PREFIX}${cpfHash}`;

/** Whether a workflow id is a biometric identification's. */
export const isBiometricsWorkflowId = (workflowId: string) => workflowId.startsWith(BIOMETRICS_ID_PREFIX);

/** Every status a biometric identification can be in, in order. */
export const biometricsStatuses = [
  'issuing_link',
  'awaiting_identification',
  'passed',
  'failed',
  'expired',
  'unavailable',
] as const;
export type BiometricsStatus = (typeof biometricsStatuses)[number];
/**
 * passed / failed: the provider's outcome; expired: no outcome within the link's lifetime;
 * unavailable: the provider gave no biometric identification link (for example it does not
 * count the person as onboarded, or refuses the document).
 */
export const biometricsFinalStatuses: readonly BiometricsStatus[] = [
  'passed',
  'failed',
  'expired',
  'unavailable',
];

/** A liveness callback of a biometric identification, as the ingress signals it. */
export interface BiometricProgress {
  statusVerification: LivenessStatus;
  statusOnboarding: string;
  actionType: 'onboarding' | 'biometric_identification';
  transactionId: string;
  correlationId: string;
  at?: string;
}

export interface BiometricsState {
  status: BiometricsStatus;
  reason?: string;
  link?: LivenessLink;
  /** The provider's last liveness status for this link. */
  livenessStatus?: string;
  startedAt: string;
  updatedAt: string;
  finishedAt?: string;
}

/** Failure type of the link request when the provider answers a link of another type. */
export const NOT_BIOMETRIC_IDENTIFICATION = 'NotBiometricIdentification';

/** Failure type of `biometricLink` on an identification that has already ended. */
export const BIOMETRICS_FINISHED = 'BiometricsFinished';

export const biometricLinkUpdate = defineUpdate<LivenessLinkAnswer, []>('biometricLink');

/** A withdrawal's step-up: it waits for the outcome of an identification started after it was asked. */
export interface StepUpAsk {
  /** The withdrawal's workflow id: it is signalled the outcome. */
  waiter: string;
  /** When the withdrawal was asked: a link issued before this does not count for it. */
  askedAt: string;
}
/** Answers a link issued no earlier than `askedAt` (a new one if the open link is older). */
export const biometricStepUpUpdate = defineUpdate<LivenessLinkAnswer, [StepUpAsk]>('biometricStepUp');

/** How an identification ended, as its waiting withdrawals are told. */
export interface BiometricsOutcome {
  outcome: 'passed' | 'failed' | 'expired' | 'unavailable';
  runId: string;
}
export const biometricsOutcomeSignal = defineSignal<[BiometricsOutcome]>('biometricsOutcome');
export const biometricProgressSignal = defineSignal<[BiometricProgress]>('biometricProgress');
export const biometricsStateQuery = defineQuery<BiometricsState>('state');
