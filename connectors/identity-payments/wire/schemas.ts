import { z } from 'zod';
import { LIVENESS_STATUSES } from '../../../contracts/flow';
import { PIX_TYPES } from '../../../contracts/pix-key';

// The provider contract (shared/provider-api.md) as zod schemas. Request schemas are what we send
// (and what the sandbox enforces). Response schemas parse liberally: unknown extra fields pass
// (z.looseObject), a field the document says "may be empty" may be "", null or absent, and a
// number may come as its decimal text, because the document leaves these open
// (open-points.ts). What the words and codes mean is the transformers' business (transformers.ts).

export const planSchema = z.enum(['plan_basic', 'plan_standard', 'plan_plus', 'plan_premium', 'plan_full']);
export type Plan = z.infer<typeof planSchema>;
/** Plans from the smallest field set to the largest (field sets are cumulative in this order). */
export const plansInOrder = planSchema.options;

// The document's seven words, which pixflow took as its own liveness statuses.
const statusVerificationSchema = z.enum(LIVENESS_STATUSES);
export type StatusVerification = z.infer<typeof statusVerificationSchema>;

export const pixTypeSchema = z.enum(PIX_TYPES);
export type PixType = z.infer<typeof pixTypeSchema>;

const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD');

/** A field that "may be empty": text, "", null or absent. */
const emptyable = z.string().nullish();
/** An amount: a JSON number, or its decimal text ("10.50"). */
const amount = z.union([z.number(), z.string().regex(/^\d+(\.\d+)?$/, 'must be a decimal amount')]);

// ---------------------------------------------------------------- token

export const tokenRequestSchema = z.object({
  client_id: z.string().min(1),
  client_secret: z.string().min(1),
  grant_type: z.literal('client_credentials'),
});

/** The table says integer; a provider may send its digits as text ("3600"): both are read as a number. */
export const tokenResponseSchema = z.looseObject({
  access_token: z.string().min(1),
  expires_in: z.union([
    z.number().int().positive(),
    z
      .string()
      .regex(/^\d+$/, 'must be a whole number of seconds')
      .transform(Number)
      .pipe(z.number().int().positive()),
  ]),
  token_type: z.string(),
});

// ---------------------------------------------------------------- KYC

export const kycRequestSchema = z.object({ plan: planSchema });

const addressSchema = z.looseObject({
  street: z.string(),
  number: z.string(),
  neighborhood: z.string(),
  city: z.string(),
  state: z.string(),
  zip_code: z.string().regex(/^\d*$/, 'zip_code is digits only'),
  country: z.string(),
  complement: z.string(),
});

const employmentSchema = z.looseObject({
  employer_name: z.string(),
  position: z.string(),
  salary: z.number(),
  start_date: isoDate,
});

const bankAccountSchema = z.looseObject({
  bank: z.string(),
  account_type: z.string(),
  account_number: z.string(),
  branch_number: z.string(),
  dict: z.string(),
});

const financialInfoSchema = z.looseObject({
  bank_accounts: z.array(bankAccountSchema),
  credit_score: z.number().int(),
});

const contactInfoSchema = z.union([
  z.looseObject({ phone: z.string() }),
  z.looseObject({ email: z.string() }),
]);

const familyMemberSchema = z.looseObject({
  relationship: z.string(),
  name: z.string(),
  document: z.string(),
});

const documentsSchema = z.looseObject({ rg: z.string(), passport: z.string() });

const customRiskAnalysisSchema = z.looseObject({
  score: z.number().int(),
  level: z.string(),
  last_updated: z.string(),
});

const customInfoComplianceSchema = z.looseObject({ type: z.string(), description: z.string() });

const basicFields = {
  cpf: z.string(),
  name: z.string(),
  is_under_18: z.boolean(),
  status: z.string().nullable(),
  status_code: z.number().int(),
  date_death: z.string().nullable(),
  is_pep: z.boolean(),
};
const standardFields = {
  ...basicFields,
  birth_date: isoDate,
  age: z.number().int(),
  internal_status: z.string().nullable(),
  internal_status_code: z.number().int().nullable(),
};
const plusFields = {
  ...standardFields,
  mother_name: z.string(),
  father_name: z.string(),
  address: addressSchema,
};
const premiumFields = {
  ...plusFields,
  employment: employmentSchema,
  financial_info: financialInfoSchema,
};
const fullFields = {
  ...premiumFields,
  contacts_info: z.array(contactInfoSchema),
  family_members: z.array(familyMemberSchema),
  documents: documentsSchema,
  custom_risk_analysis: customRiskAnalysisSchema,
  custom_info_compliance: z.array(customInfoComplianceSchema),
};

