import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import { UnclassifiedAnswerError } from '../connectors/errors';
import { type ProviderNotification, providerNotificationSignal } from '../contracts/flow';
import { depositConnectors } from '../db/connector-breakers';
import { claimDueChecks, countDueChecks, type DueCheck } from '../db/reconciliation';
import { brandConnectorsReader, brandOfWorkflowId } from './brand-connectors';
import { connectorOfDeposit } from './deposit-routing';
import type { ActivityDeps, ReconciliationSettings } from './deps';
import { unclassifiedNotice } from './errors';

export type { ReconciliationSettings };

// Reconciliation, the backstop for a lost provider notification. A deposit waiting for its
// payment and a payout waiting for its outcome are looked up on a back-off schedule by one sweep
// with a rate of its own, outside the flows: an open flow costs no timer, no activity and no
// workflow task while it waits, so however many are open, the new payments' tasks have the worker
// and the server to themselves. Only a flow found settled is told (a `providerNotification`
// hint, as the ingress would send); the flow then proves the outcome with its own inquiry.

/** What one sweep did, kept in the reconciler's history. */
export interface SweepResult {
  checked: number;
  /** Settled at the provider while the flow still waited: a notification was lost (or late). */
  found: number;
  failed: number;
  /** Due rows left for the next sweep: the sweep is behind its schedule by this many. */
  backlog: number;
  /** When the next sweep should run. */
  nextInMs: number;
}

const CONCURRENCY = 4;
/** A sweep that is not behind spreads its looks over this share of the interval. */
const SPREAD = 0.8;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createReconciliationActivities({
  provider,
  collectors,
  connectorsFor,
  pool,
  temporal,
  reconciliation,
  countUnclassified,
}: Pick<
  ActivityDeps,
  'provider' | 'collectors' | 'connectorsFor' | 'pool' | 'temporal' | 'reconciliation' | 'countUnclassified'
>) {
  const notice = unclassifiedNotice({ pool, countUnclassified });
  const brands = brandConnectorsReader({ provider, collectors, connectorsFor });
  /**
   * Whether the provider has settled the flow's money; an unknown transaction has not, nor has
   * one whose status no rule reads (told, and looked at again on the schedule). A deposit is
   * asked of the connector that made its charge (`connector`), and of no other; either is asked
   * at the flow's brand's account (its row's workflow id names the brand), never another's.
   */
  const settled = async (c: DueCheck, connector: string | undefined): Promise<boolean> => {
    const brand = brandOfWorkflowId(c.workflowId);
    try {
      if (c.type === 'deposit')
        return (
          (
            await connectorOfDeposit((await brands.of(brand)).collectors, connector, brand).lookUpDeposit(
              c.businessId,
            )
          ).state === 'paid'
        );
      const tx = await (await brands.provider(brand)).lookUpPayout(c.businessId);
      return tx.state === 'completed' || tx.state === 'failed';
    } catch (err) {
      if (!(err instanceof UnclassifiedAnswerError)) throw err;
      await notice(err, c.workflowId);
      return false;
    }
  };

  const tell = async (c: DueCheck) => {
    const hint: ProviderNotification = {
      type: c.type === 'deposit' ? 'deposit' : 'withdraw',
      action: 'updated',
      id: c.businessId,
      receivedAt: new Date().toISOString(),
      source: 'reconciliation',
    };
    try {
      await temporal.client.workflow.getHandle(c.workflowId).signal(providerNotificationSignal, hint);
    } catch (err) {
      // Closed meanwhile: it found its outcome by itself.
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
  };

  return {
    /**
     * One sweep: takes the due rows a sweep interval's worth of the rate allows, looks each up at
     * that rate when it took them all, or spread over the interval when there were fewer (a few at
     * a time), and tells the flows found settled. Idempotent: a hint twice is one more inquiry,
     * and a row is taken once per step of its schedule.
     */
    async reconcileDue(): Promise<SweepResult> {
      const { scheduleMs, maxPerSecond, intervalMs } = reconciliation;
      const budget = Math.max(1, Math.floor((maxPerSecond * intervalMs) / 1000));
      const due = await claimDueChecks(pool, scheduleMs, budget);
      const connectors = await depositConnectors(
        pool,
        due.filter((c) => c.type === 'deposit').map((c) => c.workflowId),
      );
      // Behind, at the full rate. Otherwise spread over the interval: the same looks, without a
      // burst at the start of every sweep for new payments to queue behind on the same cores.
      const behind = due.length >= budget;
      const spacingMs = Math.max(1000 / maxPerSecond, behind ? 0 : (intervalMs * SPREAD) / due.length);
      const result = { checked: 0, found: 0, failed: 0 };
      const started = Date.now();
      let next = 0;
      const lane = async (lane: number) => {
        for (let i = next++; i < due.length; i = next++) {
          const c = due[i] as DueCheck;
          // Paced from the sweep's start: `maxPerSecond` at most, whatever the provider's speed.
          await sleep(Math.max(0, i * spacingMs - (Date.now() - started)));
          Context.current().heartbeat({ lane, i });
          try {
            result.checked += 1;
            if (await settled(c, connectors.get(c.workflowId))) {
              result.found += 1;
              await tell(c);
              Context.current().log.info('reconciliation found a settled flow still waiting', {
                workflowId: c.workflowId,
                checks: c.checks,
              });
            }
          } catch (err) {
            result.failed += 1;
            Context.current().log.warn('reconciliation check failed', {
              workflowId: c.workflowId,
              error: err instanceof Error ? err.message : String(err),
            });
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(CONCURRENCY, due.length) }, (_, n) => lane(n)));
      const backlog = behind ? await countDueChecks(pool, scheduleMs) : 0;
      const elapsed = Date.now() - started;
      // Behind: go again at once; otherwise at the interval.
      return { ...result, backlog, nextInMs: backlog > 0 ? 0 : Math.max(0, intervalMs - elapsed) };
    },
  };
}
