import { Context } from '@temporalio/activity';
import { maskCpf } from '../common/mask';
import { verificationOf } from '../contracts/customer';
import type { FlowRecord } from '../contracts/shared';
import { recordVerification } from '../db/customers';
import { inTransaction } from '../db/pool';
import type { ActivityDeps } from './deps';

const UPSERT_FLOW = `INSERT INTO flows (workflow_id, type, business_id, status, cpf_hash, cpf_masked, merchant, amount_centavos,
                            reason, details, seq, created_at, updated_at, run_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $13)
         ON CONFLICT (workflow_id) DO UPDATE SET
           status = EXCLUDED.status, reason = EXCLUDED.reason, details = EXCLUDED.details,
           amount_centavos = COALESCE(EXCLUDED.amount_centavos, flows.amount_centavos),
           seq = EXCLUDED.seq, updated_at = EXCLUDED.updated_at, run_id = COALESCE(EXCLUDED.run_id, flows.run_id)
         WHERE flows.seq < EXCLUDED.seq
            -- A new run of the same id (an onboarding started again, each biometric
            -- identification) counts from 1 again; the previous run has closed, so its rows lose.
            OR flows.run_id <> EXCLUDED.run_id`;

/** The run that writes, when called as an activity (deposits and withdrawals also call it directly). */
function currentRunId(): string | null {
  try {
    return Context.current().info.workflowExecution?.runId ?? null;
  } catch {
    return null;
  }
}

export function createFlowActivities({
  pool,
  hashCpf,
  clock,
}: Pick<ActivityDeps, 'pool' | 'hashCpf' | 'clock'>) {
  return {
    /**
     * Upserts the flow's row; idempotent, and never moves a row back to an older state. An
     * onboarding's status change also sets the person's verification (customers), in the same
     * transaction, so the two never disagree.
     */
    async recordFlow(r: FlowRecord): Promise<void> {
      const at = clock();
      const run = currentRunId();
      const cpfHash = r.cpf ? hashCpf(r.cpf) : null;
      const cpfMasked = r.cpf ? maskCpf(r.cpf) : null;
      const params = [
        r.workflowId,
        r.type,
        // A person's flows have the person's CPF as business id: the table keeps its keyed hash.
        r.type === 'onboarding' || r.type === 'biometrics' ? hashCpf(r.businessId) : r.businessId,
        r.status,
        cpfHash,
        cpfMasked,
        r.merchant ?? null,
        r.amountCentavos ?? null,
        r.reason ?? null,
        JSON.stringify(r.details ?? {}),
        r.seq,
        at,
        run,
      ];
      const verification = r.type === 'onboarding' ? verificationOf(r.status) : undefined;
      if (!verification || !cpfHash || !cpfMasked) {
        await pool.query(UPSERT_FLOW, params);
        return;
      }
      await inTransaction(pool, async (client) => {
        await client.query(UPSERT_FLOW, params);
        await recordVerification(client, {
          cpfHash,
          cpfMasked,
          verification,
          at,
          flow: r.workflowId,
          run,
          seq: r.seq,
        });
      });
    },
  };
}
