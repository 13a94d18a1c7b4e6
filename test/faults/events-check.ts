import { cpfHash } from '../../common/pii';
import { onboardingWorkflowId } from '../../contracts/onboarding';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';
import { DEFAULT_BRAND, type Harness, PII_HASH_KEY } from './harness';
import { brandOfFlow, type Load, workflowIdOf } from './load';

// The suite's backend: a webhook receiver subscribed to every event, which fails a quarter of
// the deliveries (500), lets some hang past pixflow's timeout, and answers the rest. After each
// scenario every state change of every flow of its load must have reached it at least once, and,
// after dropping repeats by webhook-id, each flow's events must have arrived in order of sequence.
// Each brand's key subscribes it once: a flow's events must name its brand and come signed by its
// brand's endpoint alone.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface EventsBackend {
  receiver: WebhookReceiver;
  /** Resolves once a delivery is held unanswered: a kill now is a kill mid-delivery. */
  holdOne(): Promise<void>;
  close(): Promise<void>;
}

export async function startEventsBackend(h: Harness): Promise<EventsBackend> {
  const receiver = await startWebhookReceiver();
  let hold: (() => void) | undefined;
  receiver.answer = () => {
    if (hold) {
      hold();
      hold = undefined;
      return 'hang';
    }
    const r = Math.random();
    return r < 0.25 ? 500 : r < 0.28 ? 'hang' : 200;
  };
  // In the order of h.sides: a delivery verified by secret i came from side i's endpoint.
  for (const side of h.sides) {
    const res = await fetch(`${h.api}/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${side.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        url: receiver.url,
        events: ['*'],
        description: `fault suite backend, ${side.brand}`,
      }),
    });
    if (res.status !== 201)
      throw new Error(
        `subscribing the receiver for ${side.brand} answered ${res.status}: ${await res.text()}`,
      );
    receiver.secrets.push(((await res.json()) as { secret: string }).secret);
  }
  return {
    receiver,
    holdOne: () =>
      new Promise<void>((resolve) => {
        hold = resolve;
      }),
    close: () => receiver.close(),
  };
}

/** The workflow ids of a load's flows, each with its brand. */
function flowIds(load: Load): Map<string, string> {
  return new Map([
    ...[...load.deposits.map((t) => `deposit:${t}`), ...load.withdrawals.map((t) => `withdrawal:${t}`)].map(
      (key) => [workflowIdOf(load, key), brandOfFlow(load, key)] as const,
    ),
    ...load.onboardings.map(
      (cpf) => [onboardingWorkflowId(cpfHash(cpf, PII_HASH_KEY)), DEFAULT_BRAND] as const,
    ),
  ]);
}

export interface EventsCheck {
  events: number;
  delivered: number;
  /** Requests the receiver got beyond the first 2xx of each event: retries and repeats. */
  attemptsBeyondFirst: number;
  problems: string[];
}

/** Waits (up to `timeoutMs`) for every event of the load's flows at the receiver, then checks the order. */
export async function checkEvents(
  h: Harness,
  backend: EventsBackend,
  load: Load,
  timeoutMs: number,
): Promise<EventsCheck> {
  const brands = flowIds(load);
  const ids = [...brands.keys()];
  const pool = h.pool;
  if (!pool) throw new Error('the harness has no Postgres pool');
  const deadline = Date.now() + timeoutMs;
  let expected: { id: string; stream_id: string; seq: number; type: string }[] = [];
  let missing: typeof expected = [];
  for (;;) {
    ({ rows: expected } = await pool.query(
      'SELECT id, stream_id, seq, type FROM events WHERE stream_id = ANY($1) ORDER BY stream_id, seq',
      [ids],
    ));
    const got = new Set(backend.receiver.delivered().map((d) => d.webhookId));
    missing = expected.filter((e) => !got.has(e.id));
    if (missing.length === 0 || Date.now() > deadline) break;
    await sleep(500);
  }
  const problems = missing
    .slice(0, 10)
    .map((m) => `event ${m.type} #${m.seq} of ${m.stream_id} never delivered to the receiver`);
  const flowsWithEvents = new Set(expected.map((e) => e.stream_id));
  for (const id of ids) if (!flowsWithEvents.has(id)) problems.push(`${id} has no event at all`);
  const delivered = backend.receiver.delivered().filter((d) => flowsWithEvents.has(d.body.data.flowId));
  const sideOf = new Map(h.sides.map((side, i) => [side.brand, i]));
  for (const d of delivered) {
    const brand = brands.get(d.body.data.flowId);
    if (d.body.brand !== brand)
      problems.push(
        `${d.body.data.flowId}: event ${d.body.type} names brand ${d.body.brand}, its flow is ${brand}'s`,
      );
    if (d.verifiedBy.join() !== String(sideOf.get(brand ?? '')))
      problems.push(
        `${d.body.data.flowId}: event ${d.body.type} signed by endpoint ${d.verifiedBy.join('+')}, not its brand ${brand}'s alone`,
      );
  }
  for (const id of flowsWithEvents) {
    const seqs = delivered.filter((d) => d.body.data.flowId === id).map((d) => d.body.data.sequence);
    const sorted = [...seqs].sort((a, b) => a - b);
    if (seqs.join() !== sorted.join())
      problems.push(`${id}: events arrived out of order (${seqs.join(', ')})`);
  }
  if (backend.receiver.unverified.length) {
    problems.push(
      `requests the receiver could not verify: ${backend.receiver.unverified.slice(0, 3).join('; ')}`,
    );
  }
  const ours = new Set(delivered.map((d) => d.webhookId));
  return {
    events: expected.length,
    delivered: ours.size,
    attemptsBeyondFirst: backend.receiver.received.filter((r) => ours.has(r.webhookId)).length - ours.size,
    problems,
  };
}
