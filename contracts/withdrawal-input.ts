import { z } from 'zod';
import type { FlowTimings } from './flow';
import {
  amountCentavosSchema,
  birthdaySchema,
  cpfSchema,
  emailSchema,
  payeeSchema,
  pixTypeSchema,
} from './flow-input';
import { pixKeyProblem } from './pix-key';

// What a withdrawal is started with, as the API checks it.

export const transactionIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._-]+$/, 'must be letters, digits, ".", "_" or "-"');

export const withdrawalInputSchema = z
  .object({
    transactionId: transactionIdSchema,
    merchant: z.string().min(1).max(100),
    client: payeeSchema.extend({
      cpf: cpfSchema,
      email: emailSchema,
      birthday: birthdaySchema.optional(),
    }),
    pixKey: z.string().min(1).max(200),
    pixType: pixTypeSchema,
    amountCentavos: amountCentavosSchema,
    requestedBy: emailSchema.optional().meta({
      description:
        'a manual payout: the back-office operator who asked for it (e-mail), who may not approve it',
    }),
  })
  .superRefine((v, ctx) => {
    const problem = pixKeyProblem(v.pixKey, v.pixType);
    if (problem) ctx.addIssue({ code: 'custom', path: ['pixKey'], message: problem });
  });
export type WithdrawalInput = z.infer<typeof withdrawalInputSchema> & {
  timings?: Partial<FlowTimings>;
  /**
   * The brand the withdrawal belongs to: the key's, never the request body's. Absent: the default
   * brand (every withdrawal started before brands, so their histories replay as they ran).
   */
  brand?: string;
};
