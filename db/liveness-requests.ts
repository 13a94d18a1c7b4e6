import type { Pool } from './pool';

// The liveness requests pixflow made (db/migrations/1732000000014_liveness_requests.sql): written
// by the activities that ask for a liveness link, read by the webhook ingress to tell a callback
// that answers one of them from one that answers nothing pixflow asked for.

export type LivenessRequestFlow = 'onboarding' | 'biometrics';

/**
 * A request about to be sent. Written before the provider is called, so a callback naming its
 * correlation_id is known however soon it comes. Idempotent: a retry keeps the first row.
 */
export async function recordLivenessRequest(
  pool: Pool,
  r: {
    correlationId: string;
    workflowId: string;
    flow: LivenessRequestFlow;
    cpfHash: string;
    requestedAt: Date;
  },
): Promise<void> {
  await pool.query(
    `INSERT INTO liveness_requests (correlation_id, workflow_id, flow, cpf_hash, requested_at)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (correlation_id) DO NOTHING`,
    [r.correlationId, r.workflowId, r.flow, r.cpfHash, r.requestedAt],
  );
}

/**
 * The provider's answer to a request: its transaction_id. Idempotent; a retried call that the
 * provider answered again keeps the latest id (its callbacks name the latest call).
 */
export async function recordLivenessAnswer(
  pool: Pool,
  r: { correlationId: string; transactionId: string; answeredAt: Date },
): Promise<void> {
  await pool.query(
    'UPDATE liveness_requests SET transaction_id = $2, answered_at = $3 WHERE correlation_id = $1',
    [r.correlationId, r.transactionId, r.answeredAt],
  );
}

/** Whether this flow made a request with this correlation_id or this (non-empty) transaction_id. */
export async function namesLivenessRequest(
  pool: Pool,
  q: { workflowId: string; correlationId?: string | undefined; transactionId?: string | undefined },
): Promise<boolean> {
  const { rows } = await pool.query(
    `SELECT 1 FROM liveness_requests
     WHERE workflow_id = $1 AND (correlation_id = $2 OR (transaction_id = $3 AND $3 <> ''))
     LIMIT 1`,
    [q.workflowId, q.correlationId ?? null, q.transactionId ?? null],
  );
  return rows.length > 0;
}
