import { maskCpf } from '../common/mask';
import {
  DeceasedOrUnderAgeError,
  DocumentNotFoundError,
  InvalidDocumentError,
  RestrictedDocumentError,
} from '../connectors/errors';
import type { KycPlan } from '../contracts/flow-input';
import { type KycFacts, recordKycFacts } from '../db/customers';
import { recordKycAnswer } from '../db/kyc-records';
import type { ActivityDeps } from './deps';
import { providerCall, unclassifiedNotice } from './errors';

// The registry check (KYC) onboarding makes and a payout makes again when the last answer is old:
// one reading of the provider's answer into reason codes, and the facts kept for the rules.

export interface KycDecision {
  pass: boolean;
  /** Machine-readable reason codes when it does not pass. */
  reasons: string[];
  pep: boolean;
}

/** The KYC answers that are a business decision (the person does not pass), not an error. */
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

/** The reason codes of KYC facts: none when the holder is regular, adult and alive. */
export function kycReasonsOf(f: {
  status: string | null;
  under18: boolean | null;
  deceased: boolean | null;
}): string[] {
  // A refusal kept as facts (invalid_document, ...) is its own reason code.
  if (f.status && kycRejections.some(([, code]) => code === f.status)) return [f.status];
  const reasons: string[] = [];
  if (f.status !== 'regular') reasons.push(`kyc_status_${f.status ?? 'null'}`);
  if (f.under18) reasons.push('under_18');
  if (f.deceased) reasons.push('deceased');
  return reasons;
}

/**
 * Asks the registry about the CPF, keeps the full record in Postgres (kyc_records, by the asking
 * flow) and the facts on the customer, and answers the decision. Idempotent per flow and plan.
 */
export async function readKyc(
  {
    provider,
    pool,
    hashCpf,
    clock,
    countUnclassified,
  }: Pick<ActivityDeps, 'provider' | 'pool' | 'hashCpf' | 'clock' | 'countUnclassified'>,
  input: { workflowId: string; cpf: string; plan: KycPlan },
): Promise<KycDecision> {
  const keepFacts = (facts: KycFacts) =>
    recordKycFacts(pool, {
      cpfHash: hashCpf(input.cpf),
      cpfMasked: maskCpf(input.cpf),
      facts,
      readAt: clock(),
    });
  let record: Awaited<ReturnType<typeof provider.kyc>>;
  try {
    record = await provider.kyc(input.cpf, input.plan);
  } catch (err) {
    const rejection = kycRejections.find(([cls]) => err instanceof cls);
    if (rejection) {
      await keepFacts(refusalFacts(rejection[1]));
      return { pass: false, reasons: [rejection[1]], pep: false };
    }
    return providerCall(() => Promise.reject(err), unclassifiedNotice({ pool, countUnclassified }));
  }
  await recordKycAnswer(pool, {
    workflowId: input.workflowId,
    plan: input.plan,
    cpfHash: hashCpf(input.cpf),
    record: record.record,
  });
  const facts: KycFacts = {
    status: record.status ?? 'null',
    under18: record.under18,
    deceased: record.deceased,
    restricted: record.restricted,
    pep: record.pep,
  };
  await keepFacts(facts);
  const reasons = kycReasonsOf({ ...facts, status: record.status });
  return { pass: reasons.length === 0, reasons, pep: record.pep };
}
