import { z } from 'zod';
import { cpfSchema, txidSchema } from '../contracts/flow-input';
import { transactionIdSchema } from '../contracts/withdrawal-input';
import { validationProblem } from '../http/problem';
import { parse } from '../http/request-input';
import { type DepositRequestBody, depositRequestSchema, renamedPayerFieldIssues } from '../starters/requests';

// What the Nexus operations take: the API's bodies (starters/requests.ts), checked as the API
// checks them and named `input.…`, and which flow to wait for, by the id the API's routes name it by.

/** A deposit's input: each bad field named, each renamed one with where it went. */
export function parseDepositInput(value: unknown): DepositRequestBody {
  const renamed = renamedPayerFieldIssues(value);
  if (renamed.length > 0) {
    const rest = depositRequestSchema.safeParse(value);
    throw validationProblem(
      'input',
      new z.ZodError([...renamed, ...(rest.success ? [] : rest.error.issues)]),
    );
  }
  return parse(depositRequestSchema, 'input', value);
}

export const flowRefSchema = z.discriminatedUnion('flow', [
  z.object({ flow: z.literal('onboarding'), cpf: cpfSchema }),
  z.object({ flow: z.literal('deposit'), txid: txidSchema }),
  z.object({ flow: z.literal('withdrawal'), transactionId: transactionIdSchema }),
]);
export type FlowRefInput = z.output<typeof flowRefSchema>;
