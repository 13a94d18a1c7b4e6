import type { Plan } from '../provider/schemas';
import type { ActivityDeps } from './deps';
import { providerCall } from './errors';
import { type KycDecision, readKyc } from './kyc';

export type { KycDecision };

export interface IssuedLivenessLink {
  url: string;
  qrcode: string;
  type: 'onboarding' | 'biometric_identification';
  transactionId: string;
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

    /** Asks the provider for a liveness link. A refused document is a non-retryable failure. */
    async requestLivenessLink(input: {
      cpf: string;
      plan: Plan;
      event: string;
      redirectUrl?: string;
      correlationId: string;
    }): Promise<IssuedLivenessLink> {
      const res = await providerCall(() =>
        provider.startLiveness(input.cpf, {
          correlationId: input.correlationId,
          plan: input.plan,
          event: input.event,
          redirectUrl: input.redirectUrl,
        }),
      );
      return {
        url: res.action.url,
        qrcode: res.action.qrcode,
        type: res.action.type,
        transactionId: res.transaction_id,
      };
    },
  };
}
