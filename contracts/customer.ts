import type { OnboardingStatus } from './onboarding';

// The customer: one person behind the flows, keyed by the keyed hash of their CPF. A read model
// in Postgres, kept by the flows' activities (see README "Customers"); no zod here, the API's
// schemas are in customer-input.ts.

/** Verification of the person's identity; `suspended` counts as not verified. */
export const customerVerifications = [
  'none',
  'pending',
  'approved',
  'rejected',
  'expired',
  'suspended',
] as const;
export type CustomerVerification = (typeof customerVerifications)[number];

/** The verifications an onboarding's status sets. */
export type OnboardingVerification = Extract<
  CustomerVerification,
  'pending' | 'approved' | 'rejected' | 'expired'
>;

/** What an onboarding's status says of the person's verification. */
export function verificationOf(status: OnboardingStatus | string): OnboardingVerification | undefined {
  switch (status) {
    case 'kyc':
    case 'awaiting_liveness':
    case 'awaiting_review':
      return 'pending';
    case 'approved':
    case 'rejected':
    case 'expired':
      return status;
    default:
      return undefined;
  }
}

export const accountKinds = ['pix_key', 'bank_account'] as const;
export type AccountKind = (typeof accountKinds)[number];
export type AccountSource = 'deposit' | 'api';

export interface BankAccount {
  ispb: string;
  branch: string;
  account: string;
}

/**
 * A bank account in one spelling, so a deposit's payer fields and a payout's composite key name
 * it alike: digits only, branch and account without leading zeros. Undefined when a part is
 * missing or the ISPB is not 8 digits.
 */
export function normaliseBankAccount(a: {
  ispb?: string;
  branch?: string;
  account?: string;
}): BankAccount | undefined {
  const digits = (v: string | undefined) => (v ?? '').replace(/\D/g, '');
  const ispb = digits(a.ispb);
  const branch = digits(a.branch).replace(/^0+(?=\d)/, '');
  const account = digits(a.account).replace(/^0+(?=\d)/, '');
  if (!/^\d{8}$/.test(ispb) || branch === '' || account === '') return undefined;
  return { ispb, branch, account };
}

/** What a bank account's key hash is taken of. */
export const bankAccountKey = (a: BankAccount) => `bank:${a.ispb};${a.branch};${a.account}`;

/** What a Pix key's hash is taken of: e-mail keys are case-insensitive, the others exact. */
export const pixKeyKey = (pixKey: string, pixType: string) =>
  `pix:${pixType}:${pixType === 'EMAIL' ? pixKey.toLowerCase() : pixKey}`;
