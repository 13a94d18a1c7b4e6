import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../common/api-key';
import { maskCpf } from '../../common/mask';
import { cpfHash } from '../../common/pii';
import { biometricsWorkflowId } from '../../contracts/biometrics';
import type { PixflowEvent } from '../../contracts/events';
import { onboardingWorkflowId } from '../../contracts/onboarding';
import { createBrand } from '../../db/brands';
import { recordEligibility } from '../../db/eligibility';
import { timelineOf } from '../../db/events';
import { upsertFlowAndEvent } from '../../db/flows';
import { eventPageSchema } from '../../events/event-schemas';
import { type ApiEnv, eventually, freshCpf, onboardApproved, PII_KEY, startApiEnv } from '../api/support';
import { BRAND_ADMIN, brandKey } from '../helpers/brands';
import { newCpf } from '../helpers/people';
import { type Received, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

// A person's events reach every brand that knows the person (docs/brands.md, "Events and webhook
// endpoints of a brand"), on the real API, worker, Postgres and relay, with receivers verifying
// every signature. Brand A onboards a person, brand B then starts an onboarding for them too and
// so meets them: each brand's endpoint receives the person's customer, onboarding and biometric
// events from the moment its brand knows them, each its own event under its own brand. A brand
// that never met the person (C, and the default brand here) receives and lists none of them. A
// person only the default brand knows, as in a single-brand install, is one event per change.

const A = 'bet-ana';
const B = 'bet-bia';
const C = 'bet-cid';
const SCOPES: Scope[] = ['onboardings:write', 'events:read', 'webhooks:write'];

let e: ApiEnv;
/** Each brand's key and its endpoint's receiver. */
const at: Record<string, { key: string; rx: WebhookReceiver; endpoint: string }> = {};

/** The person A then B onboards (no sandbox test document: their liveness ends in a review). */
const person = newCpf();
const personHash = cpfHash(person, PII_KEY);
const personStreams = [
  `customer-${personHash}`,
  onboardingWorkflowId(personHash),
  biometricsWorkflowId(personHash),
];
/** A person only the default brand meets. */
const single = freshCpf();
const singleHash = cpfHash(single, PII_KEY);
const singleStreams = [`customer-${singleHash}`, onboardingWorkflowId(singleHash)];

/** What the person's events at A are, in the order they are appended; B meets them after the first two. */
const BEFORE_B = [
  ['onboarding.awaiting_liveness', onboardingWorkflowId(personHash)],
  ['customer.verification_updated', `customer-${personHash}`],
];
const AFTER_B = [
  ['onboarding.awaiting_review', onboardingWorkflowId(personHash)],
  ['onboarding.approved', onboardingWorkflowId(personHash)],
  ['customer.verification_updated', `customer-${personHash}`],
  ['customer.impeded', `customer-${personHash}`],
  ['biometrics.awaiting_identification', biometricsWorkflowId(personHash)],
];

function call(key: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${e.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function eventsOf(key: string): Promise<PixflowEvent[]> {
  const items: PixflowEvent[] = [];
  let after = '';
  for (;;) {
    const res = await call(key, 'GET', `/v1/events?limit=100${after ? `&after=${after}` : ''}`);
    expect(res.status).toBe(200);
    const page = eventPageSchema.parse(await res.json());
    items.push(...page.items);
    if (!page.hasMore) return items;
    after = page.next;
  }
}

const ofStreams = (streams: string[]) => (rs: Received[]) =>
  rs.filter((r) => streams.includes(r.body.data.flowId));
const typesAndFlows = (rs: Received[]) => rs.map((r) => [r.body.type, r.body.data.flowId]);
/** The same list in a stable order: each stream's events are delivered in order, streams at once. */
const sorted = <T>(xs: T[]) => [...xs].sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));

async function onboardingStatus(key: string, cpf: string): Promise<string | undefined> {
  const res = await call(key, 'GET', `/v1/onboardings/${cpf}`);
  return res.status === 200 ? ((await res.json()) as { state: { status: string } }).state.status : undefined;
}

beforeAll(async () => {
  e = await startApiEnv(
    { pollScheduleMs: [1_000] },
    {
      env: { WEBHOOK_ALLOW_LOOPBACK: 'true' },
      eventsRelay: { retryScheduleMs: [200, 300, 300], timeoutMs: 1_000 },
    },
  );
  await e.sandboxControl('/sandbox/notifications', { url: e.ingress, partnerId: e.partnerId });
  for (const id of [A, B, C]) await createBrand(e.pool, BRAND_ADMIN, { id, name: `Bet ${id}` });
  for (const id of [A, B, C, 'default']) {
    const key = await brandKey(e.pool, id, SCOPES);
    const rx = await startWebhookReceiver();
    const res = await call(key, 'POST', '/v1/webhook-endpoints', { url: rx.url, events: ['*'] });
    expect(res.status).toBe(201);
    const ep = (await res.json()) as { id: string; secret: string };
    rx.secrets.push(ep.secret);
    at[id] = { key, rx, endpoint: ep.id };
  }
  const keyOf = (id: string) => at[id]?.key ?? '';
  const start = (id: string) =>
    call(keyOf(id), 'POST', '/v1/onboardings', { cpf: person, plan: 'plan_basic', event: 'onboarding' });

  // A meets the person: its onboarding waits for the liveness.
  expect((await start(A)).status).toBe(201);
  await eventually(
    () => onboardingStatus(keyOf(A), person),
    (s) => s === 'awaiting_liveness',
    30_000,
  );
  // B starts an onboarding for them too: the one in flight, and B knows the person from now on.
  expect((await start(B)).status).toBe(200);
  await e.sandboxControl('/sandbox/liveness/complete', { document: person });
  await eventually(
    () => onboardingStatus(keyOf(B), person),
    (s) => s === 'awaiting_review',
    30_000,
  );
  const review = await call(keyOf(B), 'POST', `/v1/onboardings/${person}/review`, {
    decision: 'approve',
    by: 'ops@bet-bia.example',
    reason: 'documents checked',
  });
  expect(review.status).toBe(202);
  await eventually(
    () => onboardingStatus(keyOf(A), person),
    (s) => s === 'approved',
    30_000,
  );
  // The registry names the person, and a payout's step-up asks for their biometric
  // identification: written as their activities write them.
  await recordEligibility(e.pool, {
    cpfHash: personHash,
    cpfMasked: maskCpf(person),
    status: 'impeded',
    reason: 'self_excluded',
    until: null,
    source: 'registry:rescreening',
    at: new Date(),
  });
  await upsertFlowAndEvent(e.pool, {
    workflowId: biometricsWorkflowId(personHash),
    type: 'biometrics',
    businessId: personHash,
    status: 'awaiting_identification',
    cpfHash: personHash,
    cpfMasked: maskCpf(person),
    merchant: null,
    amountCentavos: null,
    reason: null,
    details: {},
    seq: 1,
    at: new Date(),
    runId: null,
  });

  // The default brand alone meets another person, through the API as a single-brand install does.
  await onboardApproved(e, single);
}, 240_000);
afterAll(async () => {
  await e?.close();
  await Promise.all(Object.values(at).map((b) => b.rx.close()));
});

describe("a person's events reach every brand that knows them", () => {
  it("A's endpoint receives every one of the person's events, B's those from when B met them, each its own event under its own brand", async () => {
    const rxA = at[A]?.rx as WebhookReceiver;
    const rxB = at[B]?.rx as WebhookReceiver;
    const gotA = await eventually(
      () => ofStreams(personStreams)(rxA.delivered()),
      (rs) => rs.length >= BEFORE_B.length + AFTER_B.length,
    );
    const gotB = await eventually(
      () => ofStreams(personStreams)(rxB.delivered()),
      (rs) => rs.length >= AFTER_B.length,
    );
    expect(sorted(typesAndFlows(gotA))).toEqual(sorted([...BEFORE_B, ...AFTER_B]));
    expect(sorted(typesAndFlows(gotB))).toEqual(sorted(AFTER_B));
    expect(new Set(gotA.map((r) => r.body.brand))).toEqual(new Set([A]));
    expect(new Set(gotB.map((r) => r.body.brand))).toEqual(new Set([B]));
    expect(rxA.unverified).toEqual([]);
    expect(rxB.unverified).toEqual([]);

    // Each of B's is the same change as A's copy: the stream's own number and state, another id.
    const key = (r: Received) => `${r.body.data.flowId}#${r.body.data.sequence}`;
    const aByKey = new Map(gotA.map((r) => [key(r), r]));
    for (const b of gotB) {
      const a = aByKey.get(key(b));
      expect(a?.body.type).toBe(b.body.type);
      expect(a?.body.data.state).toEqual(b.body.data.state);
      expect(a?.webhookId).not.toBe(b.webhookId);
    }
    // The verification B hears of is the approval its review decided; A heard of the pending one too.
    const verifications = (rs: Received[]) =>
      rs
        .filter((r) => r.body.type === 'customer.verification_updated')
        .map((r) => (r.body.data.state as { verification: string }).verification);
    expect(sorted(verifications(gotA))).toEqual(['approved', 'pending']);
    expect(verifications(gotB)).toEqual(['approved']);

    // Each brand's key lists the copies its endpoint received, under their ids.
    for (const [id, got] of [
      [A, gotA],
      [B, gotB],
    ] as const) {
      const listed = await eventually(
        async () =>
          (await eventsOf(at[id]?.key ?? '')).filter((ev) => personStreams.includes(ev.data.flowId)),
        (evs) => evs.length >= got.length,
      );
      expect(sorted(listed.map((ev) => ev.id))).toEqual(sorted(got.map((r) => r.webhookId)));
      expect(new Set(listed.map((ev) => ev.brand))).toEqual(new Set([id]));
    }
  });

  it('a brand that never met the person receives none of their events and lists none', async () => {
    // Every event is fanned out in the statement that appends it: what was never queued for an
    // endpoint never reaches it.
    const { rows } = await e.pool.query(
      `SELECT d.endpoint_id, count(*)::int AS n FROM webhook_deliveries d JOIN events ev ON ev.id = d.event_id
        WHERE ev.stream_id = ANY($1) GROUP BY 1`,
      [personStreams],
    );
    const queued = Object.fromEntries(rows.map((r) => [r.endpoint_id, r.n]));
    expect(queued).toEqual({
      [at[A]?.endpoint ?? '']: BEFORE_B.length + AFTER_B.length,
      [at[B]?.endpoint ?? '']: AFTER_B.length,
    });
    // C never met anyone: it lists no event at all.
    expect(await eventsOf(at[C]?.key ?? '')).toEqual([]);
    expect(at[C]?.rx.received).toEqual([]);
    // The default brand met only the other person.
    const ofDefault = await eventsOf(at.default?.key ?? '');
    expect(ofDefault.filter((ev) => personStreams.includes(ev.data.flowId))).toEqual([]);
    expect(ofStreams(personStreams)(at.default?.rx.received ?? [])).toEqual([]);
  });

  it("the back office's timeline of the person shows each change once, however many brands heard of it, by the operator's brand's copy", async () => {
    const brandOfChange = async (brands: string[] | null) =>
      Object.fromEntries(
        (await timelineOf(e.pool, personStreams, 500, brands)).map((ev) => [
          `${ev.type} ${ev.data.flowId}#${ev.data.sequence}`,
          ev.brand,
        ]),
      );
    const changes = [...BEFORE_B, ...AFTER_B];
    // An admin (every brand): each change once, by its first copy, A's.
    const all = await brandOfChange(null);
    expect(Object.keys(all)).toHaveLength(changes.length);
    expect(new Set(Object.values(all))).toEqual(new Set([A]));
    // An operator granted B: the changes B heard of by B's copy, the earlier ones by A's.
    const ofB = await brandOfChange([B]);
    expect(Object.keys(ofB).sort()).toEqual(Object.keys(all).sort());
    expect(Object.values(ofB).filter((b) => b === B)).toHaveLength(AFTER_B.length);
    expect(Object.values(ofB).filter((b) => b === A)).toHaveLength(BEFORE_B.length);
  });

  it('a person only the default brand knows is one event per change, at the default brand alone', async () => {
    const rx = at.default?.rx as WebhookReceiver;
    const got = await eventually(
      () => ofStreams(singleStreams)(rx.delivered()),
      (rs) => rs.some((r) => r.body.type === 'onboarding.approved'),
    );
    const { rows } = await e.pool.query(
      'SELECT id, stream_id, seq, brand_id FROM events WHERE stream_id = ANY($1) ORDER BY stream_id, seq',
      [singleStreams],
    );
    // Every change once: one event per number of each stream, the default brand's.
    expect(new Set(rows.map((r) => `${r.stream_id}#${r.seq}`)).size).toBe(rows.length);
    expect(new Set(rows.map((r) => r.brand_id))).toEqual(new Set(['default']));
    expect(rows.map((r) => r.stream_id)).toEqual(expect.arrayContaining(singleStreams));
    await eventually(
      () => ofStreams(singleStreams)(rx.delivered()).length,
      (n) => n === rows.length,
    );
    expect(sorted(ofStreams(singleStreams)(rx.delivered()).map((r) => r.webhookId))).toEqual(
      sorted(rows.map((r) => r.id)),
    );
    expect(got.every((r) => r.body.brand === 'default')).toBe(true);
    expect(rx.unverified).toEqual([]);
    for (const id of [A, B, C]) {
      expect(ofStreams(singleStreams)(at[id]?.rx.received ?? [])).toEqual([]);
    }
  });
});
