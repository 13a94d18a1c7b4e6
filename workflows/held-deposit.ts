import { condition, setHandler, setWorkflowOptions } from '@temporalio/workflow';
import { type DepositState, depositStateQuery } from '../contracts/deposit';
import { answerQrRequests, answerResolutions, type HeldDepositInput, trackDeposit } from './deposit';
import { listenForProviderHints } from './flow-lifecycle';

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
  const flow = trackDeposit(input, state, rowsWritten);
  setHandler(depositStateQuery, () => state);
  answerQrRequests(input, state);
  const resolved = answerResolutions(input, state);
  // Notifications still count; the payment is proven already.
  listenForProviderHints(state);

  // Not credited: an operator decides. No deadline: the money is here, and only a person may
  // say whether it stays.
  await flow.moveTo('held', hold);
  await condition(() => state.resolution !== undefined);
  const accepted = state.resolution?.decision === 'accept';
  await flow.moveTo(accepted ? 'completed' : 'to_return', accepted ? undefined : hold);
  resolved.done = true;
  const { qr: _qr, ...result } = await flow.settle();
  return result;
}
// It may wait days for its operator: each of its workflow tasks runs on the current build.
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, heldDepositWorkflow);
