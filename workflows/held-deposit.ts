import { condition, setHandler, setWorkflowOptions } from '@temporalio/workflow';
import { type DepositState, depositStateQuery } from '../contracts/deposit';
import { answerQrRequests, answerResolutions, DepositFlow, type HeldDepositInput } from './deposit';

/**
 * A paid deposit the rules hold (someone else paid it), continued from its deposit run under the
 * same workflow id: `held` until an operator's `resolution`, then `completed` when accepted,
 * `to_return` when the money is to go back. It answers the same query and updates as the
 * deposit's run did, so the API and the back office see one deposit.
 */
export async function heldDepositWorkflow({
  deposit: input,
  state,
  hold,
  rowsWritten,
}: HeldDepositInput): Promise<DepositState> {
  // Notifications still count (the flow listens); the payment is proven already.
  const flow = new DepositFlow(input, state, rowsWritten);
  setHandler(depositStateQuery, () => state);
  answerQrRequests(input, state);
  const resolved = answerResolutions(input, state);

  // Not credited: an operator decides. No deadline: the money is here, and only a person may
  // say whether it stays.
  await flow.moveTo('held', hold);
  await condition(() => state.resolution !== undefined);
  const accepted = state.resolution?.decision === 'accept';
  await flow.moveTo(accepted ? 'completed' : 'to_return', accepted ? undefined : hold);
  resolved.done = true;
  return flow.settle();
}
// It may wait days for its operator: each of its workflow tasks runs on the current build.
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, heldDepositWorkflow);
