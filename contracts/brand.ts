import { z } from 'zod';

// A brand (docs/brands.md): the name an operator trades under, and the licensed operator it
// belongs to. Zod schemas for the boundaries that take one (the operator CLI today); the types
// are inferred from them.

/** The brand every install has: a single-brand operator configures nothing new. */
export const DEFAULT_BRAND_ID = 'default';

/** Lower-case letters, digits and hyphens, starting with a letter, 2 to 40 characters. */
export const BRAND_ID_PATTERN = /^[a-z][a-z0-9-]{1,39}$/;

export const brandIdSchema = z
  .string({ error: 'is required' })
  .regex(BRAND_ID_PATTERN, 'must be 2 to 40 lower-case letters, digits or hyphens, starting with a letter');

const CNPJ_FIRST_WEIGHTS = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
const CNPJ_SECOND_WEIGHTS = [6, 5, 4, 3, 2, ...CNPJ_FIRST_WEIGHTS.slice(4)];

/** One mod-11 check digit of `digits` under `weights`: a remainder below 2 gives 0, else 11 minus it. */
function checkDigit(digits: string, weights: readonly number[]): number {
  let sum = 0;
  for (const [i, w] of weights.entries()) sum += Number(digits[i]) * w;
  const r = sum % 11;
  return r < 2 ? 0 : 11 - r;
}

/**
 * Whether `digits` is a CNPJ: 14 digits whose last two are the check digits of the first twelve
 * and the first thirteen. One digit repeated passes the arithmetic but is no CNPJ.
 */
export function isValidCnpj(digits: string): boolean {
  if (!/^\d{14}$/.test(digits) || /^(\d)\1{13}$/.test(digits)) return false;
  return (
    checkDigit(digits, CNPJ_FIRST_WEIGHTS) === Number(digits[12]) &&
    checkDigit(digits, CNPJ_SECOND_WEIGHTS) === Number(digits[13])
  );
}

/** 12.345.678/0001-95, as the Receita Federal prints a CNPJ; anything else is shown as given. */
export function formatCnpj(cnpj: string): string {
  const d = cnpj.replace(/\D/g, '');
  if (d.length !== 14) return cnpj;
  return `${d.slice(0, 2)}.${d.slice(2, 5)}.${d.slice(5, 8)}/${d.slice(8, 12)}-${d.slice(12)}`;
}

/**
 * A CNPJ, with or without its punctuation (12.345.678/0001-95 or 12345678000195); the digits
 * are kept. One field, one error: a value that is not 14 digits is not also said to have wrong
 * check digits.
 */
export const cnpjSchema = z
  .string({ error: 'is required' })
  .trim()
  .regex(/^[\d./\s-]+$/, { error: 'must be 14 digits, with or without . / and -', abort: true })
  .transform((v) => v.replace(/\D/g, ''))
  .pipe(
    z
      .string()
      .regex(/^\d{14}$/, { error: 'must be 14 digits, with or without . / and -', abort: true })
      .refine((d) => !/^(\d)\1{13}$/.test(d), { error: 'is one digit repeated: no CNPJ', abort: true })
      .refine(isValidCnpj, 'has invalid check digits'),
  );

const text = (max: number) =>
  z
    .string({ error: 'is required' })
    .trim()
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`);

export const brandFieldsSchema = z.object({
  /** The brand's name, as its customers know it. */
  name: text(100),
  /** The operator's registered name (razão social). */
  legalName: text(200).optional(),
  cnpj: cnpjSchema.optional(),
  /** The SPA/MF authorization the operator trades under, e.g. "Portaria SPA/MF nº 1.234/2024". */
  authorization: text(200).optional(),
});

/** A brand to create: its id (never changed afterwards) and its fields; the operator's may come later. */
export const newBrandSchema = brandFieldsSchema.extend({ id: brandIdSchema });
export type NewBrand = z.infer<typeof newBrandSchema>;

/** What an update sets: the fields it names, at least one. */
export const brandPatchSchema = brandFieldsSchema
  .partial()
  .refine((p) => Object.values(p).some((v) => v !== undefined), {
    error: 'name at least one field to change (--name, --legal-name, --cnpj, --authorization)',
  });
export type BrandPatch = z.infer<typeof brandPatchSchema>;

/** A brand as stored: the operator's fields are null until set. */
export const brandSchema = z.object({
  id: brandIdSchema,
  name: z.string(),
  legalName: z.string().nullable(),
  cnpj: z
    .string()
    .regex(/^\d{14}$/)
    .nullable(),
  authorization: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Brand = z.infer<typeof brandSchema>;
