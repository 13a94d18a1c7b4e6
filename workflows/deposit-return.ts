import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  setWorkflowOptions,
} from '@temporalio/workflow';
import type {
  createDepositReturnActivities,
  DepositReturnAnswer,
  ReturnRules,
  ReturnSeen,
} from '../activities/deposit-return';
import {
  type DepositInput,
  type DepositReturn,
  type DepositReturnInput,
  type DepositState,
  type DepositStatus,
  depositReturnId,
  depositStateQuery,
  depositWorkflowId,
  FIRST_CONNECTOR,
} from '../contracts/deposit';
import { isProven } from './decision-proofs';
import { DepositFlow } from './deposit';
import { isoNow, POSTGRES_WRITE_OPTIONS, PROVIDER_CALL_OPTIONS, type RowOf } from './flow-lifecycle';

type ReturnActivities = ReturnType<typeof createDepositReturnActivities>;

const { requestDepositReturn, lookUpDepositReturn } =
  proxyActivities<ReturnActivities>(PROVIDER_CALL_OPTIONS);
// One read of the policy in our own Postgres, inside the held run's first workflow task.
const { returnRulesFor } = proxyLocalActivities<ReturnActivities>(POSTGRES_WRITE_OPTIONS);

/** The return looked at again 2 s after it was asked, then at doubling waits of at most 10 min. */
const FIRST_LOOK_MS = 2_000;
const LONGEST_LOOK_MS = 600_000;

/** A deposit whose row also says where its money's return stands. */
export class ReturningDepositFlow extends DepositFlow {
  protected override details() {
    const { connector, return: given, returnByHand } = this.state;
    return { ...super.details(), connector, return: given, returnByHand };
  }
}

/** The rules in force on the held deposit's automatic return. */
export const rulesOfReturn = (): Promise<ReturnRules> => returnRulesFor();

/** Who asked for the return, the reason its statuses carry, and `recorded`, told once one is written. */
export interface ReturnAsk {
  by: string;
  reason?: string;
  /** The policy's version an automatic return was decided under. */
  policyVersion?: number;
  /** With it, its brand's overrides' version, when the brand sets rules of its own. */
  brandPolicyVersion?: number;
  recorded: () => void;
}

/**
 * The return phase: asks the deposit's connector once (the id derived from the deposit), moves
 * to `return_requested`, then waits for the outcome, looking on each provider hint (the PSP's
 * webhook) and on a backing-off timer when the hint is lost: `returned` or `return_failed`. A
 * connector that cannot return leaves the money to be returned by hand: `to_return`.
 */
export async function returnDeposit(flow: ReturningDepositFlow, ask: ReturnAsk): Promise<void> {
  const { state } = flow;
  const connector = state.connector ?? FIRST_CONNECTOR;
  const returnId = depositReturnId(state.txid);
  const e2eId = state.payment?.e2eId ?? '';
  const answer = await requestOnce({ connector, e2eId, returnId, amountCentavos: state.amountCentavos });
  if (answer.kind === 'by_hand') {
    state.returnByHand = { connector, why: answer.why };
    await flow.moveTo('to_return', ask.reason);
    return ask.recorded();
  }
  const given: DepositReturn = {
    returnId,
    amountCentavos: state.amountCentavos,
    requestedAt: (answer.kind === 'asked' && answer.return.requestedAt) || isoNow(),
    state: 'requested',
    by: ask.by,
    ...(ask.policyVersion === undefined ? {} : { policyVersion: ask.policyVersion }),
    ...(ask.brandPolicyVersion === undefined ? {} : { brandPolicyVersion: ask.brandPolicyVersion }),
  };
  state.return = given;
  if (answer.kind === 'refused') {
    state.return = { ...given, state: 'failed', reason: answer.reason };
    await flow.moveTo('return_failed', ask.reason);
    return ask.recorded();
  }
  await flow.moveTo('return_requested', ask.reason);
  ask.recorded();
  let seen = answer.return;
  for (let wait = FIRST_LOOK_MS; seen.state === 'processing'; wait = Math.min(wait * 2, LONGEST_LOOK_MS)) {
    await condition(() => flow.hint.pending, wait, { summary: 'The return, until its next look' });
    flow.hint.pending = false;
    const looked = await lookUpDepositReturn(connector, e2eId, returnId);
    // Asked already: not visible yet is still on its way.
    if (looked.state !== 'not_found') seen = looked;
  }
  state.return = outcomeOf(given, seen);
  await flow.moveTo(seen.state === 'returned' ? 'returned' : 'return_failed', ask.reason);
  ask.recorded();
}

