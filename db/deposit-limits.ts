import type pg from 'pg';

// A person's deposit limits and what they count (migration 1732000000020): the limits per period
// with their pending change, and the sums of the person's deposits per São Paulo day, ISO week
// and month. Callers pass keyed CPF hashes, never a CPF.

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** The calendar the limits count in (as the payout limit: Brasília time). */
export const DEPOSIT_LIMIT_ZONE = 'America/Sao_Paulo';

export interface DepositLimitRow {
  period: string;
  limitCentavos: number | null;
  /** The change that waits for the cooling-off: its limit (null: removing it) and when it applies. */
  pending: { limitCentavos: number | null; appliesAt: Date } | null;
}

export async function readDepositLimits(db: Queryable, cpfHash: string): Promise<DepositLimitRow[]> {
  const { rows } = await db.query(
    `SELECT period, limit_centavos, pending_centavos, pending_applies_at
       FROM deposit_limits WHERE cpf_hash = $1`,
    [cpfHash],
  );
  return rows.map((r) => ({
    period: r.period,
    limitCentavos: r.limit_centavos,
    pending: r.pending_applies_at
      ? { limitCentavos: r.pending_centavos, appliesAt: r.pending_applies_at as Date }
      : null,
  }));
}

export async function writeDepositLimit(
  db: Queryable,
  cpfHash: string,
  row: DepositLimitRow,
  at: Date,
): Promise<void> {
  await db.query(
    `INSERT INTO deposit_limits (cpf_hash, period, limit_centavos, pending_centavos, pending_applies_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (cpf_hash, period) DO UPDATE SET
       limit_centavos = EXCLUDED.limit_centavos, pending_centavos = EXCLUDED.pending_centavos,
       pending_applies_at = EXCLUDED.pending_applies_at, updated_at = EXCLUDED.updated_at`,
    [
      cpfHash,
      row.period,
      row.limitCentavos,
      row.pending?.limitCentavos ?? null,
      row.pending?.appliesAt ?? null,
      at,
    ],
  );
}

export interface PeriodSum {
  start: Date;
  end: Date;
  totalCentavos: number;
}

/**
 * The person's deposits in the day, ISO week (Monday to Sunday) and month that hold `now`, São
 * Paulo time: the deposits' flows rows not in one of `notCounted`, and the reservations younger
 * than `graceMs` whose deposit has no flows row yet.
 */
export async function depositsByPeriod(
  db: Queryable,
  p: { cpfHash: string; now: Date; notCounted: readonly string[]; graceMs: number },
): Promise<Record<'daily' | 'weekly' | 'monthly', PeriodSum>> {
  const z = DEPOSIT_LIMIT_ZONE;
  const { rows } = await db.query(
    `WITH local AS (SELECT $2::timestamptz AT TIME ZONE '${z}' AS t),
          b AS (
       SELECT date_trunc('day', t) AT TIME ZONE '${z}' AS day_start,
              (date_trunc('day', t) + interval '1 day') AT TIME ZONE '${z}' AS day_end,
              date_trunc('week', t) AT TIME ZONE '${z}' AS week_start,
              (date_trunc('week', t) + interval '1 week') AT TIME ZONE '${z}' AS week_end,
              date_trunc('month', t) AT TIME ZONE '${z}' AS month_start,
              (date_trunc('month', t) + interval '1 month') AT TIME ZONE '${z}' AS month_end
         FROM local),
          counted AS (
       SELECT f.amount_centavos AS amount, f.created_at AS at FROM flows f, b
        WHERE f.type = 'deposit' AND f.cpf_hash = $1 AND f.status <> ALL($3::text[])
          AND f.created_at >= LEAST(b.week_start, b.month_start)
       UNION ALL
       SELECT r.amount_centavos, r.created_at FROM deposit_limit_reservations r
        WHERE r.cpf_hash = $1 AND r.created_at > $2::timestamptz - $4::bigint * interval '1 millisecond'
          AND NOT EXISTS (SELECT 1 FROM flows f WHERE f.workflow_id = r.workflow_id))
     SELECT b.*,
            COALESCE(sum(c.amount) FILTER (WHERE c.at >= b.day_start AND c.at < b.day_end), 0)::bigint AS daily,
            COALESCE(sum(c.amount) FILTER (WHERE c.at >= b.week_start AND c.at < b.week_end), 0)::bigint AS weekly,
            COALESCE(sum(c.amount) FILTER (WHERE c.at >= b.month_start AND c.at < b.month_end), 0)::bigint AS monthly
       FROM b LEFT JOIN counted c ON true
      GROUP BY b.day_start, b.day_end, b.week_start, b.week_end, b.month_start, b.month_end`,
    [p.cpfHash, p.now, [...p.notCounted], p.graceMs],
  );
  const r = rows[0];
  return {
    daily: { start: r.day_start, end: r.day_end, totalCentavos: Number(r.daily) },
    weekly: { start: r.week_start, end: r.week_end, totalCentavos: Number(r.weekly) },
    monthly: { start: r.month_start, end: r.month_end, totalCentavos: Number(r.monthly) },
  };
}

/** Whether a deposit (by workflow id) was reserved or has a flows row already: a repeat of its start. */
export async function depositKnown(db: Queryable, workflowId: string): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM deposit_limit_reservations WHERE workflow_id = $1
     UNION ALL SELECT 1 FROM flows WHERE workflow_id = $1`,
    [workflowId],
  );
  return rows.length > 0;
}

/** Reserves a deposit's amount; the person's reservations older than `staleBefore` go (they no longer count). */
export async function reserveDeposit(
  db: Queryable,
  r: { workflowId: string; cpfHash: string; amountCentavos: number; at: Date; staleBefore: Date },
): Promise<void> {
  await db.query('DELETE FROM deposit_limit_reservations WHERE cpf_hash = $1 AND created_at < $2', [
    r.cpfHash,
    r.staleBefore,
  ]);
  await db.query(
    `INSERT INTO deposit_limit_reservations (workflow_id, cpf_hash, amount_centavos, created_at)
     VALUES ($1, $2, $3, $4) ON CONFLICT (workflow_id) DO NOTHING`,
    [r.workflowId, r.cpfHash, r.amountCentavos, r.at],
  );
}
