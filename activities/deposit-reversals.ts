import { ApplicationFailure, heartbeat, sleep } from '@temporalio/activity';
import { maskCpf } from '../common/mask';
import type { CollectingConnector, PixReturn, ReturnOperations } from '../connectors/types';
import { depositReturnId, depositWorkflowId, FIRST_CONNECTOR } from '../contracts/deposit';
import {
  REVERSAL_SWEEP,
  type ReversalCheck,
  type ReversalCheckResult,
  type ReversalSweepBatch,
  type ReversalSweepCursor,
} from '../contracts/deposit-reversal';
import { DEFAULT_BRAND } from '../contracts/flow';
import {
  depositsToSweep,
  type NewReversal,
  type ReversibleDeposit,
  recordReversal,
  reversibleDeposit,
} from '../db/deposit-reversals';
import { inTransaction } from '../db/pool';
import {
  brandConnectorsReader,
  brandOfCallingFlow,
  brandOfWorkflowId,
  brandWithoutAccount,
} from './brand-connectors';
import type { ActivityDeps } from './deps';

// A deposit's reversals (docs/connectors.md, API Pix webhooks): the PSP that received the
// deposit's Pix is asked what returns it holds of it, and each one pixflow did not ask for is
// recorded with its event. The webhook that woke the check is never read for money: only the
// connector's answer is.

/** A return the payer's side started (MED), whoever's id it carries. */
const MED_NATURES: ReadonlySet<string> = new Set(['med_operational', 'med_fraud', 'med_automatic']);

/**
 * Whether a return of the deposit's Pix is a reversal: MED, or an id pixflow never asked for.
 * pixflow's own return id is known from the deposit's txid even before its row names it: a sweep
 * reading the Pix between the return's ask and its record must not take it for a reversal.
 */
export function isReversal(
  ret: Pick<PixReturn, 'nature' | 'returnId'>,
  txid: string,
  ownReturnId?: string,
): boolean {
  if (MED_NATURES.has(ret.nature)) return true;
  return ret.returnId !== depositReturnId(txid) && ret.returnId !== ownReturnId;
}

type CanLookUpReceived = CollectingConnector & Pick<ReturnOperations, 'lookUpReceivedPix'>;
const looksUpReceived = (c: CollectingConnector | undefined): c is CanLookUpReceived =>
  typeof c?.lookUpReceivedPix === 'function';

export function createDepositReversalActivities({
  pool,
  provider,
  collectors,
  connectorsFor,
  clock,
}: Pick<ActivityDeps, 'pool' | 'provider' | 'collectors' | 'connectorsFor' | 'clock'>) {
  const brands = brandConnectorsReader({ provider, collectors, connectorsFor });
  /**
   * The deposit's received Pix as its connector holds it, and each return of it that is a
   * reversal recorded. A deposit not completed, or on a connector that cannot tell its returns,
   * records nothing. A connector unreachable throws, for Temporal to retry. The connector is the
   * deposit's brand's (its workflow id names the brand), never another brand's.
   */
  async function checkDeposit(deposit: ReversibleDeposit): Promise<ReversalCheckResult> {
    const result: ReversalCheckResult = { recorded: 0, updated: 0 };
    // A return pixflow asked for is the deposit's own flow's (returned); only a credited one reverses.
    if (deposit.status !== 'completed' || !deposit.e2eId) return result;
    const name = deposit.connector ?? FIRST_CONNECTOR;
    const brand = brandOfWorkflowId(deposit.workflowId);
    const connector = (await brands.of(brand)).collectors.collector(name);
    if (!connector && brand !== DEFAULT_BRAND) throw brandWithoutAccount(brand, name);
    if (!connector) {
      // Configured elsewhere, or removed: a worker that has it may take the retry.
      throw ApplicationFailure.retryable(
        `connector ${name} is not configured on this worker`,
        'NotConfigured',
      );
    }
    if (!looksUpReceived(connector)) return result;
    const received = await connector.lookUpReceivedPix(deposit.e2eId);
    if (!received) return result;
    const payerCpfMasked = received.payerCpf ? maskCpf(received.payerCpf) : null;
    for (const ret of received.returns) {
      if (!isReversal(ret, deposit.txid, deposit.ownReturnId)) continue;
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
  }

  return {
    /** Looks at one received Pix of a deposit again (the webhook named it) and records its reversals. */
    async checkDepositReversals(check: ReversalCheck): Promise<ReversalCheckResult> {
      // The deposit of the brand the check runs for (deposit-reversals-<txid>, scoped as it is).
      const deposit = await reversibleDeposit(pool, depositWorkflowId(check.txid, brandOfCallingFlow()));
      // Only the Pix that paid the deposit: a webhook naming another is not this deposit's news.
      if (!deposit || deposit.e2eId !== check.e2eId) return { recorded: 0, updated: 0 };
      return checkDeposit(deposit);
    },

    /**
     * One batch of the sweep: the next completed deposits of connectors other than the first
     * provider, within the window, each looked at again at the sweep's rate. A deposit whose
     * connector fails is left for the next pass over the window, not retried here.
     */
    async sweepDepositReversals(after: ReversalSweepCursor | null): Promise<ReversalSweepBatch> {
      const batch = await depositsToSweep(pool, {
        since: new Date(clock().getTime() - REVERSAL_SWEEP.windowMs),
        ...(after ? { after } : {}),
        except: FIRST_CONNECTOR,
        limit: REVERSAL_SWEEP.batch,
      });
      let recorded = 0;
      for (const [i, deposit] of batch.entries()) {
        if (i > 0) await sleep(1_000 / REVERSAL_SWEEP.perSecond);
        heartbeat(i);
        recorded += await checkDeposit(deposit).then(
          (r) => r.recorded,
          () => 0,
        );
      }
      const last = batch.at(-1);
      return {
        checked: batch.length,
        recorded,
        ...(last && batch.length === REVERSAL_SWEEP.batch
          ? { next: { updatedUs: last.updatedUs, workflowId: last.workflowId } }
          : {}),
      };
    },
  };
}
