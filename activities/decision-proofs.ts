import { Context, log } from '@temporalio/activity';
import type { DecisionCheck, DecisionClaim, DecisionRefusal } from '../contracts/decision';
import { findDecision, recordRefusedDecision, useDecision } from '../db/operator-decisions';
import type { ActivityDeps } from './deps';

// The check a flow makes before it takes an operator's decision: the record the API or back
// office wrote when it authenticated the operator must exist, name this flow, this kind, this
// operator, this decision and reason, and not have been taken before. Anything else changes
// nothing, and is logged and counted.

const sameReason = (a: string | null | undefined, b: string | null | undefined) =>
  (a?.trim() || null) === (b?.trim() || null);

export function createDecisionProofActivities({ pool }: Pick<ActivityDeps, 'pool'>) {
  return {
    /** Proves a decision from its record; a refusal is counted in refused_decisions. */
    async verifyDecision(claim: DecisionClaim): Promise<DecisionCheck> {
      const { workflowExecution: run, activityId } = Context.current().info;
      if (!run) throw new Error('verifyDecision runs for a workflow only');
      const site = { workflowId: run.workflowId, runId: run.runId, activityId };
      const cause = await (async (): Promise<DecisionRefusal | undefined> => {
        if (!claim.decisionId) return 'unproven';
        const record = await findDecision(pool, claim.decisionId);
        if (!record) return 'unknown';
        if (
          record.workflowId !== site.workflowId ||
          record.kind !== claim.kind ||
          record.operatorEmail !== claim.operator.toLowerCase() ||
          record.decision !== claim.decision ||
          !sameReason(record.reason, claim.reason)
        )
          return 'mismatch';
        return (await useDecision(pool, record.id, site)) ? undefined : 'replayed';
      })();
      if (!cause) return { proven: true };
      await recordRefusedDecision(pool, site, claim.kind, cause);
      // No operator, no CPF: the flow and why are enough to find the attempt.
      log.warn('decision refused', { workflowId: site.workflowId, kind: claim.kind, cause });
      return { proven: false, cause };
    },
  };
}
