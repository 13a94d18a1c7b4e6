import { Context } from '@temporalio/activity';
import type pg from 'pg';
import { maskCpf } from '../common/mask';
import { verificationOf } from '../contracts/customer';
import type { FlowRecord } from '../contracts/flow';
import { recordVerification } from '../db/customers';
import { flowStateJsonSql } from '../db/events';
import { inTransaction, prepared } from '../db/pool';
import type { ActivityDeps } from './deps';

// The row's upsert, and in the same statement its event when the status changed (or a new run
// of the id began): the outbox entry exists exactly when the change does.
const UPSERT_FLOW = `WITH prev AS (SELECT status, run_id FROM flows WHERE workflow_id = $1),
       up AS (
         INSERT INTO flows (workflow_id, type, business_id, status, cpf_hash, cpf_masked, merchant, amount_centavos,
                            reason, details, seq, created_at, updated_at, run_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $13)
         ON CONFLICT (workflow_id) DO UPDATE SET
           status = EXCLUDED.status, reason = EXCLUDED.reason, details = EXCLUDED.details,
           amount_centavos = COALESCE(EXCLUDED.amount_centavos, flows.amount_centavos),
           seq = EXCLUDED.seq, updated_at = EXCLUDED.updated_at, run_id = COALESCE(EXCLUDED.run_id, flows.run_id)
         WHERE flows.seq < EXCLUDED.seq
            -- A new run of the same id (an onboarding started again, each biometric
            -- identification) counts from 1 again; the previous run has closed, so its rows lose.
            OR flows.run_id <> EXCLUDED.run_id
         RETURNING *)
  SELECT pixflow_append_event(up.type || '.' || up.status, up.workflow_id, up.type, up.business_id,
                              ${flowStateJsonSql('up')})
    FROM up LEFT JOIN prev ON true
   WHERE prev.status IS DISTINCT FROM up.status OR prev.run_id IS DISTINCT FROM up.run_id`;
const upsertFlow = prepared('upsert-flow', UPSERT_FLOW);

/** The run that writes, when called as an activity (deposits and withdrawals also call it directly). */
function currentRunId(): string | null {
  try {
    return Context.current().info.workflowExecution?.runId ?? null;
  } catch {
    return null;
  }
}

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** The row's parameters for UPSERT_FLOW: the CPF only as its keyed hash and masked form. */
function flowParams(r: FlowRecord, hashCpf: (cpf: string) => string, at: Date, run: string | null) {
  return [
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
    at,
    run,
  ];
}

/** Upserts a flow's row inside a caller's transaction (a payout's reservation under its rules). */
export async function upsertFlowRow(
  db: Queryable,
  r: FlowRecord,
  deps: Pick<ActivityDeps, 'hashCpf' | 'clock'>,
): Promise<void> {
  await db.query(upsertFlow(flowParams(r, deps.hashCpf, deps.clock(), currentRunId())));
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
      const params = flowParams(r, hashCpf, at, run);
      const verification = r.type === 'onboarding' ? verificationOf(r.status) : undefined;
      if (!verification || !r.cpf) {
        await pool.query(upsertFlow(params));
        return;
      }
      const cpf = r.cpf;
      await inTransaction(pool, async (client) => {
        await client.query(upsertFlow(params));
        await recordVerification(client, {
          cpfHash: hashCpf(cpf),
          cpfMasked: maskCpf(cpf),
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
