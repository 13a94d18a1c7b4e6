import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../common/config';
import { depositWorkflowId } from '../../contracts/deposit';
import type { PixflowEvent } from '../../contracts/events';
import { pruneEvents } from '../../db/events';
import { eventPageSchema } from '../../events/event-schemas';
import { type ApiEnv, eventually, json, peopleAt, startApiEnv } from '../api/support';
import { newCpf, onboard } from '../helpers/people';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

// How deliveries share out and give up: a slow endpoint holds only its own deliveries, at most
// WEBHOOK_CONCURRENCY_PER_ENDPOINT at a time; an endpoint failing for WEBHOOK_DISABLE_AFTER_MS is
// disabled; a backend that was away catches up from its cursor; a held deposit's decision is an
// event; events past their retention are deleted.

const PER_ENDPOINT = 2;
let e: ApiEnv;
let person: string;
let n = 0;
const { WEBHOOK_SECRET, WEBHOOK_PARTNER_ID } = loadConfig({});
const receivers: WebhookReceiver[] = [];

async function receiver(): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver();
  receivers.push(r);
  return r;
}

async function subscribe(r: WebhookReceiver, events: string[] = ['*']): Promise<string> {
  const res = await e.call('POST', '/v1/webhook-endpoints', { body: { url: r.url, events } });
  expect(res.status).toBe(201);
  const { id, secret } = (await res.json()) as { id: string; secret: string };
  r.secrets.push(secret);
  return id;
}

/** A deposit of the person's, paid by `payerCpf` when given (someone else: it is held). */
async function deposit(pay: false | { payerCpf?: string } = {}): Promise<string> {
  const res = await e.call('POST', '/v1/deposits', {
    body: {
      client: { externalId: `user-${++n}`, cpf: person, email: 'ana@example.com', name: 'Ana Souza' },
      amountCentavos: 5_000 + n,
    },
  });
  expect(res.status).toBe(201);
  const { txid } = (await res.json()) as { txid: string };
  if (pay) await e.sandboxControl(`/sandbox/deposits/${txid}/pay`, pay);
  return txid;
}

async function eventsAfter(after: string, query = ''): Promise<{ items: PixflowEvent[]; next: string }> {
  const res = await e.call('GET', `/v1/events?after=${after}${query}`);
  expect(res.status).toBe(200);
  return eventPageSchema.parse(await res.json());
}

beforeAll(async () => {
  e = await startApiEnv(
    { pollScheduleMs: [1_000] },
    {
      env: { WEBHOOK_ALLOW_LOOPBACK: 'true' },
      eventsRelay: {
        retryScheduleMs: Array.from({ length: 50 }, () => 300),
        timeoutMs: 2_000,
        perEndpoint: PER_ENDPOINT,
        disableAfterMs: 1_500,
      },
    },
  );
  await e.sandboxControl('/sandbox/notifications', {
    url: `${e.url}/webhooks/provider/${WEBHOOK_SECRET}`,
    partnerId: WEBHOOK_PARTNER_ID,
  });
  person = (await onboard(await peopleAt(e))).cpf;
}, 120_000);
afterAll(async () => {
  await e?.close();
  for (const r of receivers) await r.close();
});

