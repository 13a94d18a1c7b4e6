import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../common/config';
import { maskCpf } from '../../common/mask';
import { depositWorkflowId } from '../../contracts/deposit';
import type { PixflowEvent } from '../../contracts/events';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import { eventPageSchema } from '../../events/event-schemas';
import { type ApiEnv, eventually, expectProblem, json, peopleAt, startApiEnv } from '../api/support';
import { onboard } from '../helpers/people';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

// Outbound events end to end: the real API, worker, Temporal, Postgres and sandbox, the API's
// events relay delivering to receivers in this process that verify every request with the
// standardwebhooks library.

let e: ApiEnv;
let rx: WebhookReceiver;
let main: { id: string; secret: string };
let person: string;
let n = 0;
const { WEBHOOK_SECRET, WEBHOOK_PARTNER_ID } = loadConfig({});

interface EndpointAnswer {
  id: string;
  secret: string;
  enabled: boolean;
  disabledReason: string | null;
  previousSecretUntil: string | null;
  events: string[];
}

async function subscribe(receiver: WebhookReceiver, events: string[] = ['*']): Promise<EndpointAnswer> {
  const res = await e.call('POST', '/v1/webhook-endpoints', {
    body: { url: receiver.url, events, description: `receiver ${++n}` },
  });
  expect(res.status).toBe(201);
  const ep = (await res.json()) as EndpointAnswer;
  expect(res.headers.get('location')).toBe(`/v1/webhook-endpoints/${ep.id}`);
  receiver.secrets.push(ep.secret);
  return ep;
}

async function paidDeposit(): Promise<string> {
  const res = await e.call('POST', '/v1/deposits', {
    body: {
      client: { externalId: `user-${++n}`, cpf: person, email: 'ana@example.com', name: 'Ana Souza' },
      amountCentavos: 12_345,
    },
  });
  expect(res.status).toBe(201);
  const { txid } = (await res.json()) as { txid: string };
  await e.sandboxControl(`/sandbox/deposits/${txid}/pay`, {});
  return txid;
}

async function completedWithdrawal(): Promise<string> {
  const transactionId = `ev-wd-${Date.now()}-${++n}`;
  const body = {
    transactionId,
    client: { externalId: `user-${n}`, cpf: person, email: 'ana@example.com', name: 'Ana Souza' },
    pixKey: person,
    pixType: 'CPF',
    amountCentavos: 10_000,
  };
  expect((await e.call('POST', '/v1/withdrawals', { body })).status).toBe(202);
  const path = `/v1/withdrawals/${transactionId}`;
  await eventually(
    async () => (await json(await e.call('GET', path))).state.status,
    (s) => s === 'processing',
  );
  await e.sandboxControl(`/sandbox/withdrawals/${transactionId}/settle`);
  return transactionId;
}

/** What one receiver got for one flow, first 2xx of each webhook id, in arrival order. */
const deliveredFor = (r: WebhookReceiver, flowId: string) =>
  r.delivered().filter((d) => d.body.data.flowId === flowId);

async function allEvents(query = ''): Promise<PixflowEvent[]> {
  const items: PixflowEvent[] = [];
  let after = '';
  for (;;) {
    const res = await e.call('GET', `/v1/events?limit=3${query}${after ? `&after=${after}` : ''}`);
    expect(res.status).toBe(200);
    const page = eventPageSchema.parse(await res.json());
    items.push(...page.items);
    if (!page.hasMore) return items;
    after = page.next;
  }
}

beforeAll(async () => {
  e = await startApiEnv(
    { pollScheduleMs: [1_000] },
    {
      env: { WEBHOOK_ALLOW_LOOPBACK: 'true' },
      eventsRelay: { retryScheduleMs: [200, 300, 300, 300, 300, 300, 300, 300], timeoutMs: 1_000 },
    },
  );
  await e.sandboxControl('/sandbox/notifications', {
    url: `${e.url}/webhooks/provider/${WEBHOOK_SECRET}`,
    partnerId: WEBHOOK_PARTNER_ID,
  });
  rx = await startWebhookReceiver();
  main = await subscribe(rx);
  person = (await onboard(await peopleAt(e))).cpf;
}, 120_000);
afterAll(async () => {
  await e?.close();
  await rx?.close();
});