/** The return's outcome as the deposit keeps it. */
function outcomeOf(given: DepositReturn, seen: ReturnSeen): DepositReturn {
  if (seen.state === 'returned')
    return { ...given, state: 'returned', rtrId: seen.rtrId, returnedAt: seen.returnedAt ?? isoNow() };
  return { ...given, state: 'failed', rtrId: seen.rtrId, reason: seen.reason ?? seen.providerStatus };
}

/** The ask; a connector that refuses it outright (a business error) is a failed return. */
async function requestOnce(
  ask: Parameters<ReturnActivities['requestDepositReturn']>[0],
): Promise<DepositReturnAnswer | { kind: 'refused'; reason: string }> {
  try {
    return await requestDepositReturn(ask);
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    if (!(cause instanceof ApplicationFailure && cause.nonRetryable)) throw err;
    return { kind: 'refused', reason: cause.type ? `${cause.type}: ${cause.message}` : cause.message };
  }
}

/**
 * A completed deposit's money sent back to its payer (an impeded person's account closed), in a
 * short flow of its own (`deposit-return-<txid>`, once per deposit) through the same return phase
 * as a held deposit's. Its status changes are the deposit's: written on the deposit's row, after
 * the seq it had. No provider hint reaches it (the PSP's webhook names the deposit's closed run):
 * it looks the return up on its timer. It asks nothing unless the operator's decision is proven.
 */
export async function depositReturnWorkflow(input: DepositReturnInput): Promise<DepositState> {
  const at = isoNow();
  const flow = new CompletedDepositReturn(input, {
    status: 'completed',
    txid: input.txid,
    amountCentavos: input.amountCentavos,
    payment: { e2eId: input.e2eId },
    connector: input.connector,
    notifications: 0,
    inquiries: 0,
    startedAt: at,
    updatedAt: at,
  });
  setHandler(depositStateQuery, () => flow.state);
  // Money moves only on a decision the back office recorded for this flow: a start sent to
  // Temporal directly names none, and asks the PSP nothing (the attempt is counted).
  const { decisionId, by, reason } = input;
  if (!(await isProven({ kind: 'deposit.return', decisionId, operator: by, decision: 'return', reason })))
    return flow.settle();
  await returnDeposit(flow, { by, recorded: () => {} });
  return flow.settle();
}
// Seconds to minutes from the ask to the PSP's answer: it ends on the build it started on.
setWorkflowOptions({ versioningBehavior: 'PINNED' }, depositReturnWorkflow);

/** The return's status changes, as rows of the deposit it returns. */
class CompletedDepositReturn extends ReturningDepositFlow {
  private readonly kept: Record<string, unknown>;
  private readonly depositId: string;

  constructor(input: DepositReturnInput, state: DepositState) {
    // The row names the person already (its CPF is kept only hashed and masked): none is given.
    const deposit: DepositInput = {
      txid: input.txid,
      merchant: input.merchant,
      amountCentavos: input.amountCentavos,
      client: { externalId: '', cpf: '', email: '', name: '' },
    };
    super(deposit, state, input.row.seq);
    this.kept = input.row.details;
    this.depositId = depositWorkflowId(input.txid);
  }

  override nextRow(status: DepositStatus, reason?: string): RowOf<DepositStatus> {
    return { ...super.nextRow(status, reason), workflowId: this.depositId };
  }

  /** The deposit's details as they were (its payment), with the return's over them. */
  protected override details() {
    const mine = super.details();
    const given = Object.entries(mine).filter(([, v]) => v !== undefined);
    return { ...this.kept, ...Object.fromEntries(given) } as typeof mine;
  }
}