/** One response schema per plan; field sets are cumulative (basic < standard < plus < premium < full). */
export const kycRecordSchemas = {
  plan_basic: z.looseObject(basicFields),
  plan_standard: z.looseObject(standardFields),
  plan_plus: z.looseObject(plusFields),
  plan_premium: z.looseObject(premiumFields),
  plan_full: z.looseObject(fullFields),
} as const;

export type KycRecordFor<P extends Plan> = z.infer<(typeof kycRecordSchemas)[P]>;

/** The exact top-level field names a plan returns. */
export function kycPlanFields(plan: Plan): string[] {
  return Object.keys(kycRecordSchemas[plan].shape);
}

/**
 * What pixflow reads of a KYC answer, whatever the plan: the fields its rules decide on, each in
 * any form the document leaves open (status in any case or null, flags as booleans or their text).
 */
export const kycAnswerSchema = z.looseObject({
  status: z.string().nullish(),
  is_under_18: z.union([z.boolean(), z.string()]).nullish(),
  date_death: z.string().nullish(),
  is_pep: z.union([z.boolean(), z.string()]).nullish(),
});
export type KycAnswer = z.infer<typeof kycAnswerSchema>;

// ---------------------------------------------------------------- liveness

export const livenessRequestSchema = z.object({
  correlation_id: z.string().min(1),
  plan: planSchema,
  event: z.string().min(1),
  redirectUrl: z.string().startsWith('/', 'redirectUrl must be a path starting with /').optional(),
});
export type LivenessRequest = z.infer<typeof livenessRequestSchema>;

const actionTypeSchema = z.enum(['onboarding', 'biometric_identification']);
export type ActionType = z.infer<typeof actionTypeSchema>;

/** The registry data a liveness response carries: plan_basic's fields and more. */
const livenessKycSchema = z.looseObject({
  ...basicFields,
  response_at: z.string(),
  response_token_validation: z.string(),
  mother_name: z.string(),
  birth_date: z.string(),
  age: z.number().int(),
  internal_status: z.string().nullable(),
  internal_status_code: z.number().int().nullable(),
  gender: z.string(),
  address: z.looseObject({
    street: z.string(),
    number: z.string(),
    complement: z.string(),
    neighborhood: z.string(),
    city: z.string(),
    state: z.string(),
    zip_code: z.string(),
    country: z.string(),
  }),
});

export const livenessResponseSchema = z.looseObject({
  correlation_id: z.string(),
  transaction_id: z.string(),
  status_onboarding: z.string().nullish(),
  // Any word: the transformer reads it through its table, and says so when it cannot.
  status_verification: z.string(),
  event: z.string().nullish(),
  action: z.looseObject({ url: z.string(), qrcode: z.string().nullish(), type: actionTypeSchema }),
  url_callback: z.looseObject({
    sent: z.array(z.looseObject({ url: z.string(), correlation_id: z.string() })),
  }),
  datetime: z.string(),
  kyc: livenessKycSchema,
});
export type LivenessResponse = z.infer<typeof livenessResponseSchema>;

/**
 * What pixflow reads of a liveness answer: the request's id, where the check stands and the link.
 * The rest of the record (its kyc object, which the plan may change; its callbacks) is not
 * needed, so a provider that leaves it out, or shapes it otherwise, still starts a check.
 */
export const livenessAnswerSchema = z.looseObject({
  transaction_id: z.string().min(1),
  status_verification: z.string(),
  action: z.looseObject({ url: z.string().min(1), qrcode: z.string().nullish(), type: actionTypeSchema }),
});
export type LivenessAnswer = z.infer<typeof livenessAnswerSchema>;

/**
 * Liveness callback body. The contract does not show it ("payloads: not shown"); this is the
 * sandbox's documented choice, and the shape our ingress accepts.
 */
export const livenessCallbackSchema = z.looseObject({
  transaction_id: z.string(),
  correlation_id: z.string(),
  document: z.string(),
  // Any word: an unknown one is kept as progress that decides nothing (transformers.ts).
  status_verification: z.string().min(1),
  status_onboarding: z.string().nullish(),
  action_type: actionTypeSchema,
  event: z.string(),
  datetime: z.string(),
  partner_id: z.string(),
});

// ---------------------------------------------------------------- deposits and withdrawals

const clientBase = {
  externalId: z.string().min(1),
  cpf: z.string().min(1),
  email: z.string().min(1),
  name: z.string().min(1),
  phone: z.string().optional(),
  birthday: isoDate.optional(),
};

