import { type DecisionKind, recordDecision } from '../../db/operator-decisions';
import type { Pool } from '../../db/pool';

/**
 * A decision as the API or back office sends it: recorded first (as an API key's caller), then
 * carrying its record's id, which the flow checks before it counts it.
 */
export async function provenDecision<const D extends { decision: string; reason?: string | undefined }>(
  pool: Pool,
  workflowId: string,
  kind: DecisionKind,
  operator: string,
  d: D,
): Promise<D & { decisionId: string }> {
  const decisionId = await recordDecision(pool, {
    workflowId,
    kind,
    decision: d.decision,
    reason: d.reason,
    operatorId: null,
    operatorEmail: operator,
    operatorRole: 'api_key',
    authenticatedBy: 'api_key:test',
  });
  return { ...d, decisionId };
}
