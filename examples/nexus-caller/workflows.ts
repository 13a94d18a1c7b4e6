import { ApplicationFailure, defineQuery, setHandler } from '@temporalio/workflow';
import { pixflowNexusClient } from '../../nexus/caller';

// A backend's workflow, in its own namespace, that calls pixflow through its Nexus service: it
// signs a person up, takes a deposit and pays a prize out. The only pixflow code in its bundle is
// the service's definition (nexus/service.ts, types and names) and nexus/caller.ts, which puts the
// backend's pixflow API key in each operation's header (the worker registers its interceptor).
// What pixflow answers carries no personal data and comes in the clear: this workflow's worker
// holds no pixflow codec key.

export interface Person {
  /** Your id for the person: pixflow's deposits and withdrawals name their client by it. */
  externalId: string;
  cpf: string;
  email: string;
  name: string;
}

export interface SignUpInput {
  /**
   * The backend's pixflow API key, with onboardings:write, deposits:write and withdrawals:write.
   * It is written into this workflow's history (its input, its operations' headers).
   */
  pixflowApiKey: string;
  person: Person;
  depositCentavos: number;
  prizeCentavos: number;
  /** Your ids for the deposit and the payout (pixflow derives them from the operation when unset). */
  txid?: string;
  transactionId?: string;
}

/** Where the workflow is: what the person has to do next (the example's runner plays them). */
export type Progress =
  | { step: 'onboarding' }
  | { step: 'awaiting_payment'; txid: string; pixCode: string }
  | { step: 'paying_out'; transactionId: string }
  | { step: 'done' };

export const progressQuery = defineQuery<Progress>('progress');

export async function signUpDepositAndPayOut(input: SignUpInput) {
  const { person } = input;
  const pixflow = () => pixflowNexusClient(input.pixflowApiKey);
  let progress: Progress = { step: 'onboarding' };
  setHandler(progressQuery, () => progress);

  // Waits as long as the person (and a reviewer, if any) take: the server calls back at the end.
  const onboarding = await pixflow().executeOperation(
    'startOnboarding',
    { cpf: person.cpf, plan: 'plan_basic', event: 'signup' },
    { scheduleToCloseTimeout: '7 days' },
  );
  if (onboarding.status !== 'approved') {
    throw ApplicationFailure.nonRetryable(
      `the onboarding ended ${onboarding.status}: ${onboarding.reasons.join(', ')}`,
    );
  }

  // The Pix code at once, to show the person; then the deposit's outcome once they paid.
  const deposit = await pixflow().executeOperation(
    'createDeposit',
    { txid: input.txid, amountCentavos: input.depositCentavos, client: person },
    { scheduleToCloseTimeout: '1 minute' },
  );
  progress = { step: 'awaiting_payment', txid: deposit.txid, pixCode: deposit.qr.payload };
  const paid = await pixflow().executeOperation(
    'waitForOutcome',
    { flow: 'deposit', txid: deposit.txid },
    { scheduleToCloseTimeout: '1 hour' },
  );
  if (paid.status !== 'completed') throw ApplicationFailure.nonRetryable(`the deposit ended ${paid.status}`);

  // The prize, to the person's own CPF key: the operation ends when the payout does.
  const transactionId = input.transactionId ?? `prize-${deposit.txid}`;
  progress = { step: 'paying_out', transactionId };
  const payout = await pixflow().executeOperation(
    'requestWithdrawal',
    {
      transactionId,
      amountCentavos: input.prizeCentavos,
      pixKey: person.cpf,
      pixType: 'CPF',
      client: person,
    },
    { scheduleToCloseTimeout: '3 days' },
  );
  progress = { step: 'done' };
  return { onboarding, deposit: { txid: deposit.txid, created: deposit.created }, paid, payout };
}
