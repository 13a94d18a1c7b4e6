import { cpfHashOfOnboarding, type LivenessProgress } from '../contracts/onboarding';
import { suspendVerification, verificationOfHash } from '../db/customers';
import type { Pool } from '../db/pool';

// A liveness outcome for an onboarding that has already closed the other way (the provider
// refused after pixflow approved, or approved after it rejected) cannot reach the flow; the two
// would disagree for ever. It suspends the person's verification instead, with the evidence,
// until an operator decides.

/** Liveness outcomes that contradict a closed onboarding's verification. */
const CONTRADICTS: Record<string, readonly string[]> = {
  approved: ['failed', 'manual_refused'],
  rejected: ['completed', 'manual_approved'],
};

/** A liveness outcome that came for an onboarding whose flow has closed. */
export interface OutcomeAfterClose {
  /** The closed onboarding's workflow id. */
  onboarding: string;
  progress: LivenessProgress;
  /** Where the outcome came from, kept with a suspension: read only when there is one. */
  source: () => Promise<Record<string, unknown>>;
}

/** Suspends the person's verification when the outcome contradicts it; the reason when it did. */
export async function suspendIfContradicted(
  pool: Pool,
  outcome: OutcomeAfterClose,
): Promise<string | undefined> {
  const cpfHash = cpfHashOfOnboarding(outcome.onboarding);
  if (!cpfHash) return undefined;
  const { progress } = outcome;
  const verification = await verificationOfHash(pool, cpfHash);
  if (!verification || !CONTRADICTS[verification]?.includes(progress.statusVerification)) return undefined;
  const reason = `provider_contradicts: ${progress.statusVerification}`;
  const suspended = await suspendVerification(pool, {
    cpfHash,
    expected: verification,
    reason,
    at: new Date(),
    evidence: {
      onboarding: outcome.onboarding,
      verificationBefore: verification,
      statusVerification: progress.statusVerification,
      transactionId: progress.transactionId ?? null,
      providerAt: progress.at ?? null,
      ...(await outcome.source()),
    },
  });
  return suspended ? reason : undefined;
}
