import type pg from 'pg';
import { flowStateJsonSql, isoSql } from './events';
import { flowIdVisibleSql } from './operator-brands';

// A completed deposit's reversals (migration 1732000000029): returns of its received Pix that
// pixflow did not ask for. One row per (e2eId, return id); its `deposit.reversed` event is
// appended in the transaction that inserts the row, so it exists exactly once per return. The
// deposit's flows row keeps them all in `details.reversed`; its status is left as it was.

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** The event each new reversal appends (contracts/events.ts lists it with the rest). */
export const DEPOSIT_REVERSED = 'deposit.reversed';

/** A return's state as the PSP says it: `returned` and `failed` are final. */
export type ReversalState = 'processing' | 'returned' | 'failed';

/** A deposit as its reversals need it: from its flows row. */
export interface ReversibleDeposit {
  workflowId: string;
  txid: string;
  status: string;
  amountCentavos: number;
  cpfHash: string | null;
  cpfMasked: string | null;
  /** The received Pix's end-to-end id, once paid. */
  e2eId?: string;
  /** The connector that made its charge (unset before routing: the first provider). */
  connector?: string;
  /** The return pixflow itself asked for, if any (a held deposit's money sent back). */
  ownReturnId?: string;
}

const DEPOSIT_COLUMNS =
  'workflow_id, business_id, status, amount_centavos, cpf_hash, cpf_masked, details, updated_at';

export async function reversibleDeposit(
  db: Queryable,
  workflowId: string,
): Promise<ReversibleDeposit | undefined> {
  const { rows } = await db.query(
    `SELECT ${DEPOSIT_COLUMNS} FROM flows WHERE workflow_id = $1 AND type = 'deposit'`,
    [workflowId],
  );
  return rows[0] ? depositOf(rows[0]) : undefined;
}

/**
 * The sweep's next batch: completed deposits paid through a connector other than `except` (the
 * first provider tells no returns), last changed since `since`, after the cursor, in that order.
 */
export async function depositsToSweep(
  db: Queryable,
  f: { since: Date; after?: { updatedUs: string; workflowId: string }; except: string; limit: number },
): Promise<Array<ReversibleDeposit & { updatedUs: string }>> {
  // Microseconds as integer interval arithmetic, as flows pages do: no row skipped or read twice.
  const { rows } = await db.query(
    `SELECT ${DEPOSIT_COLUMNS}, (extract(epoch FROM updated_at) * 1000000)::bigint AS updated_us FROM flows
      WHERE type = 'deposit' AND status = 'completed' AND updated_at >= $1
        AND details->>'connector' IS NOT NULL AND details->>'connector' <> $2 AND details->>'e2eId' <> ''
        AND ($3::bigint IS NULL
             OR (updated_at, workflow_id) > ('epoch'::timestamptz + $3::bigint * interval '1 microsecond', $4::text))
      ORDER BY updated_at, workflow_id LIMIT $5`,
    [f.since, f.except, f.after?.updatedUs ?? null, f.after?.workflowId ?? '', f.limit],
  );
  return rows.map((r) => ({ ...depositOf(r), updatedUs: String(r.updated_us) }));
}

// biome-ignore lint/suspicious/noExplicitAny: a pg row
function depositOf(r: any): ReversibleDeposit {
  const details = (r.details ?? {}) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const own = details.return as { returnId?: unknown } | undefined;
  return {
    workflowId: r.workflow_id,
    txid: r.business_id,
    status: r.status,
    amountCentavos: Number(r.amount_centavos ?? 0),
    cpfHash: r.cpf_hash,
    cpfMasked: r.cpf_masked,
    e2eId: text(details.e2eId),
    connector: text(details.connector),
    ownReturnId: text(own?.returnId),
  };
}

export interface NewReversal {
  deposit: ReversibleDeposit;
  connector: string;
  e2eId: string;
  returnId: string;
  nature: string;
  amountCentavos: number;
  state: ReversalState;
  payerCpfMasked: string | null;
  /** When the PSP says it settled (returned or failed). */
  settledAt?: string;
}

/** The reversals of a deposit as its row and events show them (`r`: a deposit_reversals row). */
const reversalJsonSql = (r: string) => `jsonb_build_object(
  'e2eId', ${r}.e2e_id, 'returnId', ${r}.return_id, 'nature', ${r}.nature,
  'amountCentavos', ${r}.amount_centavos, 'partial', ${r}.partial, 'state', ${r}.state,
  'firstSeenAt', ${isoSql(`${r}.first_seen_at`)},
  'settledAt', CASE WHEN ${r}.settled_at IS NULL THEN NULL ELSE ${isoSql(`${r}.settled_at`)} END)`;

