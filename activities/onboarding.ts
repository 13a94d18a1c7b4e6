import { maskCpf } from '../common/mask';
import { type KycFacts, recordKycFacts } from '../db/customers';
import {
  DeceasedOrUnderAgeError,
  DocumentNotFoundError,
  InvalidDocumentError,
  RestrictedDocumentError,
} from '../provider/errors';
import type { Plan } from '../provider/schemas';
import type { ActivityDeps } from './deps';
import { providerCall } from './errors';

export interface KycDecision {
  pass: boolean;
  /** Machine-readable reason codes when it does not pass. */
  reasons: string[];
  pep: boolean;
}

export interface IssuedLivenessLink {
  url: string;
  qrcode: string;
  type: 'onboarding' | 'biometric_identification';
  transactionId: string;
}

/** The KYC answers that end onboarding as a business decision, not an error. */
const kycRejections: Array<[new (...a: never[]) => Error, string]> = [
  [InvalidDocumentError, 'invalid_document'],
  [RestrictedDocumentError, 'restricted_document'],
  [DocumentNotFoundError, 'document_not_found'],
  [DeceasedOrUnderAgeError, 'deceased_or_under_age'],
];

/** What a refusal (a 400 instead of a record) says of the person, as far as it says anything. */
const refusalFacts = (reason: string): KycFacts => ({
  status: reason,
  under18: null,
  deceased: null,
  restricted: reason === 'restricted_document' ? true : null,
  pep: null,
});

export function createOnboardingActivities({
  provider,
  pool,
  hashCpf,
  clock,
}: Pick<ActivityDeps, 'provider' | 'pool' | 'hashCpf' | 'clock'>) {
  // The person's KYC facts, for the customer read model and the money rules.
  const keepFacts = (cpf: string, facts: KycFacts) =>
    recordKycFacts(pool, { cpfHash: hashCpf(cpf), cpfMasked: maskCpf(cpf), facts, readAt: clock() });
  return {
    /**
     * Asks the registry about the CPF, keeps the full record in Postgres (never in workflow
     * history) and returns only the decision. Idempotent: a retry overwrites the same row.
     */
    async checkKyc(input: { workflowId: string; cpf: string; plan: Plan }): Promise<KycDecision> {
      let record: Awaited<ReturnType<typeof provider.kyc>>;
      try {
        record = await provider.kyc(input.cpf, input.plan);
      } catch (err) {
        const rejection = kycRejections.find(([cls]) => err instanceof cls);
        if (rejection) {
          await keepFacts(input.cpf, refusalFacts(rejection[1]));
          return { pass: false, reasons: [rejection[1]], pep: false };
        }
        return providerCall(() => Promise.reject(err));
      }
      await pool.query(
        `INSERT INTO kyc_records (workflow_id, plan, cpf_hash, record) VALUES ($1, $2, $3, $4)
         ON CONFLICT (workflow_id, plan) DO UPDATE SET record = EXCLUDED.record, received_at = now()`,
        [input.workflowId, input.plan, hashCpf(input.cpf), JSON.stringify(record)],
      );
      await keepFacts(input.cpf, {
        status: record.status ?? 'null',
        under18: record.is_under_18,
        deceased: Boolean(record.date_death),
        restricted: record.status === 'consta_lista_restritiva',
        pep: record.is_pep === true,
      });
      const reasons: string[] = [];
      if (record.status !== 'regular') reasons.push(`kyc_status_${record.status ?? 'null'}`);
      if (record.is_under_18) reasons.push('under_18');
      if (record.date_death) reasons.push('deceased');
      return { pass: reasons.length === 0, reasons, pep: record.is_pep === true };
    },

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
