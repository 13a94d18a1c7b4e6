import { ApplicationFailure, NexusOperationFailure } from '@temporalio/common';
import { HandlerError } from 'nexus-rpc';
import { pixflowNexusClient } from '../../nexus/caller';
import type {
  DepositCreated,
  DepositOutcome,
  OnboardingOutcome,
  WithdrawalOutcome,
} from '../../nexus/service';

// A backend's workflows, in a namespace of its own, that call pixflow through its Nexus service
// as docs/nexus.md shows: the only pixflow code in their bundle is the service's definition and
// nexus/caller.ts, which presents their pixflow API key in each operation's header. Their worker
// runs with Temporal's default data converter: no pixflow codec key.

export interface Person {
  externalId: string;
  cpf: string;
  email: string;
  name: string;
}

export interface MoneyMoved {
  onboarding: OnboardingOutcome;
  deposit: DepositCreated;
  depositOutcome: DepositOutcome;
  withdrawal: WithdrawalOutcome;
}

/** Onboards the person, takes a deposit from them and pays them out, each through pixflow. */
export async function backendMovesMoney(input: {
  /** The backend's pixflow API key. */
  apiKey: string;
  person: Person;
  txid: string;
  transactionId: string;
  depositCentavos: number;
  payoutCentavos: number;
}): Promise<MoneyMoved> {
  const { person } = input;
  const pixflow = () => pixflowNexusClient(input.apiKey);
  const onboarding = await pixflow().executeOperation(
    'startOnboarding',
    { cpf: person.cpf, plan: 'plan_basic', event: 'backend-signup' },
    { scheduleToCloseTimeout: '5 minutes' },
  );
  if (onboarding.status !== 'approved') {
    throw ApplicationFailure.nonRetryable(`the onboarding ended ${onboarding.status}`);
  }
  const deposit = await pixflow().executeOperation(
    'createDeposit',
    { txid: input.txid, amountCentavos: input.depositCentavos, client: person },
    { scheduleToCloseTimeout: '1 minute' },
  );
  const depositOutcome = (await pixflow().executeOperation(
    'waitForOutcome',
    { flow: 'deposit', txid: deposit.txid },
    { scheduleToCloseTimeout: '5 minutes' },
  )) as DepositOutcome;
  const withdrawal = await pixflow().executeOperation(
    'requestWithdrawal',
    {
      transactionId: input.transactionId,
      amountCentavos: input.payoutCentavos,
      pixKey: person.cpf,
      pixType: 'CPF',
      client: person,
    },
    { scheduleToCloseTimeout: '5 minutes' },
  );
  return { onboarding, deposit, depositOutcome, withdrawal };
}

/** How an operation failed, as the caller's workflow sees it. */
export interface Refusal {
  operation: string;
  /** A handler error (bad input) or a failed operation (a refusal). */
  kind: 'handler-error' | 'operation-failed' | 'succeeded';
  /** The handler error's type (BAD_REQUEST), or the refusal's (its Problem's slug). */
  type?: string;
  message?: string;
  details?: unknown;
}

function refusalOf(operation: string, err: unknown): Refusal {
  if (!(err instanceof NexusOperationFailure)) throw err;
  const { cause } = err;
  if (cause instanceof HandlerError) {
    return { operation, kind: 'handler-error', type: cause.type, message: cause.message };
  }
  // The handler's OperationError arrives as an ApplicationFailure whose cause names the refusal.
  let failure: unknown = cause;
  while (failure instanceof ApplicationFailure && failure.type === 'OperationError' && failure.cause) {
    failure = failure.cause;
  }
  if (!(failure instanceof ApplicationFailure)) throw err;
  return {
    operation,
    kind: 'operation-failed',
    type: failure.type ?? undefined,
    message: failure.message,
    details: failure.details?.[0],
  };
}

async function attempt(operation: string, call: () => Promise<unknown>): Promise<Refusal> {
  try {
    await call();
    return { operation, kind: 'succeeded' };
  } catch (err) {
    return refusalOf(operation, err);
  }
}

/** What pixflow refuses, and how the refusals reach a caller's workflow. */
export async function backendRefusals(input: {
  apiKey: string;
  stranger: Person;
  approved: Person;
  conflictingTransactionId: string;
}): Promise<Refusal[]> {
  const opts = { scheduleToCloseTimeout: '1 minute' } as const;
  const { stranger, approved } = input;
  const pixflow = () => pixflowNexusClient(input.apiKey);
  return [
    await attempt('createDeposit: a CPF with wrong check digits', () =>
      pixflow().executeOperation(
        'createDeposit',
        { amountCentavos: 1_000, client: { ...stranger, cpf: '12345678900' } },
        opts,
      ),
    ),
    await attempt('createDeposit: a person never onboarded', () =>
      pixflow().executeOperation('createDeposit', { amountCentavos: 1_000, client: stranger }, opts),
    ),
    await attempt('requestWithdrawal: a person never onboarded', () =>
      pixflow().executeOperation(
        'requestWithdrawal',
        { amountCentavos: 1_000, pixKey: stranger.cpf, pixType: 'CPF', client: stranger },
        opts,
      ),
    ),
    await attempt('requestWithdrawal: a transactionId already used for another payout', () =>
      pixflow().executeOperation(
        'requestWithdrawal',
        {
          transactionId: input.conflictingTransactionId,
          amountCentavos: 7_777,
          pixKey: approved.cpf,
          pixType: 'CPF',
          client: approved,
        },
        opts,
      ),
    ),
    await attempt('waitForOutcome: a deposit that does not exist', () =>
      pixflow().executeOperation('waitForOutcome', { flow: 'deposit', txid: '404404404' }, opts),
    ),
    await attempt("createDeposit: a payer's bank account whose ispb is not 8 digits", () =>
      pixflow().executeOperation(
        'createDeposit',
        {
          amountCentavos: 1_000,
          client: { ...stranger, bankAccount: { ispb: '6070119', branch: '1', number: '1' } },
        },
        opts,
      ),
    ),
    await attempt("createDeposit: the payer's bank account by the names it had before bankAccount", () =>
      pixflow().executeOperation(
        'createDeposit',
        // A caller built against the old service: its type no longer has the field.
        { amountCentavos: 1_000, client: { ...stranger, bankispb: '60701190' } as Person },
        opts,
      ),
    ),
  ];
}

/** A deposit asked with this key: what the caller's workflow sees when pixflow refuses the key. */
export async function backendWithKey(input: {
  apiKey: string;
  person: Person;
  txid: string;
}): Promise<Refusal> {
  return attempt('createDeposit', () =>
    pixflowNexusClient(input.apiKey).executeOperation(
      'createDeposit',
      { txid: input.txid, amountCentavos: 1_000, client: input.person },
      { scheduleToCloseTimeout: '1 minute' },
    ),
  );
}
