import { type DepositRefusalReason, THIRD_PARTY_PAYER } from './deposit';
import { withdrawalRefusals } from './rules';

// The reason codes pixflow writes beside a status: a flow's `reason`, an onboarding's `reasons`,
// a person's suspension. Stable machine codes a backend may branch on and the back office shows
// as words (backoffice/i18n.ts has a label for each, in every language). Some are families: a
// prefix, then a part that comes from elsewhere (the registry's status, the provider's error
// code, the problem found). No zod here: the flows import these.

/** Why the rules refuse a deposit (a refused deposit's `reason`; contracts/deposit.ts's DepositRefusal). */
export const depositRefusalReasons = [
  'not_verified',
  'impeded',
  'closed',
  'deposit_limit_exceeded',
  'eligibility_unavailable',
] as const satisfies readonly DepositRefusalReason[];

/** The registry statuses (KYC `status`) the provider documents; any but `regular` rejects. */
export const kycRegistryStatuses = [
  'regular',
  'pendente_regularizacao',
  'suspenso',
  'cancelado',
  'titularfalecido',
  'consta_lista_restritiva',
] as const;

/** `kyc_status_<registry status>` (`kyc_status_null` when it has none): the registry status rejects. */
export const KYC_STATUS_PREFIX = 'kyc_status_';

/** `impeded_<reason>`: the registry of impeded people names the person (eligibility/contract.ts's reasons). */
export const IMPEDED_PREFIX = 'impeded_';

/** Why a KYC answer does not pass, besides the `kyc_status_` family. */
export const kycReasons = [
  'invalid_document',
  'restricted_document',
  'document_not_found',
  'deceased_or_under_age',
  'under_18',
  'deceased',
] as const;

/** `liveness_<provider error code, lower case>`: the provider gave no liveness link. */
export const LIVENESS_REFUSED_PREFIX = 'liveness_';

/** An onboarding's reasons besides KYC's: the liveness check's, the operator's review, the deadline. */
export const onboardingReasons = [
  'liveness_failed',
  'liveness_refused',
  'review_approved',
  'review_refused',
  'deadline_passed',
] as const;

/**
 * A deposit's: refused by the rules before anything was created, held (and to be returned) for a
 * third-party payer, expired unpaid, or failed because the provider made no QR (its error code,
 * in capitals, when it said one).
 */
export const depositReasons = [
  ...depositRefusalReasons,
  THIRD_PARTY_PAYER,
  'qr_expired_unpaid',
  'provider_unavailable',
] as const;

/** Why a withdrawal waits for a biometric identification (the reason of `awaiting_biometrics`). */
export const stepUpCauses = ['amount_above_step_up', 'first_payout_to_account'] as const;
export type StepUpCause = (typeof stepUpCauses)[number];

/**
 * A withdrawal's: refused by a money rule (or by KYC's reasons, comma-separated), waiting for
 * biometrics, failed, or stuck with no outcome. `failed` may also carry the provider's own words.
 */
export const withdrawalReasons = [
  ...withdrawalRefusals,
  ...stepUpCauses,
  'provider_reported_failure',
  'no_final_outcome_before_deadline',
] as const;

/** `invalid_pix_key: <what is wrong>`: the key failed its type's rule before anything was sent. */
export const INVALID_PIX_KEY = 'invalid_pix_key';
/** `payout_rejected: HTTP <status>`: the provider refused the payout when it was created. */
export const PAYOUT_REJECTED_REASON = 'payout_rejected';

/** A biometric identification's, when it ends `unavailable` (or the `liveness_` family). */
export const biometricsReasons = ['not_onboarded_at_provider'] as const;

/** `provider_contradicts: <liveness status>`: a person's verification suspended by a late callback. */
export const PROVIDER_CONTRADICTS = 'provider_contradicts';