describe('event delivery', () => {
  it('a slow endpoint gets at most its share at once, and holds up no other endpoint', async () => {
    const slow = await receiver();
    slow.answer = () => 'hang';
    const fast = await receiver();
    const slowId = await subscribe(slow, ['deposit.awaiting_payment']);
    await subscribe(fast, ['deposit.awaiting_payment']);
    const txids = await Promise.all(Array.from({ length: 5 }, () => deposit(false)));
    const flows = new Set(txids.map((t) => depositWorkflowId(t)));
    // Every one reaches the fast endpoint while the slow one sits on its first two.
    await eventually(
      async () => fast.delivered().filter((d) => flows.has(d.body.data.flowId)).length,
      (count) => count === txids.length,
    );
    // The held requests end at the relay's timeout; the next two come, never more than two.
    await eventually(
      async () => slow.received.filter((r) => flows.has(r.body.data.flowId)).length,
      (count) => count >= 4,
    );
    // At no moment more than its share open at the slow receiver.
    const held = slow.received.filter((r) => flows.has(r.body.data.flowId));
    const openAt = (t: number) =>
      held.filter((r) => r.at <= t && (r.endedAt ?? Number.POSITIVE_INFINITY) > t).length;
    expect(Math.max(...held.map((r) => openAt(r.at)))).toBe(PER_ENDPOINT);
    await e.call('DELETE', `/v1/webhook-endpoints/${slowId}`);
  });

  it('an endpoint that fails for WEBHOOK_DISABLE_AFTER_MS is disabled, with its event', async () => {
    const down = await receiver();
    down.answer = () => 503;
    const id = await subscribe(down, ['deposit.awaiting_payment']);
    await deposit(false);
    const shown = await eventually(
      async () =>
        await json<{ enabled: boolean; disabledReason: string | null; failingSince: string }>(
          await e.call('GET', `/v1/webhook-endpoints/${id}`),
        ),
      (x) => !x.enabled,
      { timeoutMs: 20_000 },
    );
    expect(shown.disabledReason).toBe('failing');
    expect(down.received.length).toBeGreaterThanOrEqual(2);
    const said = await eventually(
      async () => (await eventsAfter('0', '&type=webhook_endpoint.disabled&limit=500')).items,
      (items) => items.some((x) => x.data.flowId === id),
    );
    expect(said.find((x) => x.data.flowId === id)?.data.state).toMatchObject({
      reason: 'failing',
      url: down.url,
    });
  });

  it('a backend that was away pages on from its cursor and gets what happened meanwhile, in order', async () => {
    // Where the backend stopped: the end of what there is now.
    let cursor = '0';
    const before = new Set<string>();
    for (;;) {
      const page = await eventsAfter(cursor, '&limit=500');
      for (const x of page.items) before.add(x.id);
      cursor = page.next;
      if (page.items.length === 0) break;
    }
    const txid = await deposit({});
    const flowId = depositWorkflowId(txid);
    await eventually(
      async () => (await json(await e.call('GET', `/v1/deposits/${txid}`))).state.status,
      (s) => s === 'completed',
    );
    const caught = await eventually(
      async () => (await eventsAfter(cursor, '&limit=500')).items,
      (items) => items.filter((x) => x.data.flowId === flowId).length === 2,
    );
    expect(caught.filter((x) => x.data.flowId === flowId).map((x) => [x.type, x.data.sequence])).toEqual([
      ['deposit.awaiting_payment', 1],
      ['deposit.completed', 2],
    ]);
    // Nothing from before the cursor comes again.
    expect(before.size).toBeGreaterThan(0);
    expect(caught.filter((x) => before.has(x.id))).toEqual([]);
  });

  it("a held deposit and the operator's decision are events of their own", async () => {
    const txid = await deposit({ payerCpf: newCpf() });
    const flowId = depositWorkflowId(txid);
    await eventually(
      async () => (await json(await e.call('GET', `/v1/deposits/${txid}`))).state.status,
      (s) => s === 'held',
    );
    const res = await e.call('POST', `/v1/deposits/${txid}/resolution`, {
      body: { decision: 'return', by: 'ops@example.com', reason: 'not the customer' },
    });
    expect(res.status).toBe(200);
    const types = await eventually(
      async () => (await eventsAfter('0', `&flow=${flowId}`)).items.map((x) => x.type),
      (t) => t.length === 3,
    );
    expect(types).toEqual(['deposit.awaiting_payment', 'deposit.held', 'deposit.to_return']);
    const last = (await eventsAfter('0', `&flow=${flowId}`)).items.at(-1);
    expect(last?.data.state).toMatchObject({
      status: 'to_return',
      reason: 'third_party_payer',
      details: { resolution: { decision: 'return', by: 'ops@example.com' } },
    });
  });

  it('events past their retention are deleted, with their deliveries', async () => {
    const { rows } = await e.pool.query<{ id: string }>(
      `UPDATE events SET created_at = now() - interval '31 days'
        WHERE id = (SELECT id FROM events ORDER BY inserted LIMIT 1) RETURNING id`,
    );
    const old = rows[0]?.id as string;
    expect(await pruneEvents(e.pool, 30 * 24 * 3600_000)).toBe(1);
    expect((await e.call('GET', `/v1/events/${old}`)).status).toBe(404);
    const left = await e.pool.query('SELECT 1 FROM webhook_deliveries WHERE event_id = $1', [old]);
    expect(left.rowCount).toBe(0);
    // More than one batch past its retention: every batch goes in one call.
    const { rows: more } = await e.pool.query<{ id: string }>(
      `UPDATE events SET created_at = now() - interval '31 days'
        WHERE id IN (SELECT id FROM events ORDER BY inserted LIMIT 3) RETURNING id`,
    );
    expect(more).toHaveLength(3);
    expect(await pruneEvents(e.pool, 30 * 24 * 3600_000, 2)).toBe(3);
    for (const { id } of more) expect((await e.call('GET', `/v1/events/${id}`)).status).toBe(404);
  });
});
