import { ApplicationFailure } from '@temporalio/activity';
import { maskCpf } from '../common/mask';
import type { CollectingConnector, PixReturn, ReturnOperations } from '../connectors/types';
import { depositWorkflowId, FIRST_CONNECTOR } from '../contracts/deposit';
import type { ReversalCheck, ReversalCheckResult } from '../contracts/deposit-reversal';
import { type NewReversal, recordReversal, reversibleDeposit } from '../db/deposit-reversals';
import { inTransaction } from '../db/pool';
import type { ActivityDeps } from './deps';

// A deposit's reversals (docs/flows.md): the PSP that received the deposit's Pix is asked what
// returns it holds of it, and each one pixflow did not ask for is recorded with its event. The
// webhook that woke the check is never read for money: only the connector's answer is.

/** A return the payer's side started (MED), whoever's id it carries. */
const MED_NATURES: ReadonlySet<string> = new Set(['med_operational', 'med_fraud', 'med_automatic']);

/** Whether a return of the deposit's Pix is a reversal: MED, or an id pixflow never asked for. */
export function isReversal(ret: Pick<PixReturn, 'nature' | 'returnId'>, ownReturnId?: string): boolean {
  return MED_NATURES.has(ret.nature) || ret.returnId !== ownReturnId;
}

type CanLookUpReceived = CollectingConnector & Pick<ReturnOperations, 'lookUpReceivedPix'>;
const looksUpReceived = (c: CollectingConnector | undefined): c is CanLookUpReceived =>
  typeof c?.lookUpReceivedPix === 'function';

export function createDepositReversalActivities({
  pool,
  collectors,
}: Pick<ActivityDeps, 'pool' | 'collectors'>) {
  return {
    /**
     * Looks at one received Pix of a deposit again and records its unrequested returns. A deposit
     * that is not completed, not paid by that Pix, or on a connector that cannot tell its returns
     * records nothing. A connector unreachable fails the activity, which Temporal retries.
     */
    async checkDepositReversals(check: ReversalCheck): Promise<ReversalCheckResult> {
      const none: ReversalCheckResult = { recorded: 0, updated: 0 };
      const deposit = await reversibleDeposit(pool, depositWorkflowId(check.txid));
      // A return pixflow asked for is the deposit's own flow's (returned); only a credited one reverses.
      if (deposit?.status !== 'completed' || !deposit.e2eId) return none;
      if (deposit.e2eId !== check.e2eId) return none;
      const name = deposit.connector ?? FIRST_CONNECTOR;
      const connector = collectors?.collector(name);
      if (!connector) {
        // Configured elsewhere, or removed: a worker that has it may take the retry.
        throw ApplicationFailure.retryable(
          `connector ${name} is not configured on this worker`,
          'NotConfigured',
        );
      }
      if (!looksUpReceived(connector)) return none;
      const received = await connector.lookUpReceivedPix(deposit.e2eId);
      if (!received) return none;
      const payerCpfMasked = received.payerCpf ? maskCpf(received.payerCpf) : null;
      const result = { ...none };
      for (const ret of received.returns) {
        if (!isReversal(ret, deposit.ownReturnId)) continue;
        const reversal: NewReversal = {
          deposit,
          connector: name,
          e2eId: deposit.e2eId,
          returnId: ret.returnId,
          nature: ret.nature,
          amountCentavos: ret.amountCentavos,
          state: ret.state,
          payerCpfMasked,
          ...(ret.state !== 'processing' && ret.returnedAt ? { settledAt: ret.returnedAt } : {}),
        };
        const outcome = await inTransaction(pool, (client) => recordReversal(client, reversal));
        if (outcome === 'recorded') result.recorded++;
        if (outcome === 'updated') result.updated++;
      }
      return result;
    },
  };
}
