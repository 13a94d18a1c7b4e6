import { floorSignal, type sinkWorkflow } from '../floor-workflow';
import type { Bench } from '../harness';
import { closedLoop } from '../load';
import { postDeposit, setAuto } from '../pixflow';
import { FLOOR_QUEUE, runTag, say, settings, sleep } from '../settings';
import { WEBHOOK_PARTNER_ID } from '../stack';
import { percentile, round } from '../stats';

// The ingress alone: one provider `updated` notification per open deposit, posted to the webhook
// URL `settings.ingressConcurrency` at a time, each stored and signalled to its workflow (an
// `updated` wakes the flow, which looks the deposit up and keeps waiting; none is coalesced: no
// identical one came before); next to a bare Temporal signal loop of the same number of signals at
// the same concurrency.

export interface Ingress {
  notifications: number;
  /** Notifications answered 200, per second. */
  acceptedPerSecond: number;
  /** Notifications stored and signalled (their inbox row delivered), per second. */
  signalledPerSecond: number;
  latenciesMs: number[];
  errors: number;
}

export async function ingress(b: Bench, txids: string[]): Promise<Ingress> {
  say(`ingress: ${txids.length} notifications to open deposits, ${settings.ingressConcurrency} at a time...`);
  const loop = await closedLoop(txids, settings.ingressConcurrency, async (txid) => {
    const res = await fetch(b.stack.ingress, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        partner_id: WEBHOOK_PARTNER_ID,
        type: 'deposit',
        action: 'updated',
        id: txid,
      }),
      signal: AbortSignal.timeout(30_000),
    });
    await res.text();
    return res.status === 200;
  });
  const delivered = await waitForDelivery(b, loop.t0, loop.latenciesMs.length);
  const acceptedPerSecond = loop.latenciesMs.length / loop.seconds;
  const signalledPerSecond = delivered.n / Math.max(loop.seconds, (delivered.last - loop.t0) / 1000);
  say(
    `   accepted ${round(acceptedPerSecond)}/s, signalled ${round(signalledPerSecond)}/s, p99 ${round(percentile(loop.latenciesMs, 99))} ms`,
  );
  return {
    notifications: txids.length,
    acceptedPerSecond,
    signalledPerSecond,
    latenciesMs: loop.latenciesMs,
    errors: loop.errors,
  };
}

/**
 * `n` deposits left open (nobody pays them), through the API 8 at a time: the ingress's targets
 * when the peak did not leave any.
 */
export async function openDeposits(b: Bench, n: number): Promise<string[]> {
  say(`opening ${n} deposits for the ingress...`);
  await setAuto(b, null, settings.autoAfterMs);
  const txids: string[] = [];
  await closedLoop(Array.from({ length: n }), 8, async () => {
    const r = await postDeposit(b);
    if (r.ok) txids.push(r.id);
    return r.ok;
  });
  await setAuto(b, settings.autoAfterMs, settings.autoAfterMs);
  await sleep(2_000); // their own `requested` notifications are stored first
  return txids;
}

/**
 * Signalled, not only stored: waits (at most 2 min) until `accepted` inbox rows received since
 * `since` are delivered; how many were, and when the last one was (ms).
 */
async function waitForDelivery(b: Bench, since: number, accepted: number) {
  let delivered = { n: 0, last: 0 };
  for (let i = 0; i < 240; i++) {
    const r = await b.pool.query<{ n: number; last: number }>(
      `SELECT count(*)::int AS n, (extract(epoch from max(delivered_at)) * 1000)::float8 AS last
       FROM webhook_inbox WHERE delivered_at IS NOT NULL AND received_at >= to_timestamp($1 / 1000.0)`,
      [since],
    );
    delivered = { n: r.rows[0]?.n ?? 0, last: Number(r.rows[0]?.last ?? 0) };
    if (delivered.n >= accepted) break;
    await sleep(500);
  }
  return delivered;
}

export interface SignalLoop {
  perSecond: number;
  latenciesMs: number[];
}

/** `count` client signals to 100 bare workflows of the bench's worker, as many at a time as the ingress. */
export async function bareSignalLoop(b: Bench, count: number): Promise<SignalLoop> {
  say('   bare signal loop: the same number of signals to bare workflows...');
  const sinks = Array.from({ length: 100 }, (_, i) => `sink-${runTag}-${i}`);
  await Promise.all(
    sinks.map((id) =>
      b.client.workflow.start<typeof sinkWorkflow>('sinkWorkflow', {
        workflowId: id,
        taskQueue: FLOOR_QUEUE,
      }),
    ),
  );
  const targets = Array.from({ length: count }, (_, k) => sinks[k % sinks.length] as string);
  const loop = await closedLoop(targets, settings.ingressConcurrency, async (id) => {
    await b.client.workflow.getHandle(id).signal(floorSignal, 'x');
    return true;
  });
  const perSecond = loop.latenciesMs.length / loop.seconds;
  say(`   bare signals ${round(perSecond)}/s, p99 ${round(percentile(loop.latenciesMs, 99))} ms`);
  await Promise.all(
    sinks.map((id) =>
      b.client.workflow
        .getHandle(id)
        .terminate('bench over')
        .catch(() => {}),
    ),
  );
  return { perSecond, latenciesMs: loop.latenciesMs };
}
