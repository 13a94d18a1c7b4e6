import { z } from 'zod';
import { cpfSchema, txidSchema } from '../contracts/flow-input';
import { transactionIdSchema } from '../contracts/withdrawal-input';

// What the Nexus operations take besides the API's bodies: which flow to wait for, by the id the
// API's routes name it by.

export const flowRefSchema = z.discriminatedUnion('flow', [
  z.object({ flow: z.literal('onboarding'), cpf: cpfSchema }),
  z.object({ flow: z.literal('deposit'), txid: txidSchema }),
  z.object({ flow: z.literal('withdrawal'), transactionId: transactionIdSchema }),
]);
export type FlowRefInput = z.output<typeof flowRefSchema>;
