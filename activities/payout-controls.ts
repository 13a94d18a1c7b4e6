import { ApplicationFailure } from '@temporalio/activity';
import { WITHDRAWAL_DEADLINE_AT_RISK, WITHDRAWAL_DEADLINE_MISSED } from '../contracts/events';
import type { FlowRecord } from '../contracts/flow';
import type { PayoutAuthorization } from '../contracts/payout-authorization';
import type { WithdrawalInput } from '../contracts/withdrawal';
import { appendFlowEventOnce } from '../db/flows';
import { inTransaction } from '../db/pool';
import type { ActivityDeps } from './deps';
import { upsertFlowRow } from './flows';
import { askPayoutAuthorization, payoutAuthorizationRequest } from './payout-authorization';

// The payout controls' I/O (docs/payout-controls.md): the deadline's marks, recorded where the
// back office and the operator's backend see them, and the operator's authorization.

/** The event each deadline mark appends. */
const PAYOUT_DEADLINE_EVENTS = {
  at_risk: WITHDRAWAL_DEADLINE_AT_RISK,
  missed: WITHDRAWAL_DEADLINE_MISSED,
} as const;

export function createPayoutControlActivities({
  pool,
  hashCpf,
  clock,
  payoutAuthorization,
  countPayoutDeadline,
  policy,
}: Pick<
  ActivityDeps,
  'pool' | 'hashCpf' | 'clock' | 'payoutAuthorization' | 'countPayoutDeadline' | 'policy'
>) {
  return {
    /**
     * Records that an open withdrawal passed its at-risk mark or its deadline: its flows row
     * (`row`, the same status, the details saying so) and the event, in one transaction, and the
     * metric. Idempotent: at most one event of each mark per withdrawal.
     */
    async recordPayoutDeadline(row: FlowRecord, mark: 'at_risk' | 'missed'): Promise<void> {
      const appended = await inTransaction(pool, async (client) => {
        await upsertFlowRow(client, row, { hashCpf, clock });
        // Once per withdrawal and mark: a retry, or a mark recorded again, appends none.
        return appendFlowEventOnce(client, row.workflowId, PAYOUT_DEADLINE_EVENTS[mark]);
      });
      if (appended) countPayoutDeadline?.(mark);
    },

    /**
     * Asks the operator's backend whether the payout may go (PAYOUT_AUTHORIZATION_URL); no valid
     * answer is decided by the policy in force (payouts.authorizationOnNoAnswer). Not configured
     * on this worker while the workflow asks: a failure to retry, never a silent send.
     */
    async authorizePayout(input: WithdrawalInput, approvedBy: string[]): Promise<PayoutAuthorization> {
      if (!payoutAuthorization)
        throw ApplicationFailure.retryable(
          'PAYOUT_AUTHORIZATION_URL is not set on this worker',
          'NotConfigured',
        );
      const { policy: rules } = await policy.current(input.brand);
      return askPayoutAuthorization(
        payoutAuthorization,
        payoutAuthorizationRequest(input, approvedBy, hashCpf, clock()),
        rules.payouts.authorizationOnNoAnswer,
      );
    },
  };
}
