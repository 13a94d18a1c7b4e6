import { PAYOUT_DAY_ZONE, payoutsToday } from '../db/customers';
import type { Pool } from '../db/pool';

// What the daily payout limit counts of a person, as the API's customer and the back office's
// customer page both show it.

/** The Brasília calendar day of an instant, YYYY-MM-DD (en-CA formats dates that way). */
const dayIn = (zone: string, at: Date) =>
  new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(at);

/** A person's payouts of today (Brasília day) against the daily limit: what the limit counts. */
export async function payoutsTodayView(pool: Pool, limitCentavos: number, cpfHash: string, now: Date) {
  const { totalCentavos, count } = await payoutsToday(pool, cpfHash, now);
  return {
    day: dayIn(PAYOUT_DAY_ZONE, now),
    totalCentavos,
    count,
    limitCentavos,
    remainingCentavos: Math.max(0, limitCentavos - totalCentavos),
  };
}
