import { isValid as isValidCpf } from '@fnando/cpf';
import { z } from 'zod';
import { PIX_TYPES } from './pix-key';

// The input rules every flow shares, as zod schemas for the API's boundary (see flow.ts for
// why they live apart from the contracts workflows import).

/**
 * A CPF: 11 digits whose last two are the check digits of the first nine. One field, one error:
 * a value that is not 11 digits is not also said to have wrong check digits. In /openapi.json
 * the rule is the named format `cpf` (component `Cpf`), so clients and fuzzers can follow it.
 */
export const cpfSchema = z
  .string()
  .regex(/^\d{11}$/, { error: 'must be 11 digits', abort: true })
  .refine((v) => isValidCpf(v), 'has invalid check digits')
  .meta({
    id: 'Cpf',
    format: 'cpf',
    description:
      'Brazilian CPF: 11 digits, no punctuation. The last two digits are the mod-11 check digits of ' +
      'the first nine (each weighted 10..2, then 11..2; a remainder below 2 gives 0, else 11 minus ' +
      'it); a CPF of one repeated digit is invalid.',
    examples: ['63401825771', '52998224725'],
  });

/** The earliest birthday the API takes: anything before is a typing error, not a person. */
const EARLIEST_BIRTHDAY = '1900-01-01';

/** A birthday: a real calendar date (no 0000-00-00, no 2023-02-29), from 1900 on, not in the future. */
export const birthdaySchema = z.iso
  .date({ error: 'must be a real date YYYY-MM-DD', abort: true })
  .refine((v) => v >= EARLIEST_BIRTHDAY && v <= new Date().toISOString().slice(0, 10), {
    error: `must be between ${EARLIEST_BIRTHDAY} and today`,
    abort: true,
  })
  .meta({
    description: `A real calendar date (YYYY-MM-DD) from ${EARLIEST_BIRTHDAY} up to today.`,
    example: '1990-01-02',
  });

/**
 * An e-mail address as the API checks it: zod's rule, which is not the `email` format of JSON
 * Schema (RFC 5321 admits quotes and IP literals, zod no leading dot, no `!`), so the document
 * publishes the pattern alone, the rule the API applies.
 */
export const emailSchema = z
  .string()
  .regex(z.regexes.email, 'Invalid email address')
  .meta({ description: 'an e-mail address', example: 'ana@example.com' });

export const amountCentavosSchema = z
  .number()
  .int('must be whole centavos')
  .min(1, 'must be at least 1 centavo')
  .max(100_000_000_00, 'must be at most R$ 100.000.000,00')
  .meta({ description: 'integer centavos (R$ 1,00 is 100)', example: 15_000 });

/** A deposit's id: digits only, at most 33, which every Pix charge id accepts. */
export const txidSchema = z.string().regex(/^\d{1,33}$/, 'must be digits only, at most 33 characters');

/** How deep an identity check reads the registry: each plan returns the fields of the ones before. */
export const kycPlanSchema = z.enum([
  'plan_basic',
  'plan_standard',
  'plan_plus',
  'plan_premium',
  'plan_full',
]);
export type KycPlan = z.infer<typeof kycPlanSchema>;

/** The type of a payee's Pix key: `ACCOUNT` is the composite `key;ispb;branch;account;type` form. */
export const pixTypeSchema = z.enum(PIX_TYPES);

const personBase = {
  externalId: z.string().min(1),
  cpf: z.string().min(1),
  email: z.string().min(1),
  name: z.string().min(1),
  phone: z.string().optional(),
  birthday: z.string().optional(),
};

/** The person who pays a deposit, with the bank account the rules ask operators to collect. */
export const depositPayerSchema = z.object({
  ...personBase,
  bankAccount: z
    .object({
      ispb: z.string().regex(/^\d{8}$/, 'must be 8 digits'),
      branch: z.string().regex(/^\d{1,5}$/, 'must be 1 to 5 digits'),
      number: z.string().regex(/^\d{1,20}$/, 'must be 1 to 20 digits, check digit included, no hyphen'),
    })
    .optional()
    .meta({
      description:
        "the payer's own bank account (Portaria SPA/MF 615/2024 asks operators to collect it): the bank's ISPB, the branch and the account number",
    }),
});

/** The person a payout goes to. */
export const payeeSchema = z.object(personBase);

export type DepositPayer = z.infer<typeof depositPayerSchema>;
export type Payee = z.infer<typeof payeeSchema>;
