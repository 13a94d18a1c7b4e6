import { depositFinalStatuses } from '../contracts/deposit';
import { type DepositLimitPeriod, depositLimitPeriods } from '../contracts/rules';
import { lockCustomer } from '../db/customers';
import {
  DEPOSIT_LIMIT_ZONE,
  type DepositLimitRow,
  depositKnown,
  depositsByPeriod,
  readDepositLimits,
  reserveDeposit,
  writeDepositLimit,
} from '../db/deposit-limits';
import { inTransaction, type Pool } from '../db/pool';

// The limits a person sets on their own deposits (responsible gaming, docs/rules.md): per São
// Paulo day, ISO week and month. A lower limit applies at once; a higher one, or removing one,
// only after the cooling-off (the rules policy's deposits.limitCoolingOffMs). A new deposit is
// checked and reserved under a lock of the person's row, as a payout against its daily limit, so
// two deposits at once are counted one after the other.

type Queryable = Parameters<typeof readDepositLimits>[0];

/** Deposits that will never be credited do not count; every other one may still be, or was. */
const NOT_COUNTED = depositFinalStatuses.filter((s) => s !== 'completed');

/**
 * How long a reservation counts while its deposit has no flows row: the deposit writes its row
 * with its QR, and gives up on the QR after 5 minutes (workflows/deposit.ts). One older than this
 * belongs to a deposit whose flow reserved it while screening and never wrote its row.
 */
export const RESERVATION_GRACE_MS = 10 * 60_000;

export interface DepositLimit {
  limitCentavos: number | null;
  pending: { limitCentavos: number | null; appliesAt: Date } | null;
}

const NO_LIMIT: DepositLimit = { limitCentavos: null, pending: null };

/** The limit at `now`: a pending change whose cooling-off is over is the limit from then on. */
export function limitInForce(row: DepositLimit | undefined, now: Date): DepositLimit {
  if (!row) return NO_LIMIT;
  if (row.pending && row.pending.appliesAt.getTime() <= now.getTime()) {
    return { limitCentavos: row.pending.limitCentavos, pending: null };
  }
  return row;
}

/**
 * The limit once the person asks for `asked` (null: no limit): a lower one, or the first, applies
 * at once and drops a pending change; a higher one, or none, waits for the cooling-off as the
 * pending change. The same pending change asked again keeps its time: asking twice does not
 * restart the wait.
 */
export function changedLimit(
  current: DepositLimit,
  asked: number | null,
  now: Date,
  coolingOffMs: number,
): DepositLimit {
  if (asked !== null && (current.limitCentavos === null || asked <= current.limitCentavos)) {
    return { limitCentavos: asked, pending: null };
  }
  if (asked === null && current.limitCentavos === null) return NO_LIMIT;
  if (current.pending && current.pending.limitCentavos === asked) return current;
  return {
    limitCentavos: current.limitCentavos,
    pending: { limitCentavos: asked, appliesAt: new Date(now.getTime() + coolingOffMs) },
  };
}

/** The person's limits in force at `now`, by period. */
async function limitsAt(db: Queryable, cpfHash: string, now: Date) {
  const rows = new Map((await readDepositLimits(db, cpfHash)).map((r) => [r.period, r]));
  return Object.fromEntries(depositLimitPeriods.map((p) => [p, limitInForce(rows.get(p), now)])) as Record<
    DepositLimitPeriod,
    DepositLimit
  >;
}

const counted = (db: Queryable, cpfHash: string, now: Date) =>
  depositsByPeriod(db, { cpfHash, now, notCounted: NOT_COUNTED, graceMs: RESERVATION_GRACE_MS });

