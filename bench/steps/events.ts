import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { type Bench, type Settled, settle } from '../harness';
import { ramp, step, stepLine } from '../load';
import { http as call, completedFlows, postDeposit } from '../pixflow';
import { say, settings, sleep } from '../settings';
import { percentile, type RampPoint, round, type Summary, saturationThroughput, summarize } from '../stats';

// Outbound events under load: a backend's receiver in this process (verifying every request with
// the standardwebhooks library, answering 204 at once) subscribed to every event. Measured: the
// lag from a state change (its event's commit time in Postgres) to the receiver, at half the
// deposits' saturation; events delivered per second; and the deposits' saturation with the
// endpoint subscribed next to a ramp without it, run just before on the same stack.

export interface EventsFigures {
  /** State change → the receiver has it, over every event of the half-saturation step. */
  lagMs: Summary;
  rate: number;
  events: number;
  deliveredPerSecond: number;
  /** Requests the receiver could not verify (never expected). */
  unverified: number;
  without: { points: RampPoint[]; saturation: number };
  with: { points: RampPoint[]; saturation: number };
  /** The wait for the stack to go quiet before the part began (harness.ts settle). */
  settled?: Settled;
  /** The same wait before the ramp with the endpoint: the ramp without it saturated the stack. */
  withSettled?: Settled;
  /** The same wait before the lag step: the ramp with the endpoint saturated the stack. */
  lagSettled?: Settled;
}

export interface Receiver {
  url: string;
  arrivals: Map<string, number>;
  unverified: number;
  secret: string;
  close(): Promise<void>;
}

/** A backend's receiver on a free port of 127.0.0.1: verifies each request, answers 204. */
export async function startReceiver(): Promise<Receiver> {
  const r: Receiver = { url: '', arrivals: new Map(), unverified: 0, secret: '', close: async () => {} };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const headers = Object.fromEntries(
        ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [
          h,
          String(req.headers[h] ?? ''),
        ]),
      );
      try {
        new Webhook(r.secret).verify(Buffer.concat(chunks).toString('utf8'), headers);
        const id = headers['webhook-id'] as string;
        if (!r.arrivals.has(id)) r.arrivals.set(id, at);
        res.writeHead(204).end();
      } catch {
        r.unverified += 1;
        res.writeHead(400).end();
      }
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
  r.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return r;
}

/** Commit times (ms) of the events of these deposits, by event id. */
async function eventTimes(b: Bench, txids: string[]): Promise<Map<string, number>> {
  const { rows } = await b.pool.query<{ id: string; t: number }>(
    `SELECT id, (extract(epoch from created_at) * 1000)::float8 AS t FROM events
      WHERE stream_id = ANY($1)`,
    [txids.map((t) => `deposit-${t}`)],
  );
  return new Map(rows.map((x) => [x.id, Number(x.t)]));
}

export async function events(b: Bench, depositSaturation: number): Promise<EventsFigures> {
  say('events: deposits ramp without an endpoint...');
  const launch = () => postDeposit(b);
  const done = completedFlows(b, 'deposit');
  const withoutPoints = await ramp('deposits, no endpoint', 2, launch, done);
  const rx = await startReceiver();
  const created = await call(
    `${b.api()}/v1/webhook-endpoints`,
    { url: rx.url, events: ['*'], description: 'bench receiver' },
    'POST',
  );
  if (created.status !== 201) throw new Error(`subscribing answered ${created.status}`);
  rx.secret = created.body.secret;
  try {
    // Each ramp from a quiet stack: the one without the endpoint ended past its saturation.
    const withSettled = await settle(b);
    say('events: deposits ramp with an endpoint subscribed to every event...');
    const withPoints = await ramp('deposits, one endpoint', 2, launch, done);
    // The ramp's last steps leave deliveries queued, and flows and the alert monitor busy with
    // its backlog: the lag is measured from an empty queue on a quiet stack, at a steady rate.
    await drainDeliveries(b);
    const lagSettled = await settle(b);
    const rate = Math.max(0.5, round(depositSaturation / 2));
    say(`events: lag at ${rate}/s...`);
    const s = await step(rate, settings.stepMs * 2, launch, done);
    say(stepLine('events lag step', s));
    const times = await waitForArrivals(b, rx, s.ids);
    const lags = [...times].flatMap(([id, t]) => {
      const arrived = rx.arrivals.get(id);
      return arrived === undefined ? [] : [arrived - t];
    });
    const arrivals = [...times.keys()]
      .map((id) => rx.arrivals.get(id))
      .filter((t): t is number => t !== undefined);
    const span = (Math.max(...arrivals) - Math.min(...arrivals)) / 1000;
    const lagMs = summarize(lags);
    say(
      `   lag p50 ${round(percentile(lags, 50))} ms, p99 ${round(percentile(lags, 99))} ms over ${lags.length} events`,
    );
    return {
      lagMs,
      rate,
      events: times.size,
      deliveredPerSecond: span > 0 ? round(arrivals.length / span) : Number.NaN,
      unverified: rx.unverified,
      without: { points: withoutPoints, saturation: saturationThroughput(withoutPoints) },
      with: { points: withPoints, saturation: saturationThroughput(withPoints) },
      withSettled,
      lagSettled,
    };
  } finally {
    await call(`${b.api()}/v1/webhook-endpoints/${created.body.id}`, undefined, 'DELETE');
    await rx.close();
  }
}

/** Until no delivery is pending (at most 5 minutes). */
async function drainDeliveries(b: Bench) {
  const until = Date.now() + 300_000;
  for (;;) {
    const { rows } = await b.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhook_deliveries WHERE state = 'pending'",
    );
    if ((rows[0]?.n ?? 0) === 0 || Date.now() > until) return;
    await sleep(1_000);
  }
}

/** The events of these deposits, once every one has reached the receiver (at most 60 s more). */
async function waitForArrivals(b: Bench, rx: Receiver, txids: string[]) {
  const until = Date.now() + 60_000;
  for (;;) {
    const times = await eventTimes(b, txids);
    const missing = [...times.keys()].filter((id) => !rx.arrivals.has(id)).length;
    if (missing === 0 || Date.now() > until) return times;
    await sleep(250);
  }
}
