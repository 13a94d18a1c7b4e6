import { isValid as isValidCpf } from '@fnando/cpf';

// The Pix key types and the validation of a payee's key for its type. No zod here: the withdrawal
// workflow validates keys too, and every module it imports is instantiated per running workflow.

export const PIX_TYPES = ['CPF', 'EMAIL', 'PHONE', 'EVP', 'ACCOUNT'] as const;
export type PixType = (typeof PIX_TYPES)[number];

// Validation of a payee's Pix key for its pixType. Returns a human-readable reason, or null when valid.

// No flags on these: /openapi.json publishes their sources as JSON Schema patterns.
const EVP = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
// +55, two-digit area code (no zero), 8 (landline) or 9 (mobile) digit number.
const PHONE = /^\+55[1-9][1-9]\d{8,9}$/;
// Pix e-mail keys are at most 77 characters.
const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export const PIX_EMAIL_MAX_LENGTH = 77;
/** The rules of the key types that are one regular expression each. */
export const PIX_KEY_PATTERNS = { EVP, PHONE, EMAIL } as const;

export interface CompositeAccountKey {
  key: string;
  ispb: string;
  branch: string;
  account: string;
  accountType: 'CACC' | 'SVGS' | 'TRAN';
}

/** What a composite key's first part may be: a Pix key of one of the contract's other types. */
const KEY_PART_TYPES = ['CPF', 'EMAIL', 'PHONE', 'EVP'] as const;

export interface PixKeyRules {
  /**
   * Whether a composite key's first part must itself be a Pix key (CPF, e-mail, phone or EVP).
   * False only for a workflow whose history was made without the rule, so that it replays.
   */
  checkCompositeKeyPart?: boolean;
}

/** Parses `key;ispb;branch;account;CACC|SVGS|TRAN`. */
export function parseCompositeAccountKey(
  value: string,
  { checkCompositeKeyPart = true }: PixKeyRules = {},
): CompositeAccountKey | string {
  const parts = value.split(';');
  if (parts.length !== 5) return 'ACCOUNT key must have 5 parts: key;ispb;branch;account;CACC|SVGS|TRAN';
  const [key = '', ispb = '', branch = '', account = '', accountType = ''] = parts;
  if (checkCompositeKeyPart) {
    if (key === '') return 'ACCOUNT key: the key part (before the first ";") is empty';
    if (!KEY_PART_TYPES.some((type) => pixKeyProblem(key, type) === null)) {
      return 'ACCOUNT key: the key part must be a CPF, e-mail, phone (+55) or EVP Pix key';
    }
  }
  if (!/^\d{8}$/.test(ispb)) return 'ACCOUNT key: ispb must be 8 digits';
  if (!/^\d{1,5}$/.test(branch)) return 'ACCOUNT key: branch must be 1 to 5 digits';
  if (!/^\d{1,20}$/.test(account)) return 'ACCOUNT key: account must be 1 to 20 digits, no hyphen';
  if (accountType !== 'CACC' && accountType !== 'SVGS' && accountType !== 'TRAN') {
    return 'ACCOUNT key: account type must be CACC, SVGS or TRAN';
  }
  return { key, ispb, branch, account, accountType };
}

export function pixKeyProblem(
  pixKey: string,
  pixType: PixType | string | undefined,
  rules: PixKeyRules = {},
): string | null {
  if (pixType === undefined) {
    return detectPixType(pixKey) === null ? 'pixKey does not match any Pix key type' : null;
  }
  const type = PIX_TYPES.find((t) => t === pixType);
  if (!type) return `pixType must be one of ${PIX_TYPES.join(', ')}`;
  switch (type) {
    case 'CPF':
      if (!/^\d{11}$/.test(pixKey)) return 'CPF key must be 11 digits';
      return isValidCpf(pixKey) ? null : 'CPF key has invalid check digits';
    case 'EMAIL':
      if (pixKey.length > PIX_EMAIL_MAX_LENGTH) return 'EMAIL key must be at most 77 characters';
      return EMAIL.test(pixKey) ? null : 'EMAIL key is not a valid e-mail address';
    case 'PHONE':
      return PHONE.test(pixKey) ? null : 'PHONE key must be +55 followed by area code and number (E.164)';
    case 'EVP':
      return EVP.test(pixKey) ? null : 'EVP key must be a UUID';
    case 'ACCOUNT': {
      const parsed = parseCompositeAccountKey(pixKey, rules);
      return typeof parsed === 'string' ? parsed : null;
    }
  }
}

/** The pixType a key is valid for, or null. (CPF before PHONE: an 11-digit string is never a +55 phone.) */
export function detectPixType(pixKey: string): PixType | null {
  for (const type of PIX_TYPES) {
    if (pixKeyProblem(pixKey, type) === null) return type;
  }
  return null;
}
