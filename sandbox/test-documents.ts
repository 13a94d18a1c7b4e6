// The sandbox's designated test documents: one CPF per KYC outcome and per liveness outcome.
// The CPFs were generated once with @fnando/cpf `generate()` (valid check digits) and hard-coded here.
// Any other valid CPF behaves as `regular` in KYC and ends onboarding `manual_approve_pending`.
// An invalid CPF (wrong length or check digits) gets INVALID_DOCUMENT.

/** Every registry answer a test document (or a changed document, POST /sandbox/documents/:cpf/kyc) gives. */
export const kycOutcomes = [
  'regular',
  'pendente_regularizacao',
  'suspenso',
  'cancelado',
  'null_status',
  'titularfalecido',
  'restricted',
  'pep',
  'under_18',
  'deceased_or_under_age_error',
  'not_found',
] as const;
export type KycOutcome = (typeof kycOutcomes)[number];

/** Every way a test document's liveness ends (or a changed document's, POST /sandbox/documents/:cpf/liveness). */
export const livenessOutcomes = [
  'manual_review',
  'approved_biometrics_pass',
  'approved_biometrics_fail',
  'rejected_document',
  'rejected_proof_of_life',
] as const;
export type LivenessOutcome = (typeof livenessOutcomes)[number];

export interface TestDocument {
  cpf: string;
  kyc: KycOutcome;
  liveness: LivenessOutcome;
  description: string;
}

export const testDocuments: readonly TestDocument[] = [
  {
    cpf: '63401825771',
    kyc: 'regular',
    liveness: 'manual_review',
    description: 'KYC `regular` (status_code 0)',
  },
  {
    cpf: '31023307111',
    kyc: 'pendente_regularizacao',
    liveness: 'manual_review',
    description: 'KYC `pendente_regularizacao` (status_code 4)',
  },
  {
    cpf: '30281362874',
    kyc: 'suspenso',
    liveness: 'manual_review',
    description: 'KYC `suspenso` (status_code 2)',
  },
  {
    cpf: '73071172079',
    kyc: 'cancelado',
    liveness: 'manual_review',
    description: 'KYC `cancelado` (status_code 9)',
  },
  {
    cpf: '27735381379',
    kyc: 'null_status',
    liveness: 'manual_review',
    description: 'KYC status `null` (status_code 8, internal_status null)',
  },
  {
    cpf: '82334053376',
    kyc: 'titularfalecido',
    liveness: 'manual_review',
    description:
      'KYC `titularfalecido` (status_code 3): the record with `date_death` set; liveness answers the 400 deceased/under-age shape',
  },
  {
    cpf: '78642562609',
    kyc: 'restricted',
    liveness: 'manual_review',
    description: '`consta_lista_restritiva`: KYC and liveness answer 400 `RESTRICT_DOCUMENT`',
  },
  {
    cpf: '53868402586',
    kyc: 'pep',
    liveness: 'manual_review',
    description: 'KYC `regular` with `is_pep` true',
  },
  {
    cpf: '35656536718',
    kyc: 'under_18',
    liveness: 'manual_review',
    description:
      'KYC `regular` with `is_under_18` true (age 16); liveness answers the 400 deceased/under-age shape',
  },
  {
    cpf: '77858374060',
    kyc: 'deceased_or_under_age_error',
    liveness: 'manual_review',
    description:
      'KYC and liveness answer 400 "Deceased holder or under age" (`message` array, `Bad Request`)',
  },
  {
    cpf: '05111861181',
    kyc: 'not_found',
    liveness: 'manual_review',
    description: 'Not in the registry: KYC 400 "Document not found"; liveness 400 `INVALID_DOCUMENT`',
  },
  {
    cpf: '73628883504',
    kyc: 'regular',
    liveness: 'approved_biometrics_pass',
    description: 'Liveness: onboarding `completed`; every biometric identification `completed`',
  },
  {
    cpf: '41036021718',
    kyc: 'regular',
    liveness: 'approved_biometrics_fail',
    description: 'Liveness: onboarding `completed`; every biometric identification `failed`',
  },
  {
    cpf: '25448320376',
    kyc: 'regular',
    liveness: 'rejected_document',
    description: 'Liveness: onboarding `failed` at document validation',
  },
  {
    cpf: '17658774316',
    kyc: 'regular',
    liveness: 'rejected_proof_of_life',
    description: 'Liveness: onboarding `failed` at proof of life',
  },
];

const byCpf = new Map(testDocuments.map((d) => [d.cpf, d]));

/** The designated behaviour of a (valid) CPF; unknown CPFs are `regular` / `manual_review`. */
export function lookupTestDocument(cpf: string): TestDocument {
  return (
    byCpf.get(cpf) ?? {
      cpf,
      kyc: 'regular',
      liveness: 'manual_review',
      description: 'any other valid CPF: KYC `regular`; onboarding ends `manual_approve_pending`',
    }
  );
}

export function testDocumentFor(kyc: KycOutcome, liveness: LivenessOutcome = 'manual_review'): TestDocument {
  const doc = testDocuments.find((d) => d.kyc === kyc && d.liveness === liveness);
  if (!doc) throw new Error(`no test document for ${kyc}/${liveness}`);
  return doc;
}

/** The table as Markdown (for docs/sandbox.md). */
export function testDocumentsMarkdown(): string {
  const rows = testDocuments.map((d) => `| \`${d.cpf}\` | ${d.kyc} | ${d.liveness} | ${d.description} |`);
  return [
    '| CPF | KYC outcome | Liveness outcome | Behaviour |',
    '|---|---|---|---|',
    ...rows,
    '| any other valid CPF | regular | manual_review | KYC `regular`; onboarding ends `manual_approve_pending` |',
    '| invalid CPF | - | - | KYC 400 `INVALID_DOCUMENT` (`error`); liveness 400 `INVALID_DOCUMENT` (`code`) |',
  ].join('\n');
}
