import type { LivenessSession } from '../connectors/types';
import type { KycPlan } from '../contracts/flow-input';
import { type KycDecision, readKyc } from './kyc';
import { type LivenessRequestDeps, requestLivenessRecorded } from './liveness-requests';

export type { KycDecision };

export interface IssuedLivenessLink {
  url: string;
  qrcode: string;
  type: 'onboarding' | 'biometric_identification';
  transactionId: string;
}

/** The link the provider issued, as the flows keep it. */
export function issuedLinkOf(res: LivenessSession): IssuedLivenessLink {
  return { url: res.url, qrcode: res.qrcode, type: res.type, transactionId: res.transactionId };
}

export function createOnboardingActivities(deps: LivenessRequestDeps) {
  return {
    /**
     * Asks the registry about the CPF, keeps the full record in Postgres (never in workflow
     * history) and returns only the decision. Idempotent: a retry overwrites the same row.
     */
    checkKyc: (input: { workflowId: string; cpf: string; plan: KycPlan }): Promise<KycDecision> =>
      readKyc(deps, input),

    /**
     * Asks the provider for a liveness link, recording the request (db/liveness-requests.ts) so
     * the webhook ingress signals the onboarding only the callbacks that answer it. A refused
     * document is a non-retryable failure.
     */
    async requestLivenessLink(input: {
      workflowId: string;
      cpf: string;
      plan: KycPlan;
      event: string;
      redirectUrl?: string;
      correlationId: string;
    }): Promise<IssuedLivenessLink> {
      return issuedLinkOf(await requestLivenessRecorded(deps, { ...input, flow: 'onboarding' }));
    },
  };
}
