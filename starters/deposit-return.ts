import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import {
  type DepositReturnInput,
  type DepositState,
  depositReturnWorkflowId,
  depositStateQuery,
  depositWorkflowId,
  FIRST_CONNECTOR,
} from '../contracts/deposit';
import { DEFAULT_BRAND } from '../contracts/flow';
import { flowState, isNotFound } from './workflow-calls';

// Starting the return of a completed deposit's money (the back office, once an impeded person's
// account is closed): one return flow per deposit, ever, so a second ask changes nothing.

/**
 * The brand a deposit's workflow id names: the part before its first `:` (contracts/flow.ts
 * brandScopedId: no brand id or txid holds one), the default brand's when there is none.
 */
function brandOfDeposit(depositWorkflowId: string): string {
  const at = depositWorkflowId.indexOf(':');
  return at > 0 ? depositWorkflowId.slice(0, at) : DEFAULT_BRAND;
}

/**
 * `started`, or `already`: the deposit's return was asked before (running or done). The return
 * flow is the deposit's brand's (`bet-rio:deposit-return-<txid>`), which its workflow id names;
 * the default brand's deposit `deposit-<txid>` when none is given.
 */
export async function startDepositReturn(
  client: Client,
  taskQueue: string,
  input: DepositReturnInput,
  ofDeposit: string = depositWorkflowId(input.txid),
): Promise<{ outcome: 'started' | 'already'; workflowId: string }> {
  const brand = brandOfDeposit(ofDeposit);
  // A caller's mistake, never a request's: the id and the txid name two deposits.
  if (ofDeposit !== depositWorkflowId(input.txid, brand)) {
    throw new Error(`the return of deposit ${input.txid} was asked for another flow`);
  }
  const workflowId = depositReturnWorkflowId(input.txid, brand);
  try {
    await client.workflow.start('depositReturnWorkflow', {
      workflowId,
      taskQueue,
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
    return { outcome: 'started', workflowId };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return { outcome: 'already', workflowId };
    throw err;
  }
}

/**
 * A completed deposit's state with the return of its money, when a return flow of its own sent
 * it back (its run had ended `completed` before): that flow's status and return. Asked only of a
 * deposit on a connector that returns received Pix (every one but the first provider's). `brand`:
 * the deposit's, whose return flow it is.
 */
export async function withItsReturn(
  client: Client,
  state: DepositState,
  brand?: string,
): Promise<DepositState> {
  if (state.status !== 'completed' || !state.connector || state.connector === FIRST_CONNECTOR) return state;
  let returning: DepositState;
  try {
    returning = await flowState(
      client.workflow.getHandle(depositReturnWorkflowId(state.txid, brand)),
      depositStateQuery,
    );
  } catch (err) {
    if (isNotFound(err)) return state;
    throw err;
  }
  const { status, updatedAt, finishedAt, return: given, returnByHand } = returning;
  return {
    ...state,
    status,
    updatedAt,
    ...(finishedAt ? { finishedAt } : {}),
    ...(given ? { return: given } : {}),
    ...(returnByHand ? { returnByHand } : {}),
  };
}
