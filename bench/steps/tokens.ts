import type { Bench } from '../harness';
import { postDeposit, sandboxState } from '../pixflow';
import { say, settings, sleep } from '../settings';

// Provider tokens: the sandbox's count of token requests in the first `settings.tokenMinutes` of
// the run, with one worker process (the same-work floor's worker takes its own, not counted). A
// token lives 60 min, so a longer run rightly needs a second.

const tokenWindowMs = () => settings.tokenMinutes * 60_000;

/** pixflow's token requests so far: the sandbox's count, less the same-work floor's worker's own. */
export const pixflowTokenRequests = async (b: Bench) =>
  (await sandboxState(b)).counters.tokenRequests - b.sameWorkTokenRequests();

/** pixflow's token requests once the window from `startedAt` is over. */
export async function tokenRequestsInWindow(b: Bench, startedAt: number): Promise<number> {
  await sleep(Math.max(0, startedAt + tokenWindowMs() - Date.now()));
  return pixflowTokenRequests(b);
}

/** When the steps end before the window does, a trickle of deposits (one a second) until it is over. */
export async function keepDepositsTrickling(b: Bench, startedAt: number): Promise<void> {
  if (Date.now() - startedAt >= tokenWindowMs()) return;
  say(`5. keeping a trickle of deposits going until the run has lasted ${settings.tokenMinutes} min...`);
  while (Date.now() - startedAt < tokenWindowMs()) {
    await postDeposit(b).catch(() => undefined);
    await sleep(1_000);
  }
}
