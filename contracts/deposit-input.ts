import { z } from 'zod';
import type { FlowTimings } from './flow';
import {
  amountCentavosSchema,
  birthdaySchema,
  cpfSchema,
  depositPayerSchema,
  emailSchema,
  txidSchema,
} from './flow-input';

// What a deposit is started with, as the API checks it.

export const depositInputSchema = z.object({
  txid: txidSchema,
  merchant: z.string().min(1).max(100),
  client: depositPayerSchema.extend({
    cpf: cpfSchema,
    email: emailSchema,
    birthday: birthdaySchema.optional(),
  }),
  amountCentavos: amountCentavosSchema,
});
export type DepositInput = z.infer<typeof depositInputSchema> & {
  timings?: Partial<FlowTimings>;
  /**
   * The brand the deposit belongs to: the key's, never the request body's. Absent: the default
   * brand (every deposit started before brands, so their histories replay as they ran).
   */
  brand?: string;
  /** The API request that started the flow: its `qrCode` update answers `created`. */
  requestId?: string;
};

/**
 * An operator's decision on a held deposit: credit it (`accept`) or send the money back by hand
 * (`return`), who decided and why.
 */
export const depositResolutionInputSchema = z.object({
  decision: z.enum(['accept', 'return']),
  by: z.string().min(1).max(200),
  reason: z.string().min(1).max(1000),
});
export type DepositResolutionRequest = z.infer<typeof depositResolutionInputSchema>;
