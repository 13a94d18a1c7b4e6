import { Context, log } from '@temporalio/activity';
import type { DecisionCheck, DecisionClaim, DecisionRefusal } from '../contracts/decision';
import { identificationEndedAs } from '../db/biometrics';
import { type CheckSite, findDecision, recordRefusedDecision, useDecision } from '../db/operator-decisions';
import type { ActivityDeps } from './deps';

// The check a flow makes before it takes an operator's decision: the record the API or back
// office wrote when it authenticated the operator must exist, name this flow, this kind, this
// operator, this decision and reason, and not have been taken before. Anything else changes
// nothing, and is logged and counted.

const sameReason = (a: string | null | undefined, b: string | null | undefined) =>
  (a?.trim() || null) === (b?.trim() || null);

/** What a withdrawal is told of its step-up: the identification run that ended, and how. */
export interface StepUpClaim {
  cpf: string;
  biometricsWorkflowId: string;
  runId: string;
  outcome: string;
  /** When the withdrawal was asked: its identification ended after. */
  askedAt: string;
}

export function createDecisionProofActivities({
  pool,
  hashCpf,
  countRefusedDecision,
}: Pick<ActivityDeps, 'pool' | 'hashCpf' | 'countRefusedDecision'>) {
  const siteOf = () => {
    const { workflowExecution: run, activityId } = Context.current().info;
    if (!run) throw new Error('a decision is checked for a workflow only');
    return { workflowId: run.workflowId, runId: run.runId, activityId };
  };
  const refuse = async (
    site: CheckSite,
    kind: DecisionClaim['kind'] | 'withdrawal.step_up',
    cause: DecisionRefusal,
  ): Promise<DecisionCheck> => {
    await recordRefusedDecision(pool, site, kind, cause);
    countRefusedDecision?.(kind, cause);
    // No operator, no CPF: the flow and why are enough to find the attempt.
    log.warn('decision refused', { workflowId: site.workflowId, kind, cause });
    return { proven: false, cause };
  };
  return {
    /** Proves a decision from its record; a refusal is counted in refused_decisions. */
    async verifyDecision(claim: DecisionClaim): Promise<DecisionCheck> {
      const site = siteOf();
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
      return cause ? refuse(site, claim.kind, cause) : { proven: true };
    },

    /**
     * Proves a step-up's outcome signal: the identification the withdrawal asked for recorded this
     * outcome for this person (its biometric_identifications row, written before it signals),
     * and ended after the withdrawal was asked.
     */
    async verifyStepUpOutcome(claim: StepUpClaim): Promise<DecisionCheck> {
      const site = siteOf();
      const ended = await identificationEndedAs(pool, {
        workflowId: claim.biometricsWorkflowId,
        runId: claim.runId,
        cpfHash: hashCpf(claim.cpf),
        outcome: claim.outcome,
        finishedFrom: claim.askedAt,
      });
      return ended ? { proven: true } : refuse(site, 'withdrawal.step_up', 'unknown');
    },
  };
}
