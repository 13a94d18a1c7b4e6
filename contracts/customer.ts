import type { OnboardingStatus } from './onboarding';

// The customer: one person behind the flows, keyed by the keyed hash of their CPF. A read model
// in Postgres, kept by the flows' activities (see docs/flows.md, Customers); no zod here, the API's
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

/**
 * Where a payout or a registration points, as the ownership rule sees it: the person's own CPF
 * key (DICT lets only its holder register it, so it is always theirs), somebody else's CPF, or an
 * account that must be registered as theirs, named by what its key hash is taken of.
 */
export type Payee =
  | { kind: 'own_cpf' }
  | { kind: 'other_cpf' }
  | { kind: 'pix_key'; pixType: string; key: string }
  | { kind: 'bank_account'; account: BankAccount; key: string }
  /** A composite key the rules cannot read (its form is checked before this). */
  | { kind: 'unreadable' };

export function payeeOf(
  cpf: string,
  pixKey: string,
  pixType: string,
  parseComposite: (value: string) => { key: string; ispb: string; branch: string; account: string } | string,
): Payee {
  if (pixType === 'CPF') return pixKey === cpf ? { kind: 'own_cpf' } : { kind: 'other_cpf' };
  if (pixType !== 'ACCOUNT') return { kind: 'pix_key', pixType, key: pixKeyKey(pixKey, pixType) };
  const composite = parseComposite(pixKey);
  if (typeof composite === 'string') return { kind: 'unreadable' };
  // The composite form's key part names a CPF: somebody else's makes the account theirs.
  if (/^\d{11}$/.test(composite.key) && composite.key !== cpf) return { kind: 'other_cpf' };
  const account = normaliseBankAccount(composite);
  if (!account) return { kind: 'unreadable' };
  return { kind: 'bank_account', account, key: bankAccountKey(account) };
}