/**
 * Records one return: a new one inserted (and its event appended), a known one moved to the state
 * the PSP says now (never back from a final state). Run in a transaction. Answers what happened.
 */
export async function recordReversal(
  client: pg.PoolClient,
  r: NewReversal,
): Promise<'recorded' | 'updated' | 'unchanged'> {
  const { deposit } = r;
  const { rows } = await client.query(
    `INSERT INTO deposit_reversals (e2e_id, return_id, txid, workflow_id, connector, nature, amount_centavos,
                                    partial, state, cpf_hash, cpf_masked, payer_cpf_masked, settled_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
     ON CONFLICT (e2e_id, return_id) DO UPDATE SET
       state = EXCLUDED.state, settled_at = EXCLUDED.settled_at, updated_at = now()
     WHERE deposit_reversals.state = 'processing' AND EXCLUDED.state <> 'processing'
     RETURNING (xmax = 0) AS inserted`,
    [
      r.e2eId,
      r.returnId,
      deposit.txid,
      deposit.workflowId,
      r.connector,
      r.nature,
      r.amountCentavos,
      r.amountCentavos < deposit.amountCentavos,
      r.state,
      deposit.cpfHash,
      deposit.cpfMasked,
      r.payerCpfMasked,
      r.settledAt ?? null,
    ],
  );
  const row = rows[0];
  if (!row) return 'unchanged';
  // The deposit's row shows every reversal; its status and sequence stay its flow's.
  await client.query(
    `UPDATE flows f SET details = f.details || jsonb_build_object('reversed',
        (SELECT jsonb_agg(${reversalJsonSql('d')} ORDER BY d.first_seen_at, d.return_id)
           FROM deposit_reversals d WHERE d.workflow_id = f.workflow_id))
      WHERE f.workflow_id = $1`,
    [deposit.workflowId],
  );
  if (!row.inserted) return 'updated';
  await client.query(
    `SELECT pixflow_append_event($3, f.workflow_id, f.type, f.business_id,
              jsonb_set(${flowStateJsonSql('f')}, '{details,reversal}', ${reversalJsonSql('d')}))
       FROM flows f JOIN deposit_reversals d ON d.workflow_id = f.workflow_id
      WHERE f.workflow_id = $4 AND d.e2e_id = $1 AND d.return_id = $2`,
    [r.e2eId, r.returnId, DEPOSIT_REVERSED, deposit.workflowId],
  );
  return 'recorded';
}

/** A reversal as the back office's queue lists it. */
export interface ReversalRow {
  e2eId: string;
  returnId: string;
  nature: string;
  amountCentavos: number;
  /** Less than the deposit's amount. */
  partial: boolean;
  state: ReversalState;
  firstSeenAt: string;
  settledAt?: string;
  txid: string;
  workflowId: string;
  connector: string;
  cpfHash: string | null;
  cpfMasked: string | null;
  payerCpfMasked: string | null;
}

// biome-ignore lint/suspicious/noExplicitAny: a pg row
const reversalOf = (r: any): ReversalRow => ({
  txid: r.txid,
  workflowId: r.workflow_id,
  connector: r.connector,
  e2eId: r.e2e_id,
  returnId: r.return_id,
  nature: r.nature,
  amountCentavos: Number(r.amount_centavos),
  partial: r.partial,
  state: r.state,
  cpfHash: r.cpf_hash,
  cpfMasked: r.cpf_masked,
  payerCpfMasked: r.payer_cpf_masked,
  firstSeenAt: (r.first_seen_at as Date).toISOString(),
  ...(r.settled_at ? { settledAt: (r.settled_at as Date).toISOString() } : {}),
});

/** The newest reversals first, with how many there are in all. */
export async function listReversals(
  db: Queryable,
  /** `brands`: only the deposits of these brands (db/operator-brands.ts); all when null or absent. */
  f: { limit: number; txid?: string; brands?: string[] | null },
): Promise<{ items: ReversalRow[]; total: number }> {
  const { rows } = await db.query(
    `SELECT *, count(*) OVER () AS total FROM deposit_reversals
      WHERE ($2::text IS NULL OR txid = $2) AND ${flowIdVisibleSql('$3', 'workflow_id')}
      ORDER BY first_seen_at DESC, return_id LIMIT $1`,
    [f.limit, f.txid ?? null, f.brands ?? null],
  );
  return { items: rows.map(reversalOf), total: Number(rows[0]?.total ?? 0) };
}

/** A deposit's reversals, oldest first (the alert's facts). */
export async function reversalsOf(db: Queryable, workflowId: string): Promise<ReversalRow[]> {
  const { rows } = await db.query(
    'SELECT * FROM deposit_reversals WHERE workflow_id = $1 ORDER BY first_seen_at, return_id',
    [workflowId],
  );
  return rows.map(reversalOf);
}
