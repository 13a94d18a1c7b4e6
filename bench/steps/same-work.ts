import { ownCpfKey } from '../../test/helpers/people';
import { type Bench, settle } from '../harness';
import type { Completions, Launched } from '../load';
import { http, newTxid, notifyIngress } from '../pixflow';
import { runTag, settings } from '../settings';
import { WEBHOOK_PARTNER_ID } from '../stack';

// The same-work floor (bench/same-work-floor/): the least a correct durable deposit or payout
// needs on this stack, driven as pixflow is: a POST to its HTTP server, the sandbox creating,
// paying and settling, its notifications to the floor's own endpoint. A flow is done when its
// row says `completed`.

export type SameWorkKind = 'deposit' | 'withdrawal';

/**
 * Runs `fn` with the sandbox's deposit and payout notifications sent to the same-work floor,
 * then to pixflow's ingress again (the sandbox has one URL per notification point). Each switch
 * waits for the stack to go quiet, so no flow still running loses its notification to the other.
 */
export async function withNotificationsToSameWork<T>(b: Bench, fn: () => Promise<T>): Promise<T> {
  await settle(b);
  const url = `${b.sameWorkUrl}/notifications/${b.config.WEBHOOK_SECRET}`;
  const r = await http(`${b.stack.sandbox}/sandbox/notifications`, {
    url,
    partnerId: WEBHOOK_PARTNER_ID,
    points: ['deposit', 'withdraw'],
  });
  if (r.status !== 200) throw new Error(`the sandbox would not notify the same-work floor: ${r.status}`);
  try {
    return await fn();
  } finally {
    await settle(b);
    await notifyIngress(b);
  }
}

let seq = 0;

/** A deposit through the same-work floor's server, for the next person. */
export async function postSameWorkDeposit(b: Bench): Promise<Launched> {
  const txid = newTxid();
  const r = await http(
    `${b.sameWorkUrl}/deposits`,
    { txid, amountCentavos: 100 + (++seq % 9000), client: b.people.next() },
    'POST',
    settings.clientTimeoutMs,
  );
  return { id: txid, ok: r.status === 201, status: r.status };
}

/** A payout through the same-work floor's server, to the person's own CPF key. */
export async function postSameWorkWithdrawal(b: Bench): Promise<Launched> {
  const id = `sw-${runTag}-${++seq}`;
  const client = b.people.next();
  const r = await http(
    `${b.sameWorkUrl}/withdrawals`,
    { transactionId: id, amountCentavos: 100 + (seq % 9000), ...ownCpfKey(client), client },
    'POST',
    settings.clientTimeoutMs,
  );
  return { id, ok: r.status === 202, status: r.status };
}

/** When each of `ids` completed (its row's last update, ms), by id. */
export async function sameWorkCompletedAt(
  b: Bench,
  kind: SameWorkKind,
  ids: string[],
): Promise<Map<string, number>> {
  if (!ids.length) return new Map();
  const r = await b.pool.query<{ id: string; t: number }>(
    `SELECT id, (extract(epoch from updated_at) * 1000)::float8 AS t FROM bench_same_work
     WHERE kind = $1 AND status = 'completed' AND id = ANY($2)`,
    [kind, ids],
  );
  return new Map(r.rows.map((x) => [x.id, Number(x.t)]));
}

export const sameWorkCompletions =
  (b: Bench, kind: SameWorkKind): Completions =>
  async (ids) => [...(await sameWorkCompletedAt(b, kind, ids)).values()];

export const launchSameWork = (b: Bench, kind: SameWorkKind) => () =>
  kind === 'deposit' ? postSameWorkDeposit(b) : postSameWorkWithdrawal(b);
