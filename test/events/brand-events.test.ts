import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { runner } from 'node-pg-migrate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../common/api-key';
import { loadConfig } from '../../common/config';
import { depositWorkflowId } from '../../contracts/deposit';
import type { PixflowEvent } from '../../contracts/events';
import { brandScopedId } from '../../contracts/flow';
import { raiseAlert } from '../../db/alerts';
import { createBrand } from '../../db/brands';
import { type FlowRowWrite, upsertFlowAndEvent } from '../../db/flows';
import { MIGRATIONS_DIR, migrate } from '../../db/migrate';
import { eventPageSchema } from '../../events/event-schemas';
import {
  type ApiEnv,
  eventually,
  expectProblem,
  freshCpf,
  onboardApproved,
  startApiEnv,
} from '../api/support';
import { brandKey } from '../helpers/brands';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

// Events and webhook endpoints belong to a brand (docs/brands.md), on the real API, worker,
// Postgres and relay: each event names its brand, an endpoint receives its own brand's events
// only, and a key reads and manages only its acting brand's events and endpoints (another
// brand's is the 404 of an unknown id). An endpoint and an event from before brands are the
// default brand's. The person here is onboarded by the default brand alone: their onboarding and
// customer events are the default brand's, and the other brand, which never met them, hears
// none of them (test/events/brand-people-events.test.ts has a person two brands know).

const MIGRATION = '1732000000035_event_brands';

const OTHER = 'bet-rio';
const { WEBHOOK_SECRET, WEBHOOK_PARTNER_ID } = loadConfig({});
const SCOPES: Scope[] = [
  'onboardings:read',
  'deposits:write',
  'events:read',
  'events:write',
  'webhooks:read',
  'webhooks:write',
];

let e: ApiEnv;
let rxDefault: WebhookReceiver;
let rxOther: WebhookReceiver;
let rxPlatform: WebhookReceiver;
const person = freshCpf();
const keys = { other: '', default: '', platform: '' };
type Caller = { key: string; brand?: string };
const otherKey = (): Caller => ({ key: keys.other });
const defaultKey = (): Caller => ({ key: keys.default });
const platformNaming = (brand: string): Caller => ({ key: keys.platform, brand });

/** The endpoints: the default brand's, the other brand's, and one a platform key made for the other. */
const endpoints = { default: '', other: '', platformOther: '' };
/** The default brand's deposit, started through the API, and the other brand's flow. */
let defaultTxid: string;
const otherTxid = `${Date.now()}0000000000000000002`;
const otherFlowId = brandScopedId(depositWorkflowId(otherTxid), OTHER);
/** A default-brand deposit whose row and event the version before event brands wrote. */
const oldTxid = `${Date.now()}0000000000000000003`;
const oldFlowId = depositWorkflowId(oldTxid);
/** An alert raised by the other brand's flow. */
const alertId = `alr_${randomBytes(16).toString('hex')}`;

const depositRow = (workflowId: string, businessId: string, status: string): FlowRowWrite => ({
  workflowId,
  type: 'deposit',
  businessId,
  status,
  cpfHash: null,
  cpfMasked: null,
  merchant: 'sandbox-merchant',
  amountCentavos: 4_200,
  reason: null,
  details: {},
  seq: 1,
  at: new Date(),
  runId: null,
});

/** The database back to before event brands: the version before's schema and writers. */
async function migrateDownToBeforeEventBrands() {
  const fromThisOn = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql') && f >= MIGRATION);
  await runner({
    databaseUrl: e.databaseUrl,
    dir: MIGRATIONS_DIR,
    direction: 'down',
    migrationsTable: 'pgmigrations',
    count: fromThisOn.length,
    log: () => {},
    logger: { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} },
  });
}