export const depositClientSchema = z.object({
  ...clientBase,
  bankispb: z.string().optional(),
  bankbranch: z.string().optional(),
  bankaccount: z.string().optional(),
});
export type DepositClient = z.infer<typeof depositClientSchema>;

export const txidSchema = z.string().regex(/^\d{1,33}$/, 'must be digits only, at most 33 characters');

export const depositCreateRequestSchema = z.object({
  merchant: z.string().min(1),
  client: depositClientSchema,
  value: z.number().positive(),
  txid: txidSchema,
});
export type DepositCreateRequest = z.infer<typeof depositCreateRequestSchema>;

export const depositCreateResultSchema = z.looseObject({
  e2eId: emptyable,
  pixImage: emptyable,
  pixPayload: z.string().min(1),
  status: emptyable,
  value: amount,
  bank: emptyable,
  client: emptyable,
  expiry: z.string().min(1),
  merchant: emptyable,
  txid: z.string().min(1),
  responseStatus: z.union([z.number().int(), z.string()]).nullish(),
});
export type DepositCreateResult = z.infer<typeof depositCreateResultSchema>;

export const withdrawClientSchema = z.object(clientBase);
export type WithdrawClient = z.infer<typeof withdrawClientSchema>;

export const withdrawCreateRequestSchema = z.object({
  merchant: z.string().min(1),
  client: withdrawClientSchema,
  pixKey: z.string().min(1),
  pixType: pixTypeSchema.optional(),
  value: z.number().positive(),
  transactionId: z.string().min(1),
});
export type WithdrawCreateRequest = z.infer<typeof withdrawCreateRequestSchema>;

/**
 * Withdrawal creation response: "not shown" in the contract. The sandbox answers
 * {transactionId, e2eId, status: 'processing', value, pixKey, pixType, createdAt, responseStatus: 201};
 * the client requires nothing of it (every field optional), so a different real body still parses.
 */
export const withdrawCreateResultSchema = z.looseObject({
  transactionId: emptyable,
  e2eId: emptyable,
  status: emptyable,
  value: amount.nullish(),
  pixKey: emptyable,
  pixType: emptyable,
  createdAt: emptyable,
  responseStatus: z.union([z.number().int(), z.string()]).nullish(),
});
export type WithdrawCreateResult = z.infer<typeof withdrawCreateResultSchema>;

const transactionTypeSchema = z.enum(['deposit', 'withdraw']);

/** Inquiry record. Accepts both spellings payedAt / paidAt; payer fields and payedAt may be empty. */
export const inquiryRecordSchema = z.looseObject({
  txid: emptyable,
  e2eId: emptyable,
  // `deposit` or `withdraw`, in any letter case.
  type_transaction: z.string(),
  external_id_client: emptyable,
  name_client: emptyable,
  cpf_client: emptyable,
  email_client: emptyable,
  name_payer: emptyable,
  cpf_payer: emptyable,
  value: amount,
  // Any word, or none: the transformer reads it through connectors/status-words.ts.
  status: emptyable,
  createdAt: emptyable,
  payedAt: emptyable,
  paidAt: emptyable,
  /** sandbox extra on failed withdrawals */
  reason: emptyable,
});
export type InquiryRecord = z.infer<typeof inquiryRecordSchema>;

export const receiptRequestSchema = z.object({
  merchant: z.string().min(1),
  transactionId: z.string().min(1),
});

export const receiptStatusCodes = {
  notFound: 0,
  requested: 1,
  failed: 2,
  processing: 3,
  completed: 4,
} as const;

/** Receipt result: `status` a code 0-4 "or empty", as a number or its text; the others may be empty. */
export const receiptResultSchema = z.looseObject({
  transactionId: emptyable,
  status: z.union([z.number().int(), z.string()]).nullish(),
  invoice: emptyable,
  datetimerequest: emptyable,
  datetimepayed: emptyable,
});
export type ReceiptResult = z.infer<typeof receiptResultSchema>;

// ---------------------------------------------------------------- notifications

export const notificationMessageSchema = z.looseObject({
  id: z.string().min(1),
  type: transactionTypeSchema,
  action: z.enum(['requested', 'updated']),
  partner_id: z.string(),
});

/** Names of the provider's endpoints, used in logs, metrics and the sandbox's fault knobs. */
export const endpointNameSchema = z.enum([
  'token',
  'kyc',
  'liveness',
  'deposit',
  'withdraw',
  'inquiry',
  'receipt',
]);
export type EndpointName = z.infer<typeof endpointNameSchema>;