/** The person's limits, their pending changes, and what each period has counted and has left. */
export async function depositLimitsView(db: Queryable, cpfHash: string, now: Date) {
  const [limits, sums] = await Promise.all([limitsAt(db, cpfHash, now), counted(db, cpfHash, now)]);
  const period = (p: DepositLimitPeriod) => {
    const { limitCentavos, pending } = limits[p];
    const { start, end, totalCentavos } = sums[p];
    return {
      limitCentavos,
      pending: pending
        ? { limitCentavos: pending.limitCentavos, appliesAt: pending.appliesAt.toISOString() }
        : null,
      start: start.toISOString(),
      end: end.toISOString(),
      countedCentavos: totalCentavos,
      remainingCentavos: limitCentavos === null ? null : Math.max(0, limitCentavos - totalCentavos),
    };
  };
  return {
    timeZone: DEPOSIT_LIMIT_ZONE,
    daily: period('daily'),
    weekly: period('weekly'),
    monthly: period('monthly'),
  };
}

export type DepositLimitsChange = Partial<Record<DepositLimitPeriod, number | null>>;

/** Applies the person's asked limits (a period not named is left as it is) and answers the view. */
export async function changeDepositLimits(
  pool: Pool,
  person: { cpfHash: string; cpfMasked: string },
  change: DepositLimitsChange,
  now: Date,
  coolingOffMs: number,
) {
  return inTransaction(pool, async (client) => {
    await lockCustomer(client, person.cpfHash, person.cpfMasked);
    const current = await limitsAt(client, person.cpfHash, now);
    for (const period of depositLimitPeriods) {
      const asked = change[period];
      if (asked === undefined) continue;
      const next: DepositLimitRow = { period, ...changedLimit(current[period], asked, now, coolingOffMs) };
      await writeDepositLimit(client, person.cpfHash, next, now);
    }
    return depositLimitsView(client, person.cpfHash, now);
  });
}

export type DepositLimitVerdict =
  | { fits: true }
  | {
      fits: false;
      /** The periods the deposit would pass. */
      exceeded: DepositLimitPeriod[];
      /** What is left in each period that has a limit. */
      remainingCentavos: Partial<Record<DepositLimitPeriod, number>>;
    };

const hasLimit = (limits: Record<DepositLimitPeriod, DepositLimit>) =>
  depositLimitPeriods.some((p) => limits[p].limitCentavos !== null);

/**
 * Checks a new deposit against the person's limits and reserves its amount when it fits, in one
 * transaction that holds the person's row locked. A deposit already reserved or recorded (the
 * same start again) fits as it did. A person without limits takes no lock and no reservation.
 */
export async function reserveWithinDepositLimits(
  pool: Pool,
  d: { cpfHash: string; cpfMasked: string; workflowId: string; amountCentavos: number; now: Date },
): Promise<DepositLimitVerdict> {
  if (!hasLimit(await limitsAt(pool, d.cpfHash, d.now))) return { fits: true };
  return inTransaction(pool, async (client): Promise<DepositLimitVerdict> => {
    await lockCustomer(client, d.cpfHash, d.cpfMasked);
    if (await depositKnown(client, d.workflowId)) return { fits: true };
    const [limits, sums] = await Promise.all([
      limitsAt(client, d.cpfHash, d.now),
      counted(client, d.cpfHash, d.now),
    ]);
    const remainingCentavos: Partial<Record<DepositLimitPeriod, number>> = {};
    const exceeded: DepositLimitPeriod[] = [];
    for (const p of depositLimitPeriods) {
      const limit = limits[p].limitCentavos;
      if (limit === null) continue;
      remainingCentavos[p] = Math.max(0, limit - sums[p].totalCentavos);
      if (sums[p].totalCentavos + d.amountCentavos > limit) exceeded.push(p);
    }
    if (exceeded.length > 0) return { fits: false, exceeded, remainingCentavos };
    await reserveDeposit(client, {
      workflowId: d.workflowId,
      cpfHash: d.cpfHash,
      amountCentavos: d.amountCentavos,
      at: d.now,
      staleBefore: new Date(d.now.getTime() - RESERVATION_GRACE_MS),
    });
    return { fits: true };
  });
}
