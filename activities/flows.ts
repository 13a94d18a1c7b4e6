import { maskCpf } from '../common/mask';
import type { FlowRecord } from '../contracts/shared';
import type { ActivityDeps } from './deps';

export function createFlowActivities({
  pool,
  hashCpf,
  clock,
}: Pick<ActivityDeps, 'pool' | 'hashCpf' | 'clock'>) {
  return {
    /** Upserts the flow's row; idempotent, and never moves a row back to an older state. */
    async recordFlow(r: FlowRecord): Promise<void> {
      await pool.query(
        `INSERT INTO flows (workflow_id, type, business_id, status, cpf_hash, cpf_masked, merchant, amount_centavos,
                            reason, details, seq, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)
         ON CONFLICT (workflow_id) DO UPDATE SET
           status = EXCLUDED.status, reason = EXCLUDED.reason, details = EXCLUDED.details,
           amount_centavos = COALESCE(EXCLUDED.amount_centavos, flows.amount_centavos),
           seq = EXCLUDED.seq, updated_at = EXCLUDED.updated_at
         WHERE flows.seq < EXCLUDED.seq
            -- A flow whose id is reused by a new run (biometrics) names its run: the new run's rows win.
            OR flows.details->>'runId' IS DISTINCT FROM EXCLUDED.details->>'runId'`,
        [
          r.workflowId,
          r.type,
          // A person's flows have the person's CPF as business id: the table keeps its keyed hash.
          r.type === 'onboarding' || r.type === 'biometrics' ? hashCpf(r.businessId) : r.businessId,
          r.status,
          r.cpf ? hashCpf(r.cpf) : null,
          r.cpf ? maskCpf(r.cpf) : null,
          r.merchant ?? null,
          r.amountCentavos ?? null,
          r.reason ?? null,
          JSON.stringify(r.details ?? {}),
          r.seq,
          clock(),
        ],
      );
    },
  };
}