function call(as: Caller, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${e.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${as.key}`,
      ...(as.brand === undefined ? {} : { 'pixflow-brand': as.brand }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const makeKey = (brandId: string | null) => brandKey(e.pool, brandId, SCOPES);

async function subscribe(as: Caller, rx: WebhookReceiver): Promise<string> {
  const res = await call(as, 'POST', '/v1/webhook-endpoints', { url: rx.url, events: ['*'] });
  expect(res.status).toBe(201);
  const ep = (await res.json()) as { id: string; secret: string };
  rx.secrets.push(ep.secret);
  return ep.id;
}

async function eventsOf(as: Caller): Promise<PixflowEvent[]> {
  const items: PixflowEvent[] = [];
  let after = '';
  for (;;) {
    const res = await call(as, 'GET', `/v1/events?limit=100${after ? `&after=${after}` : ''}`);
    expect(res.status).toBe(200);
    const page = eventPageSchema.parse(await res.json());
    items.push(...page.items);
    if (!page.hasMore) return items;
    after = page.next;
  }
}

/** The deliveries Postgres fanned out to an endpoint, by event brand: written with each event. */
const deliveredBrands = async (endpointId: string) =>
  (
    await e.pool.query(
      `SELECT DISTINCT ev.brand_id FROM webhook_deliveries d JOIN events ev ON ev.id = d.event_id
        WHERE d.endpoint_id = $1 ORDER BY 1`,
      [endpointId],
    )
  ).rows.map((r) => r.brand_id as string);

beforeAll(async () => {
  e = await startApiEnv(
    { pollScheduleMs: [1_000] },
    {
      env: { WEBHOOK_ALLOW_LOOPBACK: 'true' },
      eventsRelay: { retryScheduleMs: [200, 300, 300], timeoutMs: 1_000 },
    },
  );
  await e.sandboxControl('/sandbox/notifications', {
    url: `${e.url}/webhooks/provider/${WEBHOOK_SECRET}`,
    partnerId: WEBHOOK_PARTNER_ID,
  });
  await createBrand(
    e.pool,
    { operatorId: null, operatorEmail: 'admin@example.com', operatorRole: 'admin' },
    { id: OTHER, name: 'Bet Rio' },
  );
  keys.other = await makeKey(OTHER);
  keys.default = await makeKey('default');
  keys.platform = await makeKey(null);
  [rxDefault, rxOther, rxPlatform] = await Promise.all([
    startWebhookReceiver(),
    startWebhookReceiver(),
    startWebhookReceiver(),
  ]);
  endpoints.default = await subscribe(defaultKey(), rxDefault);
  // The upgrade: the endpoint above and a deposit's row and event the version before wrote.
  await migrateDownToBeforeEventBrands();
  await upsertFlowAndEvent(e.pool, depositRow(oldFlowId, oldTxid, 'completed'));
  await migrate(e.databaseUrl);
  endpoints.other = await subscribe(otherKey(), rxOther);
  endpoints.platformOther = await subscribe(platformNaming(OTHER), rxPlatform);

  // The default brand's onboarding and deposit through the API.
  await onboardApproved(e, person);
  const res = await call(defaultKey(), 'POST', '/v1/deposits', {
    client: { externalId: 'user-1', cpf: person, email: 'ana@example.com', name: 'Ana Souza' },
    amountCentavos: 15_000,
  });
  expect(res.status).toBe(201);
  defaultTxid = ((await res.json()) as { txid: string }).txid;
  await e.sandboxControl(`/sandbox/deposits/${defaultTxid}/pay`, {});

  // The other brand has no connector account here, so its deposit is written as its flow's
  // activity writes it: the row's first write appends its event.
  await upsertFlowAndEvent(e.pool, {
    ...depositRow(otherFlowId, otherTxid, 'awaiting_payment'),
    brandId: OTHER,
  });
  // A monitoring rule flags the person on the other brand's deposit.
  await raiseAlert(e.pool, {
    id: alertId,
    rule: 'structuring',
    cpfHash: 'a'.repeat(64),
    cpfMasked: null,
    flowId: otherFlowId,
    flowIds: [otherFlowId],
    facts: { count: 3 },
  });
}, 240_000);
afterAll(async () => {
  await e?.close();
  await Promise.all([rxDefault?.close(), rxOther?.close(), rxPlatform?.close()]);
});

describe('events belong to a brand', () => {
  it("the default brand's endpoint, made before the upgrade, receives its events and those of the person it onboarded, the one the version before wrote too, each naming brand default, and none of the other brand's", async () => {
    const defaultFlow = depositWorkflowId(defaultTxid);
    await eventually(
      () =>
        rxDefault
          .delivered()
          .filter((d) => d.body.data.flowId === defaultFlow)
          .map((d) => d.body.type),
      (types) => types.includes('deposit.completed'),
    );
    await eventually(
      () => rxOther.delivered().map((d) => d.body.data.flowId),
      (ids) => ids.includes(otherFlowId) && ids.includes(alertId),
    );
    const got = rxDefault.delivered();
    expect(got.map((d) => d.body.type)).toEqual(
      expect.arrayContaining(['onboarding.approved', 'customer.verification_updated', 'deposit.completed']),
    );
    // The event the version before wrote, to the endpoint made before: both the default brand's.
    expect(got.filter((d) => d.body.data.flowId === oldFlowId).map((d) => d.body.type)).toEqual([
      'deposit.completed',
    ]);
    expect(new Set(got.map((d) => d.body.brand))).toEqual(new Set(['default']));
    expect(got.map((d) => d.body.data.flowId)).not.toContain(otherFlowId);
    expect(got.map((d) => d.body.data.flowId)).not.toContain(alertId);
    expect(rxDefault.unverified).toEqual([]);
    expect(await deliveredBrands(endpoints.default)).toEqual(['default']);
  });

  it("the other brand's endpoints, its key's and a platform key's for it, receive its deposit's event and the alert its deposit raised, and none of the default brand's nor of the person it never met", async () => {
    for (const [rx, id] of [
      [rxOther, endpoints.other],
      [rxPlatform, endpoints.platformOther],
    ] as const) {
      await eventually(
        () => rx.delivered().map((d) => d.body.data.flowId),
        (ids) => ids.includes(otherFlowId) && ids.includes(alertId),
      );
      const got = rx.delivered();
      expect(got.map((d) => [d.body.type, d.body.brand, d.body.data.flowId])).toEqual([
        ['deposit.awaiting_payment', OTHER, otherFlowId],
        ['alert.raised', OTHER, alertId],
      ]);
      expect(rx.unverified).toEqual([]);
      // Every event is fanned out in the statement that writes it: none of the default brand's
      // was ever queued for the other brand's endpoints.
      expect(await deliveredBrands(id)).toEqual([OTHER]);
    }
  });

  it("each brand's key reads only its brand's events; another brand's event is the 404 of an unknown id", async () => {
    // The pull API lists an event once the sequencer gave it a position, after its commit.
    const ofDefault = await eventually(
      () => eventsOf(defaultKey()),
      (evs) =>
        evs.some(
          (ev) => ev.type === 'deposit.completed' && ev.data.flowId === depositWorkflowId(defaultTxid),
        ) && evs.some((ev) => ev.data.flowId === oldFlowId),
    );
    const deposit = ofDefault.find(
      (ev) => ev.type === 'deposit.completed' && ev.data.flowId === depositWorkflowId(defaultTxid),
    );
    expect(deposit?.brand).toBe('default');
    expect(ofDefault.filter((ev) => ev.data.flowId === oldFlowId).map((ev) => [ev.type, ev.brand])).toEqual([
      ['deposit.completed', 'default'],
    ]);
    expect(new Set(ofDefault.map((ev) => ev.brand))).toEqual(new Set(['default']));
    expect(ofDefault.map((ev) => ev.data.flowId)).not.toContain(otherFlowId);

    for (const as of [otherKey(), platformNaming(OTHER)]) {
      const ofOther = await eventually(
        () => eventsOf(as),
        (evs) => evs.length >= 2,
      );
      expect(ofOther.map((ev) => [ev.type, ev.brand, ev.data.flowId])).toEqual([
        ['deposit.awaiting_payment', OTHER, otherFlowId],
        ['alert.raised', OTHER, alertId],
      ]);
      const filtered = await call(as, 'GET', `/v1/events?flow=${depositWorkflowId(defaultTxid)}`);
      expect(((await filtered.json()) as { items: unknown[] }).items).toEqual([]);
      const unknown = await expectProblem(
        await call(as, 'GET', `/v1/events/evt_${'0'.repeat(32)}`),
        404,
        'event-not-found',
      );
      const foreign = await expectProblem(
        await call(as, 'GET', `/v1/events/${deposit?.id}`),
        404,
        'event-not-found',
      );
      expect(foreign.title).toBe(unknown.title);
      await expectProblem(
        await call(as, 'POST', `/v1/events/${deposit?.id}/redeliver`),
        404,
        'event-not-found',
      );
    }
    const otherEvent = (await eventsOf(otherKey()))[0];
    await expectProblem(
      await call(defaultKey(), 'GET', `/v1/events/${otherEvent?.id}`),
      404,
      'event-not-found',
    );
    await expectProblem(
      await call(platformNaming('default'), 'GET', `/v1/events/${otherEvent?.id}`),
      404,
      'event-not-found',
    );
  });

  it("another brand's key, or a platform key naming it, neither sees nor changes the default brand's endpoint", async () => {
    const id = endpoints.default;
    const before = await (await call(defaultKey(), 'GET', `/v1/webhook-endpoints/${id}`)).json();
    for (const as of [otherKey(), platformNaming(OTHER)]) {
      const list = (await (await call(as, 'GET', '/v1/webhook-endpoints')).json()) as {
        items: { id: string }[];
      };
      expect(list.items.map((ep) => ep.id)).not.toContain(id);
      const unknown = await expectProblem(
        await call(as, 'GET', `/v1/webhook-endpoints/we_${'0'.repeat(24)}`),
        404,
        'webhook-endpoint-not-found',
      );
      const tries: [string, string, unknown?][] = [
        ['GET', `/v1/webhook-endpoints/${id}`],
        ['PATCH', `/v1/webhook-endpoints/${id}`, { enabled: false }],
        ['POST', `/v1/webhook-endpoints/${id}/rotate-secret`],
        ['GET', `/v1/webhook-endpoints/${id}/attempts`],
        ['DELETE', `/v1/webhook-endpoints/${id}`],
      ];
      for (const [method, path, body] of tries) {
        const p = await expectProblem(await call(as, method, path, body), 404, 'webhook-endpoint-not-found');
        expect(p.title).toBe(unknown.title);
      }
    }
    // The platform key's own endpoint for the other brand is not the default brand's either.
    const platformDefault = (await (
      await call(platformNaming('default'), 'GET', '/v1/webhook-endpoints')
    ).json()) as {
      items: { id: string }[];
    };
    expect(platformDefault.items.map((ep) => ep.id)).not.toContain(endpoints.platformOther);
    await expectProblem(
      await call(platformNaming('default'), 'GET', `/v1/webhook-endpoints/${endpoints.platformOther}`),
      404,
      'webhook-endpoint-not-found',
    );
    expect(
      (await call(platformNaming(OTHER), 'GET', `/v1/webhook-endpoints/${endpoints.platformOther}`)).status,
    ).toBe(200);
    // Untouched: the same endpoint, enabled, its secret unchanged (it still verifies).
    expect(await (await call(defaultKey(), 'GET', `/v1/webhook-endpoints/${id}`)).json()).toEqual(before);
    const { rows } = await e.pool.query(
      'SELECT brand_id FROM webhook_endpoints WHERE id = ANY($1) ORDER BY brand_id',
      [[endpoints.default, endpoints.other, endpoints.platformOther]],
    );
    expect(rows.map((r) => r.brand_id)).toEqual(['bet-rio', 'bet-rio', 'default']);
  });
});