describe('events', () => {
  it('a backend subscribes and verifies each delivery: an onboarding awaiting review, a deposit paid, a payout completed', async () => {
    expect(main.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    const shown = await (await e.call('GET', `/v1/webhook-endpoints/${main.id}`)).json();
    expect(JSON.stringify(shown)).not.toContain(main.secret.slice(6));
    expect(shown).toMatchObject({ id: main.id, url: rx.url, events: ['*'], enabled: true });

    const txid = await paidDeposit();
    const transactionId = await completedWithdrawal();
    const onboarding = (await json(await e.call('GET', `/v1/onboardings/${person}`))).workflowId;
    const types = (flowId: string) => deliveredFor(rx, flowId).map((d) => d.body.type);
    await eventually(
      async () => [
        types(depositWorkflowId(txid)),
        types(withdrawalWorkflowId(transactionId)),
        types(onboarding),
      ],
      ([d, w, o]) =>
        d?.includes('deposit.completed') === true &&
        w?.includes('withdrawal.completed') === true &&
        o?.includes('onboarding.approved') === true,
      { timeoutMs: 30_000 },
    );
    expect(types(onboarding)).toEqual([
      'onboarding.awaiting_liveness',
      'onboarding.awaiting_review',
      'onboarding.approved',
    ]);
    expect(types(depositWorkflowId(txid))).toEqual(['deposit.awaiting_payment', 'deposit.completed']);
    expect(types(withdrawalWorkflowId(transactionId))).toEqual([
      'withdrawal.validating',
      'withdrawal.sending',
      'withdrawal.processing',
      'withdrawal.completed',
    ]);

    const review = deliveredFor(rx, onboarding).find((d) => d.body.type === 'onboarding.awaiting_review');
    expect(review?.body.data).toMatchObject({
      flowType: 'onboarding',
      flowId: onboarding,
      state: { status: 'awaiting_review', cpfMasked: maskCpf(person) },
    });
    const paid = deliveredFor(rx, depositWorkflowId(txid)).at(-1);
    expect(paid?.body.data).toMatchObject({
      flowType: 'deposit',
      businessId: txid,
      state: { status: 'completed', amountCentavos: 12_345, cpfMasked: maskCpf(person) },
    });
    const customer = rx.delivered().filter((d) => d.body.type === 'customer.verification_updated');
    expect(customer.map((d) => d.body.data.state)).toContainEqual(
      expect.objectContaining({ verification: 'approved', previous: 'pending', cpfMasked: maskCpf(person) }),
    );

    // Every request verified with the endpoint's secret; no CPF in the clear anywhere.
    expect(rx.unverified).toEqual([]);
    expect(JSON.stringify(rx.received)).not.toContain(person);
    // Per flow, in order of sequence, each change once after dedupe.
    for (const flowId of new Set(rx.delivered().map((d) => d.body.data.flowId))) {
      const seqs = deliveredFor(rx, flowId).map((d) => d.body.data.sequence);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    }

    // The pull API has the same events, with the webhooks' ids, oldest first.
    const pulled = await allEvents(`&flow=${depositWorkflowId(txid)}`);
    expect(pulled.map((p) => p.type)).toEqual(['deposit.awaiting_payment', 'deposit.completed']);
    expect(pulled.map((p) => p.id)).toEqual(
      deliveredFor(rx, depositWorkflowId(txid)).map((d) => d.webhookId),
    );
  });

  it('a receiver that fails, then times out, then answers gets every event, with the webhook-id of its first attempt', async () => {
    const flaky = await startWebhookReceiver();
    const tries = new Map<string, number>();
    flaky.answer = ({ webhookId }) => {
      const t = (tries.get(webhookId) ?? 0) + 1;
      tries.set(webhookId, t);
      return t <= 2 ? 500 : t === 3 ? 'hang' : 200;
    };
    try {
      const ep = await subscribe(flaky, ['deposit.awaiting_payment', 'deposit.completed']);
      const flowId = depositWorkflowId(await paidDeposit());
      await eventually(
        async () => deliveredFor(flaky, flowId).map((d) => d.body.type),
        (t) => t.length === 2,
        { timeoutMs: 30_000 },
      );
      expect(deliveredFor(flaky, flowId).map((d) => d.body.type)).toEqual([
        'deposit.awaiting_payment',
        'deposit.completed',
      ]);
      for (const d of deliveredFor(flaky, flowId)) {
        const all = flaky.received.filter((r) => r.webhookId === d.webhookId);
        expect(all.map((r) => r.answeredWith)).toEqual([500, 500, 'hang', 200]);
        expect(new Set(all.map((r) => JSON.stringify(r.body))).size).toBe(1);
      }
      // The second event waited for the first: its first attempt came after the first's 2xx.
      const [first, second] = deliveredFor(flaky, flowId);
      const secondFirstTry = flaky.received.find((r) => r.webhookId === second?.webhookId);
      expect(secondFirstTry?.at).toBeGreaterThanOrEqual(first?.at ?? Number.POSITIVE_INFINITY);

      const attempts = await e.call(
        'GET',
        `/v1/webhook-endpoints/${ep.id}/attempts?event=${first?.webhookId}`,
      );
      const page = (await attempts.json()) as {
        items: { outcome: string; statusCode: number | null; attempt: number; error: string | null }[];
      };
      expect(page.items.map((a) => [a.attempt, a.outcome, a.statusCode])).toEqual([
        [4, 'delivered', 200],
        [3, 'failed', null],
        [2, 'failed', 500],
        [1, 'failed', 500],
      ]);
      expect(page.items[1]?.error).toMatch(/no answer within 1000 ms/);
    } finally {
      await flaky.close();
    }
  });

  it('a rotated secret: both signatures verify during the overlap', async () => {
    const r = await startWebhookReceiver();
    try {
      const ep = await subscribe(r, ['deposit.awaiting_payment']);
      const rotated = await e.call('POST', `/v1/webhook-endpoints/${ep.id}/rotate-secret`);
      expect(rotated.status).toBe(200);
      const after = (await rotated.json()) as EndpointAnswer;
      expect(after.secret).toMatch(/^whsec_/);
      expect(after.secret).not.toBe(ep.secret);
      const overlap = Date.parse(String(after.previousSecretUntil)) - Date.now();
      expect(overlap).toBeGreaterThan(23.9 * 3600_000);
      expect(overlap).toBeLessThanOrEqual(24 * 3600_000);
      r.secrets.push(after.secret);

      const flowId = depositWorkflowId(await paidDeposit());
      const [got] = await eventually(
        async () => deliveredFor(r, flowId),
        (d) => d.length === 1,
      );
      expect(got?.signatures).toBe(2);
      expect(got?.verifiedBy).toEqual([0, 1]);
    } finally {
      await r.close();
    }
  });

  it('a 410 disables the endpoint, with an event that says so; enabling it again resumes it', async () => {
    const r = await startWebhookReceiver();
    r.answer = () => 410;
    try {
      const ep = await subscribe(r, ['deposit.awaiting_payment']);
      await paidDeposit();
      const disabled = await eventually(
        async () => (await (await e.call('GET', `/v1/webhook-endpoints/${ep.id}`)).json()) as EndpointAnswer,
        (x) => !x.enabled,
      );
      expect(disabled.disabledReason).toBe('gone');
      // Readable once the relay has positioned it, a moment after it committed.
      const said = await eventually(
        async () => (await allEvents('&type=webhook_endpoint.disabled')).map((x) => x.data.state),
        (states) => states.some((st) => (st as { id?: string }).id === ep.id),
      );
      expect(said).toContainEqual(expect.objectContaining({ id: ep.id, url: r.url, reason: 'gone' }));
      const otherKey = await e.call('GET', '/v1/events?type=webhook_endpoint.disabled', {
        key: 'another-key',
      });
      expect(JSON.stringify(await otherKey.json())).not.toContain(ep.id);

      const enabled = await e.call('PATCH', `/v1/webhook-endpoints/${ep.id}`, { body: { enabled: true } });
      expect(await enabled.json()).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null });
    } finally {
      await r.close();
    }
  });

  it('redelivery sends an event again with the same webhook-id', async () => {
    const [first] = rx.delivered();
    expect(first).toBeDefined();
    const id = first?.webhookId as string;
    const before = rx.received.filter((r) => r.webhookId === id).length;
    const res = await e.call('POST', `/v1/events/${id}/redeliver`);
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ eventId: id, endpoints: expect.arrayContaining([main.id]) });
    await eventually(
      async () => rx.received.filter((r) => r.webhookId === id).length,
      (count) => count === before + 1,
    );
  });

  it('the pull API pages from a cursor, newest last; a caught-up cursor answers nothing new', async () => {
    const everything = await allEvents();
    expect(everything.length).toBeGreaterThan(6);
    expect(new Set(everything.map((x) => x.id)).size).toBe(everything.length);
    const byFlow = new Map<string, number[]>();
    for (const ev of everything)
      byFlow.set(ev.data.flowId, [...(byFlow.get(ev.data.flowId) ?? []), ev.data.sequence]);
    for (const seqs of byFlow.values()) expect(seqs).toEqual([...seqs].sort((a, b) => a - b));

    // Other test files share the database and keep adding events: a flow of this file that has
    // ended is what stays caught up.
    const ended = everything.find((x) => x.type === 'deposit.completed')?.data.flowId;
    expect(ended).toBeDefined();
    const first = eventPageSchema.parse(
      await (await e.call('GET', `/v1/events?limit=500&flow=${ended}`)).json(),
    );
    expect(first.items.map((x) => x.type)).toContain('deposit.completed');
    const again = eventPageSchema.parse(
      await (await e.call('GET', `/v1/events?flow=${ended}&after=${first.next}`)).json(),
    );
    expect(again).toEqual({ items: [], next: first.next, hasMore: false });
    const deposits = await allEvents('&type=deposit.completed,deposit.awaiting_payment');
    expect(deposits.length).toBeGreaterThan(0);
    expect(deposits.every((x) => x.type.startsWith('deposit.'))).toBe(true);
  });

  it('bad input answers 400 naming the field, another key’s endpoint 404, and changes nothing', async () => {
    const before = await (await e.call('GET', '/v1/webhook-endpoints')).json();
    const create = (body: unknown) => e.call('POST', '/v1/webhook-endpoints', { body });
    const field = async (res: Response, name: string) => {
      const p = await expectProblem(res, 400, 'validation-error');
      expect(p.invalid_params?.map((i) => i.name)).toContain(name);
      return p;
    };
    await field(await create({ url: 'not a url', events: ['*'] }), 'body.url');
    await field(await create({ url: 'http://example.com/hooks', events: ['*'] }), 'body.url');
    await field(await create({ url: 'https://10.0.0.7/hooks', events: ['*'] }), 'body.url');
    await field(await create({ url: 'https://192.168.1.20/hooks', events: ['*'] }), 'body.url');
    const metadata = await field(
      await create({ url: 'https://169.254.169.254/latest', events: ['*'] }),
      'body.url',
    );
    expect(metadata.detail).toMatch(/linkLocal/);
    await field(await create({ url: 'https://[fd00::1]/hooks', events: ['*'] }), 'body.url');
    await field(await create({ url: 'https://user:pw@example.com/hooks', events: ['*'] }), 'body.url');
    await field(
      await create({ url: 'https://example.com/hooks', events: ['deposit.paid'] }),
      'body.events.0',
    );
    await field(await create({ url: 'https://example.com/hooks', events: [] }), 'body.events');
    await field(await create({ events: ['*'] }), 'body.url');
    await field(
      await e.call('PATCH', `/v1/webhook-endpoints/${main.id}`, { body: { url: 'https://10.1.2.3/' } }),
      'body.url',
    );
    await field(await e.call('GET', '/v1/webhook-endpoints/nope'), 'path.id');
    await field(await e.call('GET', '/v1/events?after=garbage'), 'query.after');
    await field(await e.call('GET', '/v1/events?after='), 'query.after');
    await field(await e.call('GET', '/v1/events?type=deposit.paid'), 'query.type');
    await field(await e.call('GET', '/v1/events?type=deposit.completed,,'), 'query.type');
    await expectProblem(
      await e.call('POST', `/v1/events/evt_${'0'.repeat(32)}/redeliver`),
      404,
      'event-not-found',
    );

    const other = { key: 'another-key' };
    for (const [method, path] of [
      ['GET', `/v1/webhook-endpoints/${main.id}`],
      ['PATCH', `/v1/webhook-endpoints/${main.id}`],
      ['DELETE', `/v1/webhook-endpoints/${main.id}`],
      ['POST', `/v1/webhook-endpoints/${main.id}/rotate-secret`],
      ['GET', `/v1/webhook-endpoints/${main.id}/attempts`],
    ] as const) {
      const body = method === 'PATCH' ? { enabled: false } : undefined;
      await expectProblem(await e.call(method, path, { ...other, body }), 404, 'webhook-endpoint-not-found');
    }
    expect(await (await e.call('GET', '/v1/webhook-endpoints', other)).json()).toEqual({ items: [] });
    expect(await (await e.call('GET', '/v1/webhook-endpoints')).json()).toEqual(before);
  });
});
