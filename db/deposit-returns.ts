import { flowVisibleSql } from './operator-brands';
import type { Pool } from './pool';

// The deposits whose money the back office may still send back to their payers: a closed
// account's completed deposits, received by a connector that returns received Pix.

/** A completed deposit of the person's that its connector may still send back to the payer. */
export interface ReturnableDeposit {
  /** The deposit's workflow id, which names its brand: its return is started under that brand. */
  workflowId: string;
  brandId: string;
  txid: string;
  amountCentavos: number;
  merchant: string;
  connector: string;
  e2eId: string;
  /** The row's seq and details: the return's rows follow the one, keep the other. */
  seq: number;
  details: Record<string, unknown>;
  completedAt: string;
}

/**
 * The person's completed deposits on a connector other than `notReturning` (the first provider,
 * which returns no received Pix), newest first: a deposit whose return was asked is no longer
 * `completed`, so it is not among them.
 */
export async function returnableDeposits(
  pool: Pool,
  cpfHash: string,
  notReturning: string,
  /** Only these brands' deposits (db/operator-brands.ts); every brand's when null or absent. */
  brands: string[] | null = null,
): Promise<ReturnableDeposit[]> {
  const { rows } = await pool.query(
    `SELECT workflow_id, brand_id, business_id, amount_centavos, merchant, details, seq, updated_at FROM flows f
      WHERE type = 'deposit' AND cpf_hash = $1 AND status = 'completed'
        AND COALESCE(details->>'connector', $2) <> $2 AND COALESCE(details->>'e2eId', '') <> ''
        AND ${flowVisibleSql('$3')}
      ORDER BY updated_at DESC LIMIT 200`,
    [cpfHash, notReturning, brands],
  );
  return rows.map((r) => ({
    workflowId: r.workflow_id as string,
    brandId: r.brand_id as string,
    txid: r.business_id as string,
    amountCentavos: Number(r.amount_centavos),
    merchant: (r.merchant as string | null) ?? '',
    connector: r.details.connector as string,
    e2eId: r.details.e2eId as string,
    seq: Number(r.seq),
    details: r.details as Record<string, unknown>,
    completedAt: (r.updated_at as Date).toISOString(),
  }));
}
