import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { type DepositReturnInput, depositReturnWorkflowId } from '../contracts/deposit';

// Starting the return of a completed deposit's money (the back office, once an impeded person's
// account is closed): one return flow per deposit, ever, so a second ask changes nothing.

/** `started`, or `already`: the deposit's return was asked before (running or done). */
export async function startDepositReturn(
  client: Client,
  taskQueue: string,
  input: DepositReturnInput,
): Promise<{ outcome: 'started' | 'already'; workflowId: string }> {
  const workflowId = depositReturnWorkflowId(input.txid);
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
