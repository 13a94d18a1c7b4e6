import { z } from 'zod';
import { pixTypeSchema } from './flow-input';
import { pixKeyProblem } from './pix-key';

// What the customer routes take, as the API checks it.

/**
 * An account to register: a Pix key with its type, or the composite account form (pixType
 * ACCOUNT, `key;ispb;branch;account;type`), checked by the same rules as a withdrawal's key.
 */
export const customerAccountInputSchema = z
  .object({
    pixKey: z.string().min(1).max(200),
    pixType: pixTypeSchema,
  })
  .superRefine((v, ctx) => {
    const problem = pixKeyProblem(v.pixKey, v.pixType);
    if (problem) ctx.addIssue({ code: 'custom', path: ['pixKey'], message: problem });
  });
export type CustomerAccountInput = z.infer<typeof customerAccountInputSchema>;

/** A registered account's id, as the routes take it in the path. */
export const accountIdSchema = z
  .string()
  .regex(/^[1-9]\d{0,14}$/, 'must be an account id (a positive whole number)')
  .meta({ description: 'the id a registered account was answered with', example: '17' });

/** One deposit limit as a person sets it: whole centavos (0: no deposits), or null to remove it. */
const depositLimitCentavosSchema = z
  .number()
  .int('must be whole centavos')
  .min(0, 'must be 0 or more centavos')
  .max(100_000_000_00, 'must be at most R$ 100.000.000,00')
  .nullable();

/**
 * The limits a person sets on their own deposits, per São Paulo day, ISO week and month: a period
 * left out stays as it is. An unknown period is refused, not ignored: a typo must not leave the
 * person without the limit they asked for.
 */
export const depositLimitsInputSchema = z.strictObject({
  daily: depositLimitCentavosSchema.optional(),
  weekly: depositLimitCentavosSchema.optional(),
  monthly: depositLimitCentavosSchema.optional(),
});
export type DepositLimitsInput = z.infer<typeof depositLimitsInputSchema>;
