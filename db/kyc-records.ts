import type pg from 'pg';

// The registry's full answers (kyc_records): one per asking flow and plan, kept as the registry
// sent it, by the person's keyed CPF hash.

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** Keeps the registry's answer for this flow and plan; asked again, the newer answer replaces it. */
export async function recordKycAnswer(
  db: Queryable,
  a: { workflowId: string; plan: string; cpfHash: string; record: unknown },
): Promise<void> {
  await db.query(
    `INSERT INTO kyc_records (workflow_id, plan, cpf_hash, record) VALUES ($1, $2, $3, $4)
     ON CONFLICT (workflow_id, plan) DO UPDATE SET record = EXCLUDED.record, received_at = now()`,
    [a.workflowId, a.plan, a.cpfHash, JSON.stringify(a.record)],
  );
}
