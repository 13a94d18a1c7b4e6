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

/**
 * One mod-11 check digit of `cnpj` under `weights`: each character counts as its code minus 48
 * (digits as themselves, A as 17 ... Z as 42, IN RFB 2.229/2024); a remainder below 2 gives 0,
 * else 11 minus it.
 */
function checkDigit(cnpj: string, weights: readonly number[]): number {
  let sum = 0;
  for (const [i, w] of weights.entries()) sum += (cnpj.charCodeAt(i) - 48) * w;
  const r = sum % 11;
  return r < 2 ? 0 : 11 - r;
}

/** Twelve letters or digits (the alphanumeric CNPJ issued since July 2026), then two check digits. */
const CNPJ_SHAPE = /^[0-9A-Z]{12}[0-9]{2}$/;

/**
 * Whether `cnpj` is a CNPJ: 12 upper-case letters or digits and 2 check digits, those of the
 * first twelve and of the first thirteen. One digit repeated passes the arithmetic but is no CNPJ.
 */
export function isValidCnpj(cnpj: string): boolean {
  if (!CNPJ_SHAPE.test(cnpj) || /^(\d)\1{13}$/.test(cnpj)) return false;
  return (
    checkDigit(cnpj, CNPJ_FIRST_WEIGHTS) === Number(cnpj[12]) &&
    checkDigit(cnpj, CNPJ_SECOND_WEIGHTS) === Number(cnpj[13])
  );
}

/** The CNPJ without punctuation, letters upper-cased, as it is kept. */
const bareCnpj = (v: string) => v.replace(/[./\s-]/g, '').toUpperCase();

/** 12.345.678/0001-95 (or 12.ABC.345/01DE-35), as the Receita Federal prints a CNPJ; else as given. */
export function formatCnpj(cnpj: string): string {
  const d = bareCnpj(cnpj);
  if (!CNPJ_SHAPE.test(d)) return cnpj;
  return `${d.slice(0, 2)}.${d.slice(2, 5)}.${d.slice(5, 8)}/${d.slice(8, 12)}-${d.slice(12)}`;
}

const CNPJ_FORM =
  'must be 14 characters (12 letters or digits, then 2 check digits), with or without . / and -';

/**
 * A CNPJ, numeric or alphanumeric, with or without its punctuation (12.345.678/0001-95,
 * 12345678000195, 12.ABC.345/01DE-35); kept bare, letters upper-cased. One field, one error: a
 * value of another shape is not also said to have wrong check digits.
 */
export const cnpjSchema = z
  .string({ error: 'is required' })
  .trim()
  .regex(/^[\dA-Za-z./\s-]+$/, { error: CNPJ_FORM, abort: true })
  .transform(bareCnpj)
  .pipe(
    z
      .string()
      .regex(CNPJ_SHAPE, { error: CNPJ_FORM, abort: true })
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
