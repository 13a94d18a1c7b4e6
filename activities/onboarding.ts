import type { LivenessResponse, Plan } from '../provider/schemas';
import type { ActivityDeps } from './deps';
import { type KycDecision, readKyc } from './kyc';
import { requestRecorded } from './liveness-requests';

export type { KycDecision };

export interface IssuedLivenessLink {
  url: string;
  qrcode: string;
  type: 'onboarding' | 'biometric_identification';
  transactionId: string;
}

/** The link the provider issued, as the flows keep it. */
export function issuedLinkOf(res: LivenessResponse): IssuedLivenessLink {
  return {
    url: res.action.url,
    qrcode: res.action.qrcode,
    type: res.action.type,
    transactionId: res.transaction_id,
  };
}

export function createOnboardingActivities({
  provider,
  pool,
  hashCpf,
  clock,
}: Pick<ActivityDeps, 'provider' | 'pool' | 'hashCpf' | 'clock'>) {
  return {
    /**
     * Asks the registry about the CPF, keeps the full record in Postgres (never in workflow
     * history) and returns only the decision. Idempotent: a retry overwrites the same row.
     */
    checkKyc: (input: { workflowId: string; cpf: string; plan: Plan }): Promise<KycDecision> =>
      readKyc({ provider, pool, hashCpf, clock }, input),

    /**
     * Asks the provider for a liveness link, recording the request (db/liveness-requests.ts) so
     * the webhook ingress signals the onboarding only the callbacks that answer it. A refused
     * document is a non-retryable failure.
     */
    async requestLivenessLink(input: {
      workflowId: string;
      cpf: string;
      plan: Plan;
      event: string;
      redirectUrl?: string;
      correlationId: string;
    }): Promise<IssuedLivenessLink> {
      const res = await requestRecorded(
        { pool, clock },
        { ...input, flow: 'onboarding', cpfHash: hashCpf(input.cpf) },
        () =>
          provider.startLiveness(input.cpf, {
            correlationId: input.correlationId,
            plan: input.plan,
            event: input.event,
            redirectUrl: input.redirectUrl,
          }),
      );
      return issuedLinkOf(res);
    },
  };
}
