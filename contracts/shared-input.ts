import { isValid as isValidCpf } from '@fnando/cpf';
import { z } from 'zod';
import { txidSchema } from '../provider/schemas';

// The input rules every flow shares, as zod schemas for the API's boundary (see shared.ts for
// why they live apart from the contracts workflows import).

export const cpfSchema = z
  .string()
  .regex(/^\d{11}$/, 'must be 11 digits')
  .refine((v) => isValidCpf(v), 'has invalid check digits');

export const amountCentavosSchema = z
  .number()
  .int('must be whole centavos')
  .min(1, 'must be at least 1 centavo')
  .max(100_000_000_00, 'must be at most R$ 100.000.000,00');

/** The provider's rule for a deposit's txid (digits only, at most 33). */
export { txidSchema };
