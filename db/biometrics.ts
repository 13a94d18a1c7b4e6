import { recordLastBiometric } from './customers';
import { inTransaction, type Pool } from './pool';

// The biometric identifications table: one row per run of a biometrics flow, written by its
// activities (the link when issued, then the outcome). The person's last outcome is also kept on
// their customers row, which is what the API and the back office show.

export type BiometricOutcome = 'passed' | 'failed' | 'expired' | 'unavailable';

/** The link of a run was issued; idempotent (a retry keeps the first row). */
export async function recordBiometricLink(
  pool: Pool,
  r: { workflowId: string; runId: string; cpfHash: string; linkIssuedAt: Date },
): Promise<void> {
  await pool.query(
    `INSERT INTO biometric_identifications (workflow_id, run_id, cpf_hash, link_issued_at)
     VALUES ($1, $2, $3, $4)
     ON CONFLICT (workflow_id, run_id) DO NOTHING`,
    [r.workflowId, r.runId, r.cpfHash, r.linkIssuedAt],
  );
}

/**
 * How a run ended; idempotent. The person's last identification (customers) moves with it in the
 * same transaction; a run that never reached the person (`unavailable`) is no identification.
 */
export async function recordBiometricOutcome(
  pool: Pool,
  r: {
    workflowId: string;
    runId: string;
    cpfHash: string;
    linkIssuedAt: Date | null;
    outcome: BiometricOutcome;
    reason: string | null;
    finishedAt: Date;
  },
): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query(
      `INSERT INTO biometric_identifications (workflow_id, run_id, cpf_hash, link_issued_at, outcome, reason, finished_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (workflow_id, run_id) DO UPDATE SET
         outcome = EXCLUDED.outcome, reason = EXCLUDED.reason, finished_at = EXCLUDED.finished_at,
         link_issued_at = COALESCE(biometric_identifications.link_issued_at, EXCLUDED.link_issued_at)`,
      [r.workflowId, r.runId, r.cpfHash, r.linkIssuedAt, r.outcome, r.reason, r.finishedAt],
    );
    if (r.outcome !== 'unavailable') {
      await recordLastBiometric(client, { cpfHash: r.cpfHash, outcome: r.outcome, at: r.finishedAt });
    }
  });
}

/**
 * Whether this run of the biometrics flow recorded this outcome for this person, finishing at or
 * after `finishedFrom` (what proves a step-up's outcome signal to the withdrawal that asked).
 */
export async function identificationEndedAs(
  pool: Pool,
  r: { workflowId: string; runId: string; cpfHash: string; outcome: string; finishedFrom: string },
): Promise<boolean> {
  const { rowCount } = await pool.query(
    `SELECT 1 FROM biometric_identifications
      WHERE workflow_id = $1 AND run_id = $2 AND cpf_hash = $3 AND outcome = $4 AND finished_at >= $5`,
    [r.workflowId, r.runId, r.cpfHash, r.outcome, r.finishedFrom],
  );
  return Boolean(rowCount);
}
