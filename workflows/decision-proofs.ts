import { ApplicationFailure, proxyLocalActivities } from '@temporalio/workflow';
import type { createDecisionProofActivities, StepUpClaim } from '../activities/decision-proofs';
import { DECISION_NOT_PROVEN, DECISION_REFUSED, type DecisionClaim } from '../contracts/decision';
import { POSTGRES_WRITE_OPTIONS } from './flow-lifecycle';

// An operator's decision counts only once the worker has read back the record the API or back
// office wrote for it (activities/decision-proofs.ts): one read in our own Postgres, a local
// activity inside the workflow task that received the decision.

const { verifyDecision, verifyStepUpOutcome } =
  proxyLocalActivities<ReturnType<typeof createDecisionProofActivities>>(POSTGRES_WRITE_OPTIONS);

/**
 * The patch of the auto-upgrading flows (held deposit, onboarding) whose decisions were taken
 * without a proof before: their saved histories replay without the check.
 */
export const DECISION_PROOFS_PATCH = 'decision-proofs';

/** Whether the decision is proven (a refusal is logged and counted by the check). */
export async function isProven(claim: DecisionClaim): Promise<boolean> {
  return (await verifyDecision(claim)).proven;
}

/** For an update: throws the update's failure unless the decision is proven. */
export async function requireProof(claim: DecisionClaim): Promise<void> {
  if (!(await isProven(claim))) throw ApplicationFailure.nonRetryable(DECISION_NOT_PROVEN, DECISION_REFUSED);
}

/**
 * Whether a step-up's outcome is the one the identification recorded for this person (a
 * refusal is logged and counted by the check).
 */
export async function isStepUpProven(claim: StepUpClaim): Promise<boolean> {
  return (await verifyStepUpOutcome(claim)).proven;
}
