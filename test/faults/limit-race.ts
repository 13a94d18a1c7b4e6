import { randomBytes } from 'node:crypto';
import { DAILY_PAYOUT_LIMIT_CENTAVOS, onboard, ownCpfKey } from '../helpers/people';
import { BRAND_B, DEFAULT_BRAND, type Harness } from './harness';
import { brandOfFlow, http, type Json, newLoad, reliably, waitTerminal } from './load';

// One person's withdrawals asked all at once against the daily limit, while the worker is down,
// half with the default brand's key and half with brand B's: the limit is the person's, every
// brand's payouts counted together under the lock of the person's one row (docs/rules.md), so
// exactly as many pass as the one limit holds, the rest are refused `limit_exceeded`, and each
// passing payout is sent once, at its own brand's provider account, and nowhere else.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Below the step-up bound; ten fit in the day's R$ 50.000,00, the eleventh does not. */
export const RACE_AMOUNT_CENTAVOS = 490_000;
export const RACE_REQUESTS = 14;

export interface LimitRaceFigures {
  requests: number;
  passed: number;
  refused: number;
  /** The withdrawals that passed, by brand. */
  passedByBrand: Record<string, number>;
  sentCentavos: number;
  workerKills: number;
  callerRetries: number;
  problems: string[];
}

export async function runLimitRace(h: Harness): Promise<LimitRaceFigures> {
  // Met by both brands: each moves only the money of people it onboarded.
  const person = await onboard(h.people, undefined, { alsoMetBy: [h.brandBKey] });
  const load = newLoad('limit-race');
  for (const side of h.sides)
    await side.control('/sandbox/auto', { payDepositsAfterMs: null, settleWithdrawalsAfterMs: 1000 });
  const ids = Array.from({ length: RACE_REQUESTS }, (_, i) => `race-${i}-${randomBytes(4).toString('hex')}`);
  load.withdrawals.push(...ids);
  ids.forEach((id, i) => {
    if (i % 2 === 1) load.brands.set(`withdrawal:${id}`, BRAND_B);
  });
  // The requests arrive while the worker is down: they wait (or are answered 503 and asked again)
  // and are checked all at once when it is back.
  await h.killWorker();
  const asked = ids.map((transactionId) =>
    reliably(
      load,
      `withdrawal ${transactionId}`,
      () =>
        http(`${h.api}/v1/withdrawals`, {
          body: { transactionId, amountCentavos: RACE_AMOUNT_CENTAVOS, ...ownCpfKey(person), client: person },
          key: h.side(brandOfFlow(load, `withdrawal:${transactionId}`)).key,
        }),
      // Accepted, or refused by its flow over the limit (409): both are counted from the flows below.
      (r) => r.status === 202 || (r.status === 409 && r.body?.reason === 'limit_exceeded'),
    ),
  );
  await sleep(2_000);
  await h.startWorker();
  await Promise.all(asked);

  const { states, open } = await waitTerminal(h, load, 120_000);
  const problems = [
    ...load.refusals,
    ...open.map((k) => `${k} never ended (last: ${states.get(k)?.status})`),
  ];
  // Each brand's provider's payouts, by transactionId.
  const payoutsAt = new Map<string, Record<string, number>>();
  for (const side of h.sides) {
    const sb = (await side.control('/sandbox/state', undefined, 'GET')) as Json;
    payoutsAt.set(side.brand, sb.counters.payouts as Record<string, number>);
  }
  const fits = Math.floor(DAILY_PAYOUT_LIMIT_CENTAVOS / RACE_AMOUNT_CENTAVOS);
  let passed = 0;
  let refused = 0;
  const passedByBrand: Record<string, number> = { [DEFAULT_BRAND]: 0, [BRAND_B]: 0 };
  let sentCentavos = 0;
  for (const id of ids) {
    const brand = brandOfFlow(load, `withdrawal:${id}`);
    const state = states.get(`withdrawal:${id}`);
    const sent = payoutsAt.get(brand)?.[id] ?? 0;
    for (const [other, payouts] of payoutsAt) {
      const there = payouts[id] ?? 0;
      sentCentavos += there * RACE_AMOUNT_CENTAVOS;
      if (other !== brand && there > 0)
        problems.push(`${id}: brand ${brand}'s payout sent ${there} times at brand ${other}'s account`);
    }
    if (state?.status === 'completed') {
      passed += 1;
      passedByBrand[brand] = (passedByBrand[brand] ?? 0) + 1;
      if (sent !== 1) problems.push(`${id}: completed with ${sent} payouts at brand ${brand}'s provider`);
    } else if (state?.status === 'refused') {
      refused += 1;
      if (state.reason !== 'limit_exceeded') problems.push(`${id}: refused for ${state.reason}`);
      if (sent !== 0) problems.push(`${id}: refused, yet ${sent} payouts at brand ${brand}'s provider`);
    } else {
      problems.push(`${id}: ended ${state?.status}`);
    }
  }
  if (passed !== fits) problems.push(`${passed} withdrawals passed; the one daily limit holds ${fits}`);
  return {
    requests: ids.length,
    passed,
    refused,
    passedByBrand,
    sentCentavos,
    workerKills: 1,
    callerRetries: load.retries,
    problems,
  };
}
