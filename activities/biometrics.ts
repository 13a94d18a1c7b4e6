import { ApplicationFailure } from '@temporalio/activity';
import { NOT_BIOMETRIC_IDENTIFICATION } from '../contracts/biometrics';
import type { KycPlan } from '../contracts/flow-input';
import { type BiometricOutcome, recordBiometricLink, recordBiometricOutcome } from '../db/biometrics';
import { type LivenessRequestDeps, requestLivenessRecorded } from './liveness-requests';
import { type IssuedLivenessLink, issuedLinkOf } from './onboarding';

// The biometrics flow's activities: the provider's biometric identification link, and how the
// identification ended.

interface RunRef {
  workflowId: string;
  runId: string;
  cpf: string;
}

export function createBiometricsActivities(deps: LivenessRequestDeps) {
  const { pool, hashCpf } = deps;
  return {
    /**
     * Asks the provider's liveness endpoint for a link, which for an onboarded person is a
     * biometric identification, and records the request (the ingress signals the flow only the
     * callbacks that answer it) and the run's row. Any other link (the provider does not
     * count the person as onboarded) is a non-retryable failure, as is a refused document.
     */
    async requestBiometricLink(
      input: RunRef & { plan: KycPlan; event: string; correlationId: string; issuedAt: string },
    ): Promise<IssuedLivenessLink> {
      const res = await requestLivenessRecorded(deps, { ...input, flow: 'biometrics' });
      if (res.type !== 'biometric_identification') {
        throw ApplicationFailure.nonRetryable(
          `the provider answered a link of type ${res.type}`,
          NOT_BIOMETRIC_IDENTIFICATION,
        );
      }
      await recordBiometricLink(pool, {
        workflowId: input.workflowId,
        runId: input.runId,
        cpfHash: hashCpf(input.cpf),
        linkIssuedAt: new Date(input.issuedAt),
      });
      return issuedLinkOf(res);
    },

    /** How the identification ended, in the person's list of identifications. */
    async recordBiometricOutcome(
      input: RunRef & {
        linkIssuedAt?: string;
        outcome: BiometricOutcome;
        reason?: string;
        finishedAt: string;
      },
    ): Promise<void> {
      await recordBiometricOutcome(pool, {
        workflowId: input.workflowId,
        runId: input.runId,
        cpfHash: hashCpf(input.cpf),
        linkIssuedAt: input.linkIssuedAt ? new Date(input.linkIssuedAt) : null,
        outcome: input.outcome,
        reason: input.reason ?? null,
        finishedAt: new Date(input.finishedAt),
      });
    },
  };
}
