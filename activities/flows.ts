import { Context } from '@temporalio/activity';
import type pg from 'pg';
import { maskCpf } from '../common/mask';
import { verificationOf } from '../contracts/customer';
import type { FlowRecord } from '../contracts/flow';
import { recordVerification } from '../db/customers';
import { type FlowRowWrite, upsertFlowAndEvent } from '../db/flows';
import { inTransaction } from '../db/pool';
import type { ActivityDeps } from './deps';

/** The run that writes, when called as an activity (deposits and withdrawals also call it directly). */
function currentRunId(): string | null {
  try {
    return Context.current().info.workflowExecution?.runId ?? null;
  } catch {
    return null;
  }
}

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** The flow's row as the table keeps it: the CPF only as its keyed hash and masked form. */
function flowRowOf(
  r: FlowRecord,
  hashCpf: (cpf: string) => string,
  at: Date,
  runId: string | null,
): FlowRowWrite {
  return {
    workflowId: r.workflowId,
    type: r.type,
    // A person's flows have the person's CPF as business id: the table keeps its keyed hash.
    businessId: r.type === 'onboarding' || r.type === 'biometrics' ? hashCpf(r.businessId) : r.businessId,
    status: r.status,
    cpfHash: r.cpf ? hashCpf(r.cpf) : null,
    cpfMasked: r.cpf ? maskCpf(r.cpf) : null,
    merchant: r.merchant ?? null,
    amountCentavos: r.amountCentavos ?? null,
    reason: r.reason ?? null,
    details: r.details ?? {},
    seq: r.seq,
    at,
    runId,
    ...(r.brand === undefined ? {} : { brandId: r.brand }),
  };
}

/** Upserts a flow's row inside a caller's transaction (a payout's reservation under its rules). */
export async function upsertFlowRow(
  db: Queryable,
  r: FlowRecord,
  deps: Pick<ActivityDeps, 'hashCpf' | 'clock'>,
): Promise<void> {
  await upsertFlowAndEvent(db, flowRowOf(r, deps.hashCpf, deps.clock(), currentRunId()));
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
      const row = flowRowOf(r, hashCpf, at, run);
      const verification = r.type === 'onboarding' ? verificationOf(r.status) : undefined;
      if (!verification || !r.cpf) {
        await upsertFlowAndEvent(pool, row);
        return;
      }
      const cpf = r.cpf;
      await inTransaction(pool, async (client) => {
        await upsertFlowAndEvent(client, row);
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
