import { condition, patched, setHandler, setWorkflowOptions } from '@temporalio/workflow';
import {
  type DepositHoldReason,
  type DepositState,
  depositStateQuery,
  RETURNED_BY_RULES,
} from '../contracts/deposit';
import { answerQrRequests, answerResolutions, type HeldDepositInput } from './deposit';
import { ReturningDepositFlow, returnDeposit, rulesOfReturn } from './deposit-return';
import { isoNow } from './flow-lifecycle';

/**
 * The patch of held runs that send a returned deposit's money back through its connector, and
 * return it by themselves when the rules say so: held runs from before it replay as they were
 * (`to_return` on an operator's `return`, and no automatic return).
 */
export const DEPOSIT_RETURNS_PATCH = 'deposit-returns';

/**
 * A paid deposit the rules hold (someone else paid it), continued from its deposit run under the
 * same workflow id: `held` until an operator's `resolution`, then `completed` when accepted, or
 * its money sent back through the connector that received it (deposit-return.ts; `to_return`,
 * by hand, when that connector cannot). When the rules in force return a third party's money by
 * themselves, no decision within the review delay is a return decided `by: 'rules'`. It answers
 * the same query and updates as the deposit's run did, so the API and the back office see one
 * deposit.
 */
export async function heldDepositWorkflow({
  deposit: input,
  state,
  hold,
  rowsWritten,
}: HeldDepositInput): Promise<DepositState> {
  // Notifications still count (the flow listens); the payment is proven already.
  const flow = new ReturningDepositFlow(input, state, rowsWritten);
  setHandler(depositStateQuery, () => state);
  answerQrRequests(input, state);
  const resolved = answerResolutions(input, state);

  // Asked before the first command: in a replay the patch is known from the task's start, not
  // from the one a local activity's result arrives in.
  const returns = patched(DEPOSIT_RETURNS_PATCH);
  // Not credited: an operator decides.
  await flow.moveTo('held', hold);
  if (!returns) return decidedByHand(flow, hold, resolved);
  const rules = await rulesOfReturn();
  if (!rules.autoReturn) {
    await condition(() => state.resolution !== undefined);
  } else if (!(await condition(() => state.resolution !== undefined, rules.afterMs))) {
    // No operator within the review delay: the rules return it. Set before any await, so an
    // operator's resolution still reading its proof finds the hold decided.
    state.resolution = {
      decision: 'return',
      by: RETURNED_BY_RULES,
      reason: 'no operator decided within the review delay',
      at: isoNow(),
      policyVersion: rules.policyVersion,
      // Its brand's overrides' version too: data the history holds already, no command added.
      ...(rules.brandPolicyVersion === undefined ? {} : { brandPolicyVersion: rules.brandPolicyVersion }),
    };
  }
  const resolution = state.resolution;
  if (resolution?.decision === 'accept') {
    await flow.moveTo('completed');
    resolved.done = true;
    return flow.settle();
  }
  await returnDeposit(flow, {
    by: resolution?.by ?? RETURNED_BY_RULES,
    reason: hold,
    ...(resolution?.policyVersion === undefined ? {} : { policyVersion: resolution.policyVersion }),
    ...(resolution?.brandPolicyVersion === undefined
      ? {}
      : { brandPolicyVersion: resolution.brandPolicyVersion }),
    recorded: () => {
      resolved.done = true;
    },
  });
  resolved.done = true;
  return flow.settle();
}
// It may wait days for its operator: each of its workflow tasks runs on the current build.
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, heldDepositWorkflow);

/** Held runs from before the patch: no deadline, and a `return` leaves the money to be paid back by hand. */
async function decidedByHand(
  flow: ReturningDepositFlow,
  hold: DepositHoldReason,
  resolved: { done: boolean },
): Promise<DepositState> {
  const { state } = flow;
  await condition(() => state.resolution !== undefined);
  const accepted = state.resolution?.decision === 'accept';
  await flow.moveTo(accepted ? 'completed' : 'to_return', accepted ? undefined : hold);
  resolved.done = true;
  return flow.settle();
}
