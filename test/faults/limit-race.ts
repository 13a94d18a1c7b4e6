import { randomBytes } from 'node:crypto';
import { DAILY_PAYOUT_LIMIT_CENTAVOS, onboard, ownCpfKey } from '../helpers/people';
import type { Harness } from './harness';
import { http, type Json, newLoad, reliably, waitTerminal } from './load';

// One person's withdrawals asked all at once against the daily limit, while the worker is down: exactly as many pass as the limit holds, the rest are refused
// `limit_exceeded`, and the provider receives each passing payout once and no other.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Below the step-up bound; ten fit in the day's R$ 50.000,00, the eleventh does not. */
export const RACE_AMOUNT_CENTAVOS = 490_000;
export const RACE_REQUESTS = 14;

export interface LimitRaceFigures {
  requests: number;
  passed: number;
  refused: number;
  sentCentavos: number;
  workerKills: number;
  callerRetries: number;
  problems: string[];
}

export async function runLimitRace(h: Harness): Promise<LimitRaceFigures> {
  const person = await onboard(h.people);
  const load = newLoad('limit-race');
  await h.control('/sandbox/auto', { payDepositsAfterMs: null, settleWithdrawalsAfterMs: 1000 });
  const ids = Array.from({ length: RACE_REQUESTS }, (_, i) => `race-${i}-${randomBytes(4).toString('hex')}`);
  load.withdrawals.push(...ids);
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
  const sb = (await h.control('/sandbox/state', undefined, 'GET')) as Json;
  const payouts = sb.counters.payouts as Record<string, number>;
  const fits = Math.floor(DAILY_PAYOUT_LIMIT_CENTAVOS / RACE_AMOUNT_CENTAVOS);
  let passed = 0;
  let refused = 0;
  for (const id of ids) {
    const state = states.get(`withdrawal:${id}`);
    const sent = payouts[id] ?? 0;
    if (state?.status === 'completed') {
      passed += 1;
      if (sent !== 1) problems.push(`${id}: completed with ${sent} payouts at the provider`);
    } else if (state?.status === 'refused') {
      refused += 1;
      if (state.reason !== 'limit_exceeded') problems.push(`${id}: refused for ${state.reason}`);
      if (sent !== 0) problems.push(`${id}: refused, yet ${sent} payouts at the provider`);
    } else {
      problems.push(`${id}: ended ${state?.status}`);
    }
  }
  if (passed !== fits) problems.push(`${passed} withdrawals passed; the limit holds ${fits}`);
  return {
    requests: ids.length,
    passed,
    refused,
    sentCentavos: Object.entries(payouts)
      .filter(([id]) => ids.includes(id))
      .reduce((sum, [, n]) => sum + n * RACE_AMOUNT_CENTAVOS, 0),
    workerKills: 1,
    callerRetries: load.retries,
    problems,
  };
}
