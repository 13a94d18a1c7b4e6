import { randomBytes, randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve as resolvePath } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createApp } from '../../api/app';
import { loadConfig } from '../../common/config';
import { createLogger } from '../../common/logger';
import { cpfHash } from '../../common/pii';
import type { AccountKeys } from '../../connectors/accounts';
import { depositWorkflowId } from '../../contracts/deposit';
import { onboardingWorkflowId } from '../../contracts/onboarding';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import { migrate } from '../../db/migrate';
import { createPool, type Pool } from '../../db/pool';
import { eventsRelaySettings, startEventsRelay } from '../../events/outbox-relay';
import { NOTIFICATION_POINTS } from '../../ingress/notification';
import { pixflowNexusService } from '../../nexus/handlers';
import { PIXFLOW_API_KEY_HEADER, PIXFLOW_BRAND_HEADER, pixflowService } from '../../nexus/service';
import { staticPolicyReader } from '../../policy/seed';
import type { RunningSandbox } from '../../sandbox';
import { startProviderSandbox } from '../contract/support';
import {
  atSandbox,
  brandIngress,
  brandKey,
  brandSandboxOptions,
  setUpBrand,
  startBrandWorker,
  type TestBrand,
  testBrand,
} from '../helpers/brands';
import { newPerson, onboard, sendLivenessCallbacksTo } from '../helpers/people';
import { defaultPolicy } from '../helpers/policy';
import { freshDatabase } from '../helpers/postgres';
import { sandboxControl } from '../helpers/sandbox-client';
import { expectSdkLog, settleSdkLogs } from '../helpers/sdk-log';
import { testCodecKeys, testDataConverter } from '../helpers/temporal';
import { waitUntil } from '../helpers/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

// Brand isolation over every route and method (docs/brands.md, "The isolation suite"), on the
// real API, worker, Temporal, Postgres and events relay, with each brand's provider a sandbox of
// its own. Brands A and B each run a deposit, a withdrawal, the (shared) onboarding, a webhook
// endpoint and their events, the same txid and transactionId at both. Then every /v1 operation
// the API's own /openapi.json lists, and every operation of the Nexus service definition, is
// called as B (B's key, and a platform key naming B) with A's identifiers in its path, query and
// body. The table below says how each operation's parameters are filled and what it must answer;
// an operation the table does not know fails the suite, so a route added later must be added
// here. A person's verification is shared by the brands (docs/rules.md, "A person across brands"),
// but a brand sees only the people it has met (docs/brands.md, "People a brand knows"): A's person,
// whom B never onboarded, is to B on every person route an unknown CPF, word for word, until B
// onboards them (its onboarding comes after every read, before B's creates), then reads as for A.
// B's own flows of the same ids are for a person B onboarded itself.

const PII_KEY = `iso-routes-${randomBytes(8).toString('hex')}`;
const keys: AccountKeys = { codecKeys: testCodecKeys, hashKey: PII_KEY };
const tag = randomBytes(3).toString('hex');
const taskQueue = `iso-routes-${tag}`;
const log = createLogger('brand-isolation-routes', 'silent');

const brand = (id: string): TestBrand => ({ ...testBrand(id), name: `Iso ${id}` });
let A = brand(`iso-a-${tag}`);
let B = brand(`iso-b-${tag}`);
const sandboxes = new Map<string, RunningSandbox>();

const config = loadConfig({
  API_KEYS: 'iso-routes-bootstrap-key',
  TEMPORAL_ADDRESS: inject('temporalAddress'),
  TEMPORAL_TASK_QUEUE: taskQueue,
  PII_HASH_KEY: PII_KEY,
  PROVIDER_MERCHANT: 'sandbox-merchant',
  LOG_LEVEL: 'silent',
  AUTH_FAILURE_LIMIT: '1000',
  API_RATE_LIMIT_PER_MINUTE: '100000',
  WEBHOOK_ALLOW_LOOPBACK: 'true',
});

let pool: Pool;
let connection: Connection;
let nativeConnection: NativeConnection;
let temporal: Client;
let server: http.Server;
let api: string;
let envSandbox: RunningSandbox;
let worker: Worker;
let running: Promise<void>;
let closeCache: () => void;
let relay: { stop(): Promise<void> };
let nexusEndpoint: { id: string; version: unknown } | undefined;
let nexusBase: string;

/** Who calls: a brand's key, or a platform key naming a brand. */
interface Caller {
  who: string;
  key: string;
  brand?: string;
}
const callers = { a: {} as Caller, platformA: {} as Caller, b: {} as Caller, platformB: {} as Caller };
let rxA: WebhookReceiver;
let rxB: WebhookReceiver;

function call(as: Caller, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${api}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${as.key}`,
      ...(as.brand === undefined ? {} : { 'pixflow-brand': as.brand }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
}
const jsonAt = async (as: Caller, path: string) => {
  const res = await call(as, 'GET', path);
  expect(res.status, `${as.who} GET ${path}: ${await res.clone().text()}`).toBe(200);
  // biome-ignore lint/suspicious/noExplicitAny: answers read field by field
  return (await res.json()) as any;
};
const statusAt = async (as: Caller, path: string) => (await jsonAt(as, path)).state.status as string;
const waitStatus = (as: Caller, path: string, status: string) =>
  waitUntil(
    () => statusAt(as, path),
    (s) => s === status,
    30_000,
  );

const person = newPerson();
const client = { externalId: 'iso-user', cpf: person.cpf, email: 'iso@example.com', name: 'Iso Person' };
/** The person B onboarded itself, whose money B moves under the ids A used too. */
const bPerson = newPerson();
const bClient = { externalId: 'iso-b-user', cpf: bPerson.cpf, email: 'isob@example.com', name: 'Iso B' };
const newTxid = () => `${Date.now()}${randomBytes(3).readUIntBE(0, 3)}`;

/** A's identifiers, and B's flows of the same ids. */
const ids = {
  /** A deposit and a withdrawal at both brands: the same txid and transactionId, two flows each. */
  sharedTxid: newTxid(),
  sharedTransactionId: `iso-wd-${Date.now()}-${tag}`,
  /** A's alone: a deposit waiting for its payment and a payout sent, not yet confirmed. */
  aTxid: '',
  aTransactionId: `iso-wa-${Date.now()}-${tag}`,
  /** A's endpoints: its key's, and a platform key's made naming A. */
  aEndpoints: [] as string[],
  aEvents: [] as string[],
  /** A's alone too, for the Nexus operations (the API's creates make B's flows of the ones above). */
  aTxidNexus: '',
  aTransactionIdNexus: `iso-wn-${Date.now()}-${tag}`,
  /** The person's accounts A's key registered, one for each of B's callers to remove (the person's). */
  personAccounts: new Map<string, string>(),
};

/** Ids of the same shape nobody used. */
const unknownIds = {
  cpf: newPerson().cpf,
  txid: newTxid(),
  transactionId: `iso-none-${Date.now()}-${tag}`,
  endpoint: `we_${randomBytes(12).toString('hex')}`,
  event: `evt_${randomBytes(16).toString('hex')}`,
};

beforeAll(async () => {
  const url = await freshDatabase();
  await migrate(url);
  pool = createPool(url, 8);
  connection = await Connection.connect({ address: inject('temporalAddress') });
  temporal = new Client({ connection, dataConverter: testDataConverter });
  nativeConnection = await NativeConnection.connect({ address: inject('temporalAddress') });
  const policy = staticPolicyReader(defaultPolicy());

  const app = createApp({ config, temporal, pool, log, policy });
  server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  // The environment's provider, the default brand's, where the shared onboarding runs.
  const envIngress = `${api}/webhooks/provider/${config.WEBHOOK_SECRET}`;
  envSandbox = await startProviderSandbox({
    notificationTarget: { url: envIngress, partnerId: config.WEBHOOK_PARTNER_ID },
  });
  await sendLivenessCallbacksTo(envSandbox.url, envIngress, config.WEBHOOK_PARTNER_ID);
  const withSandbox = async (b: TestBrand): Promise<TestBrand> => {
    const sandbox = await startProviderSandbox(brandSandboxOptions(b, brandIngress(api, b)));
    sandboxes.set(b.id, sandbox);
    const at = atSandbox(b, sandbox.url);
    await setUpBrand(pool, keys, at);
    return at;
  };
  A = await withSandbox(A);
  B = await withSandbox(B);
  callers.a = { who: "A's key", key: await brandKey(pool, A.id) };
  callers.b = { who: "B's key", key: await brandKey(pool, B.id) };
  const platformKey = await brandKey(pool, null);
  callers.platformA = { who: 'a platform key naming A', key: platformKey, brand: A.id };
  callers.platformB = { who: 'a platform key naming B', key: platformKey, brand: B.id };

  ({ worker, running, closeCache } = await startBrandWorker({
    temporal,
    nativeConnection,
    taskQueue,
    pool,
    keys,
    envSandboxUrl: envSandbox.url,
    policy,
    log,
    worker: {
      // As worker/main.ts: what crosses Nexus is written in the clear.
      // (Its path by hand: nexusBundleOptions() resolves it as the compiled image and tsx do.)
      dataConverter: {
        ...testDataConverter,
        payloadConverterPath: resolvePath(__dirname, '../../common/payload-converter.ts'),
      },
      nexusServices: [pixflowNexusService({ config, pool })],
    },
  }));
  relay = startEventsRelay({
    pool,
    log,
    codecKeys: config.codecKeys,
    settings: { ...eventsRelaySettings(config), intervalMs: 100, idleMs: 100 },
  });

  // A Nexus endpoint of this file's own, on this worker's task queue, reached over the server's HTTP.
  const created = await connection.operatorService.createNexusEndpoint({
    spec: {
      name: `iso-routes-${tag}`,
      target: { worker: { namespace: 'default', taskQueue } },
    },
  });
  nexusEndpoint = { id: created.endpoint?.id as string, version: created.endpoint?.version };
  const { clusters } = await connection.operatorService.listClusters({});
  nexusBase = `http://${clusters?.[0]?.httpAddress}/nexus/endpoints/${nexusEndpoint.id}/services/${pixflowService.name}`;
}, 120_000);

afterAll(async () => {
  await new Promise<void>((resolve) => {
    if (!server) return resolve();
    server.close(() => resolve());
    server.closeAllConnections();
  });
  await relay?.stop();
  worker?.shutdown();
  await running;
  for await (const wf of temporal.workflow.list({
    query: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`,
  })) {
    await temporal.workflow
      .getHandle(wf.workflowId, wf.runId)
      .terminate('test over')
      .catch(() => {});
  }
  if (nexusEndpoint) {
    await connection.operatorService
      .deleteNexusEndpoint({ id: nexusEndpoint.id, version: nexusEndpoint.version as never })
      .catch(() => {});
  }
  closeCache?.();
  await envSandbox?.close();
  for (const s of sandboxes.values()) await s.close();
  await rxA?.close();
  await rxB?.close();
  await nativeConnection?.close();
  await connection?.close();
  await pool?.end();
});

/** A deposit and a withdrawal at one brand, through the API: the deposit paid, the payout confirmed. */
async function moneyAt(
  b: TestBrand,
  as: Caller,
  { client, person }: { client: typeof bClient; person: typeof bPerson },
) {
  const sandbox = sandboxes.get(b.id) as RunningSandbox;
  const { sharedTxid: txid, sharedTransactionId: transactionId } = ids;
  const deposit = await call(as, 'POST', '/v1/deposits', { txid, amountCentavos: 15_000, client });
  expect(deposit.status, await deposit.clone().text()).toBe(201);
  expect(await deposit.json()).toMatchObject({ workflowId: depositWorkflowId(txid, b.id) });
  await sandboxControl(sandbox.url, `/sandbox/deposits/${txid}/pay`);
  await waitStatus(as, `/v1/deposits/${txid}`, 'completed');
  const sent = await call(as, 'POST', '/v1/withdrawals', {
    transactionId,
    client,
    pixKey: person.cpf,
    pixType: 'CPF',
    amountCentavos: 9_000,
  });
  expect(sent.status, await sent.clone().text()).toBe(202);
  await waitStatus(as, `/v1/withdrawals/${transactionId}`, 'processing');
  await sandboxControl(sandbox.url, `/sandbox/withdrawals/${transactionId}/settle`);
  await waitStatus(as, `/v1/withdrawals/${transactionId}`, 'completed');
  await waitUntil(
    () => call(as, 'GET', `/v1/withdrawals/${transactionId}/receipt.png`),
    (r) => r.status === 200,
    15_000,
  );
}

/** An endpoint of the caller's brand, delivering to `rx`, which verifies with its secret. */
async function subscribe(as: Caller, rx: WebhookReceiver): Promise<string> {
  const res = await call(as, 'POST', '/v1/webhook-endpoints', { url: rx.url, events: ['*'] });
  expect(res.status, await res.clone().text()).toBe(201);
  const ep = (await res.json()) as { id: string; secret: string };
  rx.secrets.push(ep.secret);
  return ep.id;
}

/** Every event the caller's brand lists. */
async function eventIdsOf(as: Caller): Promise<string[]> {
  const found: string[] = [];
  let after = '';
  for (;;) {
    const page = await jsonAt(as, `/v1/events?limit=100${after ? `&after=${after}` : ''}`);
    found.push(...(page.items as { id: string }[]).map((e) => e.id));
    if (!page.hasMore) return found;
    after = page.next;
  }
}

// ---- The table: how each /v1 operation is called as B with A's identifiers, and what it must answer.

/** What an answer must be. */
type Expect =
  /** Word for word the answer to the same request naming ids nobody used (`unknown`). */
  | { is: 'as-unknown'; unknown: Record<string, string>; status?: number }
  /** B's own flow of the same id, never A's. */
  | { is: 'own-flow'; workflowId: string }
  /** A list: 200, none of A's items in it (nor those `lacks` names). */
  | { is: 'list'; holds?: (as: Caller) => string[]; empty?: boolean; lacks?: string[] }
  /** A flow created for B under A's id: B's workflow id, never A's. */
  | { is: 'created'; workflowId: string; statuses: number[] }
  /** The person's, once B met them: the status A would get; nothing of A's in it. */
  | { is: 'person'; statuses: number[]; sameForA?: boolean }
  /** An endpoint B makes: its own, delivering its own brand's events. */
  | { is: 'own-endpoint' };

interface Case {
  /** Why these values. */
  why: string;
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  expect: Expect;
}

/** An operation's request body example in the document: each case's body starts from it. */
// biome-ignore lint/suspicious/noExplicitAny: the document's examples are free JSON
type Examples = Record<string, any>;

/**
 * Each operation (`METHOD /v1/path`): the cases B sends it. Creates come last in the run: a
 * B flow made under A's id would answer B's later reads of that id.
 */
const TABLE: Record<string, (ex: Examples, as: Caller) => Case[]> = {
  'POST /v1/onboardings': (ex) => [
    {
      why: "A's person: B meets them, the person's one onboarding (approved) answered at once",
      body: { ...ex, cpf: person.cpf },
      expect: { is: 'person', statuses: [200] },
    },
  ],
  'GET /v1/onboardings/{cpf}': () => [
    {
      why: "A's person, whom B never met",
      params: { cpf: person.cpf },
      expect: { is: 'as-unknown', unknown: { cpf: unknownIds.cpf } },
    },
  ],
  'POST /v1/onboardings/{cpf}/liveness-link': () => [
    {
      why: "A's person, whom B never met",
      params: { cpf: person.cpf },
      expect: { is: 'as-unknown', unknown: { cpf: unknownIds.cpf } },
    },
  ],
  'GET /v1/onboardings/{cpf}/liveness-link/qrcode.png': () => [
    {
      why: "A's person, whom B never met",
      params: { cpf: person.cpf },
      expect: { is: 'as-unknown', unknown: { cpf: unknownIds.cpf } },
    },
  ],
  'POST /v1/onboardings/{cpf}/review': (ex) => [
    {
      why: "A's person, whom B never met (to A: approved, nothing to review)",
      params: { cpf: person.cpf },
      body: ex,
      expect: { is: 'as-unknown', unknown: { cpf: unknownIds.cpf } },
    },
  ],
  'GET /v1/biometrics/{cpf}': () => [
    {
      why: "A's person, whom B never met",
      params: { cpf: person.cpf },
      expect: { is: 'as-unknown', unknown: { cpf: unknownIds.cpf } },
    },
  ],
  'POST /v1/deposits': (ex) => [
    {
      why: "A's own txid: a new flow of B's",
      body: { ...ex, txid: ids.aTxid, client, amountCentavos: 1_000 },
      expect: { is: 'created', workflowId: depositWorkflowId(ids.aTxid, B.id), statuses: [200, 201] },
    },
  ],
  'GET /v1/deposits/{txid}': () => [
    {
      why: "A's deposit waiting for payment",
      params: { txid: ids.aTxid },
      expect: { is: 'as-unknown', unknown: { txid: unknownIds.txid } },
    },
    {
      why: 'the txid both brands used',
      params: { txid: ids.sharedTxid },
      expect: { is: 'own-flow', workflowId: depositWorkflowId(ids.sharedTxid, B.id) },
    },
  ],
  'POST /v1/deposits/{txid}/resolution': (ex) => [
    {
      why: "A's deposit waiting for payment",
      params: { txid: ids.aTxid },
      body: ex,
      expect: { is: 'as-unknown', unknown: { txid: unknownIds.txid } },
    },
  ],
  'GET /v1/deposits/{txid}/qrcode.png': () => [
    {
      why: "A's deposit waiting for payment, whose QR code A is served",
      params: { txid: ids.aTxid },
      expect: { is: 'as-unknown', unknown: { txid: unknownIds.txid } },
    },
  ],
  'POST /v1/withdrawals': (ex) => [
    {
      why: "A's own transactionId: a new flow of B's",
      body: {
        ...ex,
        transactionId: ids.aTransactionId,
        client,
        pixKey: person.cpf,
        pixType: 'CPF',
        amountCentavos: 1_000,
      },
      expect: {
        is: 'created',
        workflowId: withdrawalWorkflowId(ids.aTransactionId, B.id),
        statuses: [200, 202],
      },
    },
  ],
  'GET /v1/withdrawals/{transactionId}': () => [
    {
      why: "A's payout, sent and not yet confirmed",
      params: { transactionId: ids.aTransactionId },
      expect: { is: 'as-unknown', unknown: { transactionId: unknownIds.transactionId } },
    },
    {
      why: 'the transactionId both brands used',
      params: { transactionId: ids.sharedTransactionId },
      expect: { is: 'own-flow', workflowId: withdrawalWorkflowId(ids.sharedTransactionId, B.id) },
    },
  ],
  'GET /v1/withdrawals/{transactionId}/biometrics-link/qrcode.png': () => [
    {
      why: "A's payout",
      params: { transactionId: ids.aTransactionId },
      expect: { is: 'as-unknown', unknown: { transactionId: unknownIds.transactionId } },
    },
  ],
  'GET /v1/withdrawals/{transactionId}/receipt.png': () => [
    {
      why: "A's payout",
      params: { transactionId: ids.aTransactionId },
      expect: { is: 'as-unknown', unknown: { transactionId: unknownIds.transactionId } },
    },
  ],
  'GET /v1/flows': (): Case[] => [
    {
      why: "every flow: B's, and B's person's onboarding, never A's person's",
      query: { limit: '100' },
      expect: {
        is: 'list',
        holds: () => [...bFlowIds(), onboardingOf(bPerson)],
        lacks: [onboardingOf(person)],
      },
    },
    {
      why: "A's person's flows: none, their onboarding not even",
      query: { cpf: person.cpf, limit: '100' },
      expect: { is: 'list', empty: true },
    },
    {
      why: 'deposits',
      query: { type: 'deposit', limit: '100' },
      expect: { is: 'list', holds: () => [depositWorkflowId(ids.sharedTxid, B.id)] },
    },
    {
      why: 'withdrawals',
      query: { type: 'withdrawal', limit: '100' },
      expect: { is: 'list', holds: () => [withdrawalWorkflowId(ids.sharedTransactionId, B.id)] },
    },
  ],
  'GET /v1/customers/{cpf}': () => [
    {
      why: "A's person, whom B never met",
      params: { cpf: person.cpf },
      expect: { is: 'as-unknown', unknown: { cpf: unknownIds.cpf } },
    },
  ],
  'GET /v1/customers/{cpf}/accounts': () => [
    {
      why: "A's person, whom B never met",
      params: { cpf: person.cpf },
      expect: { is: 'as-unknown', unknown: { cpf: unknownIds.cpf } },
    },
  ],
  'POST /v1/customers/{cpf}/accounts': (ex) => [
    {
      why: "A's person, whom B never met",
      params: { cpf: person.cpf },
      body: ex,
      expect: { is: 'as-unknown', unknown: { cpf: unknownIds.cpf } },
    },
  ],
  'DELETE /v1/customers/{cpf}/accounts/{id}': (_, as) => [
    {
      why: "an account A's key registered for A's person, whom B never met",
      params: { cpf: person.cpf, id: ids.personAccounts.get(as.key) ?? '' },
      expect: { is: 'as-unknown', unknown: { cpf: unknownIds.cpf } },
    },
  ],
  'GET /v1/customers/{cpf}/deposit-limits': () => [
    {
      why: "A's person, whom B never met",
      params: { cpf: person.cpf },
      expect: { is: 'as-unknown', unknown: { cpf: unknownIds.cpf } },
    },
  ],
  'PUT /v1/customers/{cpf}/deposit-limits': () => [
    {
      why: "A's person, whom B never met",
      params: { cpf: person.cpf },
      body: { daily: 5_000_000, weekly: null, monthly: null },
      expect: { is: 'as-unknown', unknown: { cpf: unknownIds.cpf } },
    },
  ],
  'POST /v1/webhook-endpoints': () => [
    {
      why: "an endpoint of B's own, at B's receiver",
      body: { url: '', events: ['*'] },
      expect: { is: 'own-endpoint' },
    },
  ],
  'GET /v1/webhook-endpoints': () => [
    {
      why: "every endpoint of the caller's",
      expect: { is: 'list', holds: (as) => [bEndpointOf.get(as.key) ?? ''] },
    },
  ],
  'GET /v1/webhook-endpoints/{id}': () =>
    ids.aEndpoints.map((id) => ({
      why: "A's endpoint",
      params: { id },
      expect: { is: 'as-unknown', unknown: { id: unknownIds.endpoint } } as const,
    })),
  'PATCH /v1/webhook-endpoints/{id}': (ex) =>
    ids.aEndpoints.map((id) => ({
      why: "A's endpoint",
      params: { id },
      body: { ...ex, enabled: false },
      expect: { is: 'as-unknown', unknown: { id: unknownIds.endpoint } } as const,
    })),
  'DELETE /v1/webhook-endpoints/{id}': () =>
    ids.aEndpoints.map((id) => ({
      why: "A's endpoint",
      params: { id },
      expect: { is: 'as-unknown', unknown: { id: unknownIds.endpoint } } as const,
    })),
  'POST /v1/webhook-endpoints/{id}/rotate-secret': () =>
    ids.aEndpoints.map((id) => ({
      why: "A's endpoint",
      params: { id },
      expect: { is: 'as-unknown', unknown: { id: unknownIds.endpoint } } as const,
    })),
  'GET /v1/webhook-endpoints/{id}/attempts': (_, as): Case[] => [
    ...ids.aEndpoints.map((id) => ({
      why: "A's endpoint",
      params: { id },
      expect: { is: 'as-unknown', unknown: { id: unknownIds.endpoint } } as const,
    })),
    // The caller's own endpoint's attempts at A's events: none.
    ...ids.aEvents.map((event) => ({
      why: "B's endpoint, A's event",
      params: { id: bEndpointOf.get(as.key) ?? '' },
      query: { event },
      expect: { is: 'list', empty: true } as const,
    })),
  ],
  'GET /v1/events': () => [
    { why: 'every event', query: { limit: '100' }, expect: { is: 'list', holds: () => bEvents } },
    ...flowIdsOfA().map((flow) => ({
      why: `the events of A's flow ${flow}`,
      query: { flow, limit: '100' },
      expect: { is: 'list', empty: true } as const,
    })),
  ],
  'GET /v1/events/{id}': () =>
    ids.aEvents.map((id) => ({
      why: "A's event",
      params: { id },
      expect: { is: 'as-unknown', unknown: { id: unknownIds.event } } as const,
    })),
  'POST /v1/events/{id}/redeliver': (): Case[] => [
    ...ids.aEvents.flatMap((id): Case[] => [
      {
        why: "A's event, to the caller's endpoints",
        params: { id },
        expect: { is: 'as-unknown', unknown: { id: unknownIds.event } } as const,
      },
      ...ids.aEndpoints.map((endpoint) => ({
        why: "A's event, to A's endpoint",
        params: { id },
        query: { endpoint },
        expect: { is: 'as-unknown', unknown: { id: unknownIds.event } } as const,
      })),
    ]),
    // B's own event, to A's endpoint: queued for no endpoint (202, `endpoints: []`), as to an
    // endpoint nobody made.
    ...ids.aEndpoints.map((endpoint) => ({
      why: "B's own event, to A's endpoint",
      params: { id: bEvents[0] ?? '' },
      query: { endpoint },
      expect: { is: 'as-unknown', unknown: { endpoint: unknownIds.endpoint }, status: 202 } as const,
    })),
  ],
};

// ---- The Nexus table: how each operation of pixflow's service is called as B with A's identifiers.

interface NexusCase {
  why: string;
  input: Record<string, unknown>;
  expect:
    | { is: 'as-unknown'; unknown: Record<string, unknown> }
    /** Answered (the person's, or B's own flow: then not A's answer), nothing of A's in it. */
    | { is: 'answered'; statuses: number[]; notAsForA?: boolean }
    /** A flow of B's started under A's id, never A's. */
    | { is: 'started'; workflowId: string; statuses: number[] };
}

const NEXUS_TABLE: Record<string, () => NexusCase[]> = {
  startOnboarding: () => [
    {
      why: "A's person: the onboarding is the person's",
      input: { cpf: person.cpf, plan: 'plan_basic', event: 'iso' },
      expect: { is: 'answered', statuses: [200] },
    },
  ],
  createDeposit: () => [
    {
      why: "A's own txid: a new flow of B's",
      input: { txid: ids.aTxidNexus, amountCentavos: 1_000, client },
      expect: { is: 'started', workflowId: depositWorkflowId(ids.aTxidNexus, B.id), statuses: [200] },
    },
  ],
  requestWithdrawal: () => [
    {
      why: "A's own transactionId: a new flow of B's",
      input: {
        transactionId: ids.aTransactionIdNexus,
        amountCentavos: 1_000,
        pixKey: person.cpf,
        pixType: 'CPF',
        client,
      },
      expect: {
        is: 'started',
        workflowId: withdrawalWorkflowId(ids.aTransactionIdNexus, B.id),
        // Started, its outcome to come (an asynchronous operation).
        statuses: [201],
      },
    },
  ],
  waitForOutcome: () => [
    {
      why: "A's deposit waiting for payment",
      input: { flow: 'deposit', txid: ids.aTxidNexus },
      expect: { is: 'as-unknown', unknown: { flow: 'deposit', txid: unknownIds.txid } },
    },
    {
      why: "A's payout, sent and not yet confirmed",
      input: { flow: 'withdrawal', transactionId: ids.aTransactionIdNexus },
      expect: { is: 'as-unknown', unknown: { flow: 'withdrawal', transactionId: unknownIds.transactionId } },
    },
    {
      why: "the txid both brands used: B's own deposit",
      input: { flow: 'deposit', txid: ids.sharedTxid },
      expect: { is: 'answered', statuses: [200], notAsForA: true },
    },
    {
      why: "the transactionId both brands used: B's own payout",
      input: { flow: 'withdrawal', transactionId: ids.sharedTransactionId },
      expect: { is: 'answered', statuses: [200], notAsForA: true },
    },
    {
      why: "A's person's onboarding: the person's",
      input: { flow: 'onboarding', cpf: person.cpf },
      expect: { is: 'answered', statuses: [200] },
    },
  ],
};

/** An operation over the Nexus HTTP endpoint, as the caller (its key, and the brand it names). */
async function nexusCall(as: Caller, operation: string, input: unknown) {
  const res = await fetch(`${nexusBase}/${operation}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'nexus-request-id': randomUUID(),
      [PIXFLOW_API_KEY_HEADER]: as.key,
      ...(as.brand === undefined ? {} : { [PIXFLOW_BRAND_HEADER]: as.brand }),
    },
    body: JSON.stringify(input),
    signal: AbortSignal.timeout(20_000),
  });
  return { status: res.status, text: await res.text() };
}

/** B's endpoint made by each of its callers (by key), and B's events. */
const bEndpointOf = new Map<string, string>();
let bEvents: string[] = [];
/** A person's onboarding's workflow id. */
const onboardingOf = (p: { cpf: string }) => onboardingWorkflowId(cpfHash(p.cpf, PII_KEY));
/** B's flows of the same ids as A's. */
const bFlowIds = () => [
  depositWorkflowId(ids.sharedTxid, B.id),
  withdrawalWorkflowId(ids.sharedTransactionId, B.id),
];

// ---- The ingress table: what is notified through B's account's path at each notification point.

const INGRESS_TABLE: Record<string, () => Record<string, unknown>[]> = {
  deposit: () => [{ id: ids.aTxid, type: 'deposit', action: 'updated' }],
  withdraw: () => [{ id: ids.aTransactionId, type: 'withdraw', action: 'updated' }],
  // The person's onboarding is every brand's; through another brand's account it is kept, not signalled.
  liveness: () => [
    {
      transaction_id: randomUUID(),
      correlation_id: randomUUID(),
      document: person.cpf,
      status_verification: 'completed',
      status_onboarding: 'approved',
      action_type: 'onboarding',
      event: 'signup',
      datetime: new Date().toISOString(),
    },
  ],
  // The one URL for every point, which reads the point from the body.
  undefined: () => [
    { id: ids.aTxid, type: 'deposit', action: 'updated' },
    { id: ids.aTransactionId, type: 'withdraw', action: 'updated' },
  ],
};

const notify = (url: string, body: unknown) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });

/** The signals each of A's flows, and the person's onboarding, has had. */
async function signalsOfA(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const id of [...flowIdsOfA(), onboardingWorkflowId(cpfHash(person.cpf, PII_KEY))]) {
    const history = await temporal.workflow.getHandle(id).fetchHistory();
    counts[id] = (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes).length;
  }
  return counts;
}

/** A's flows' workflow ids. */
const flowIdsOfA = () => [
  depositWorkflowId(ids.sharedTxid, A.id),
  depositWorkflowId(ids.aTxid, A.id),
  depositWorkflowId(ids.aTxidNexus, A.id),
  withdrawalWorkflowId(ids.sharedTransactionId, A.id),
  withdrawalWorkflowId(ids.aTransactionId, A.id),
  withdrawalWorkflowId(ids.aTransactionIdNexus, A.id),
];

/** What no answer to B may hold: A's brand id (in each of A's workflow ids, events and merchant), A's own ids. */
const aMarks = () => [
  A.id,
  ids.aTxid,
  ids.aTransactionId,
  ids.aTxidNexus,
  ids.aTransactionIdNexus,
  ...ids.aEndpoints,
  ...ids.aEvents,
];

const pathOf = (
  template: string,
  params: Record<string, string> = {},
  query: Record<string, string> = {},
) => {
  const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${template}: the table fills no ${name}`);
    return encodeURIComponent(value);
  });
  const q = new URLSearchParams(query).toString();
  return q ? `${path}?${q}` : path;
};

/** An answer without the values its request sent (a problem's `instance` names the path asked). */
function withoutSent(text: string, c: Pick<Case, 'params' | 'query' | 'body'>): string {
  const sent = [
    ...Object.values(c.params ?? {}),
    ...Object.values(c.query ?? {}),
    ...Object.values((c.body ?? {}) as Record<string, unknown>).filter((v) => typeof v === 'string'),
  ] as string[];
  return sent.filter((v) => v.length > 0).reduce((t, v) => t.split(v).join('{sent}'), text);
}

/** An answer with the ids it was asked about put back as their names, to compare with another's. */
async function answerOf(res: Response, named: Record<string, string>) {
  let text = await res.text();
  for (const [name, value] of Object.entries(named)) text = text.split(value).join(`{${name}}`);
  return { status: res.status, type: res.headers.get('content-type'), text };
}

interface DocOperation {
  requestBody?: { content: Record<string, { schema?: { $ref?: string } & Examples; example?: unknown }> };
}
interface Doc {
  paths: Record<string, Record<string, DocOperation>>;
  components: { schemas: Record<string, Examples> };
}

/** The example the document gives for an operation's body. */
function exampleOf(doc: Doc, op: DocOperation): Examples {
  const media = op.requestBody?.content['application/json'];
  if (!media) return {};
  const schema = media.schema?.$ref
    ? doc.components.schemas[media.schema.$ref.replace('#/components/schemas/', '')]
    : media.schema;
  return (media.example ?? schema?.example ?? {}) as Examples;
}

/** A's state, as A's key and Postgres tell it: what no call of B's may change. */
async function stateOfA() {
  const flows = await pool.query(
    `SELECT workflow_id, status, amount_centavos, reason, merchant FROM flows WHERE brand_id = $1 ORDER BY workflow_id`,
    [A.id],
  );
  const endpoint = await pool.query(
    'SELECT id, url, events, enabled, brand_id, secret FROM webhook_endpoints WHERE id = ANY($1) ORDER BY id',
    [ids.aEndpoints],
  );
  const deliveries = await pool.query(
    'SELECT event_id, endpoint_id, count(*)::int AS n FROM webhook_deliveries WHERE event_id = ANY($1) GROUP BY 1, 2 ORDER BY 1, 2',
    [ids.aEvents],
  );
  const answers = [];
  for (const path of [
    `/v1/deposits/${ids.sharedTxid}`,
    `/v1/deposits/${ids.aTxid}`,
    `/v1/deposits/${ids.aTxidNexus}`,
    `/v1/withdrawals/${ids.sharedTransactionId}`,
    `/v1/withdrawals/${ids.aTransactionId}`,
    `/v1/withdrawals/${ids.aTransactionIdNexus}`,
  ]) {
    const body = await jsonAt(callers.a, path);
    answers.push({ path, workflowId: body.workflowId, status: body.state?.status });
  }
  const [byKey, byPlatform] = ids.aEndpoints;
  for (const [as, id] of [
    [callers.a, byKey],
    [callers.platformA, byPlatform],
  ] as const) {
    answers.push({ path: id, endpoint: await jsonAt(as, `/v1/webhook-endpoints/${id}`) });
  }
  return { flows: flows.rows, endpoint: endpoint.rows, deliveries: deliveries.rows, answers };
}

describe('brand isolation over every route', () => {
  it("B's key and a platform key naming B reach none of A's flows, endpoints or events on any /v1 operation; the same ids at B are B's own", async () => {
    // Each brand's endpoint, at a receiver that verifies every signature, before
    // anything happens: each brand's events of its people's onboardings are delivered too.
    [rxA, rxB] = await Promise.all([startWebhookReceiver(), startWebhookReceiver()]);
    ids.aEndpoints = [await subscribe(callers.a, rxA), await subscribe(callers.platformA, rxA)];
    for (const as of [callers.b, callers.platformB]) bEndpointOf.set(as.key, await subscribe(as, rxB));
    const bEndpoints = [...bEndpointOf.values()];

    // A's person, onboarded through A's key alone; B's own person, through B's.
    await onboard({ api, apiKey: callers.a.key, sandbox: envSandbox.url }, person, {
      reviewedBy: 'provider',
    });
    await onboard({ api, apiKey: callers.b.key, sandbox: envSandbox.url }, bPerson, {
      reviewedBy: 'provider',
    });
    expect((await call(callers.b, 'GET', `/v1/onboardings/${person.cpf}`)).status).toBe(404);

    // The same txid and transactionId at both brands: two flows of each.
    await Promise.all([
      moneyAt(A, callers.a, { client, person }),
      moneyAt(B, callers.b, { client: bClient, person: bPerson }),
    ]);
    // A's alone: a deposit waiting for its payment, a payout sent and not yet confirmed.
    ids.aTxid = newTxid();
    const waiting = await call(callers.a, 'POST', '/v1/deposits', {
      txid: ids.aTxid,
      amountCentavos: 2_000,
      client,
    });
    expect(waiting.status).toBe(201);
    const sent = await call(callers.a, 'POST', '/v1/withdrawals', {
      transactionId: ids.aTransactionId,
      client,
      pixKey: person.cpf,
      pixType: 'CPF',
      amountCentavos: 1_500,
    });
    expect(sent.status, await sent.clone().text()).toBe(202);
    await waitStatus(callers.a, `/v1/withdrawals/${ids.aTransactionId}`, 'processing');
    ids.aTxidNexus = newTxid();
    const waitingNexus = await call(callers.a, 'POST', '/v1/deposits', {
      txid: ids.aTxidNexus,
      amountCentavos: 2_100,
      client,
    });
    expect(waitingNexus.status).toBe(201);
    const sentNexus = await call(callers.a, 'POST', '/v1/withdrawals', {
      transactionId: ids.aTransactionIdNexus,
      client,
      pixKey: person.cpf,
      pixType: 'CPF',
      amountCentavos: 1_600,
    });
    expect(sentNexus.status, await sentNexus.clone().text()).toBe(202);
    await waitStatus(callers.a, `/v1/withdrawals/${ids.aTransactionIdNexus}`, 'processing');
    // The person's accounts registered through A's key.
    for (const as of [callers.b, callers.platformB]) {
      const account = await call(callers.a, 'POST', `/v1/customers/${person.cpf}/accounts`, {
        pixKey: `iso-${ids.personAccounts.size}@example.com`,
        pixType: 'EMAIL',
      });
      expect(account.status, await account.clone().text()).toBe(201);
      ids.personAccounts.set(as.key, ((await account.json()) as { id: string }).id);
    }

    // A's events, each delivered to A's endpoint, before B asks anything.
    ids.aEvents = await waitUntil(
      () => eventIdsOf(callers.a),
      (found) => found.length >= 6,
      30_000,
    );
    await waitUntil(
      async () => new Set(rxA.delivered().map((r) => r.webhookId)),
      (got) => ids.aEvents.every((id) => got.has(id)),
      30_000,
    );
    bEvents = await eventIdsOf(callers.b);
    expect(bEvents.length).toBeGreaterThan(3);
    const before = await stateOfA();
    const signalsBefore = await signalsOfA();

    // The ingress: A's ids notified through B's account's path, at every notification point, tell
    // none of A's flows (nor the person's onboarding); A's partner id on B's path is refused.
    const ingressPoints = [...NOTIFICATION_POINTS, undefined];
    expect(
      ingressPoints.filter((point) => !(String(point) in INGRESS_TABLE)),
      'notification points the table does not fill: add each to INGRESS_TABLE',
    ).toEqual([]);
    for (const point of ingressPoints) {
      for (const body of (INGRESS_TABLE[String(point)] as () => Record<string, unknown>[])()) {
        const url = `${brandIngress(api, B)}${point ? `/${point}` : ''}`;
        const what = `ingress ${point ?? '(one URL for all)'}: ${JSON.stringify(body)}`;
        const res = await notify(url, { ...body, partner_id: B.account.settings.partnerId });
        expect(res.status, `${what}: ${await res.text()}`).toBe(200);
        const refused = await notify(url, { ...body, partner_id: A.account.settings.partnerId });
        expect(refused.status, what).toBe(401);
      }
    }

    // Every /v1 operation of the API's own document; the table must know each.
    const doc = (await (await fetch(`${api}/openapi.json`)).json()) as Doc;
    const operations = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/v1/'))
      .flatMap(([path, item]) =>
        Object.entries(item)
          .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
          .map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, path, method, op })),
      );
    expect(operations.length).toBeGreaterThan(25);
    const unknownToTable = operations.map((o) => o.route).filter((r) => !(r in TABLE));
    expect(unknownToTable, 'operations the table does not fill: add each to TABLE').toEqual([]);
    const stale = Object.keys(TABLE).filter((r) => !operations.some((o) => o.route === r));
    expect(stale, 'table rows no operation has').toEqual([]);

    // B onboards A's person after every read (from then on B knows them), before its creates,
    // whose deposit and payout are for that person.
    const creates = (o: (typeof operations)[number]) =>
      o.route === 'POST /v1/deposits' || o.route === 'POST /v1/withdrawals';
    const meets = (o: (typeof operations)[number]) => o.route === 'POST /v1/onboardings';
    const ordered = [
      ...operations.filter((o) => !creates(o) && !meets(o)),
      ...operations.filter(meets),
      ...operations.filter(creates),
    ];
    let checked = 0;
    for (const o of ordered) {
      for (const as of [callers.b, callers.platformB]) {
        const cases = (TABLE[o.route] as (ex: Examples, as: Caller) => Case[])(exampleOf(doc, o.op), as);
        expect(cases.length, o.route).toBeGreaterThan(0);
        for (const c of cases) {
          const what = `${as.who}: ${o.route} (${c.why})`;
          const body = c.expect.is === 'own-endpoint' ? { ...(c.body as object), url: rxB.url } : c.body;
          const res = await call(as, o.method.toUpperCase(), pathOf(o.path, c.params, c.query), body);
          const named = { ...c.params, ...c.query };
          const answer = await answerOf(res.clone(), named);
          // Nothing of A's in any answer, whatever the operation, but what the request itself named.
          const raw = await res.text();
          const heard = withoutSent(raw, c);
          for (const mark of aMarks())
            expect(heard.includes(mark), `${what}: answers ${mark}: ${raw.slice(0, 400)}`).toBe(false);
          expect(res.status, `${what}: ${raw.slice(0, 400)}`).toBeLessThan(500);
          const e = c.expect;
          switch (e.is) {
            case 'as-unknown': {
              // The same request, the ids `unknown` names (in the path or the query) ones nobody used.
              const over = (values: Record<string, string> = {}) =>
                Object.fromEntries(Object.entries(values).map(([k, v]) => [k, e.unknown[k] ?? v]));
              const [params, query] = [over(c.params), over(c.query)];
              const other = await call(as, o.method.toUpperCase(), pathOf(o.path, params, query), body);
              const expected = await answerOf(other, { ...params, ...query });
              expect(answer, what).toEqual(expected);
              expect(answer.status, what).toBe(e.status ?? 404);
              if (e.status === 202) expect(JSON.parse(raw), what).toMatchObject({ endpoints: [] });
              break;
            }
            case 'own-flow':
              expect(res.status, what).toBe(200);
              expect((JSON.parse(raw) as { workflowId: string }).workflowId, what).toBe(e.workflowId);
              break;
            case 'list': {
              expect(res.status, what).toBe(200);
              const items = (JSON.parse(raw) as { items: unknown[] }).items;
              if (e.empty) expect(items, what).toEqual([]);
              for (const id of e.holds?.(as) ?? []) expect(raw, `${what}: lists ${id}`).toContain(id);
              for (const id of e.lacks ?? []) expect(raw, `${what}: lists ${id}`).not.toContain(id);
              break;
            }
            case 'created':
              expect(e.statuses, `${what}: ${res.status} ${raw}`).toContain(res.status);
              expect((JSON.parse(raw) as { workflowId: string }).workflowId, what).toBe(e.workflowId);
              break;
            case 'person':
              expect(e.statuses, `${what}: ${res.status} ${raw}`).toContain(res.status);
              // What is the person's reads the same for A.
              if (e.sameForA) {
                const asA = await call(callers.a, 'GET', pathOf(o.path, c.params, c.query));
                expect({ status: asA.status, text: await asA.text() }, what).toEqual({
                  status: res.status,
                  text: raw,
                });
              }
              break;
            case 'own-endpoint': {
              expect(res.status, what).toBe(201);
              const made = JSON.parse(raw) as { id: string; secret: string };
              rxB.secrets.push(made.secret);
              bEndpoints.push(made.id);
              break;
            }
          }
          checked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThan(60);

    // Once B met A's person, their routes answer B as they answer A (the verification is shared).
    for (const path of [`/v1/onboardings/${person.cpf}`, `/v1/customers/${person.cpf}/deposit-limits`]) {
      expect(await jsonAt(callers.a, path), path).toEqual(await jsonAt(callers.b, path));
    }

    // Every operation of the Nexus service definition, over the Temporal server's Nexus HTTP endpoint.
    // The worker warns of each refused operation: here, each flow of A's not found for B.
    const refusedOps = expectSdkLog(
      (entry) => entry.message === 'Nexus handler invocation failed' && entry.meta.service === 'pixflow',
    );
    checked = 0;
    const nexusOps = Object.keys(pixflowService.operations);
    expect(
      nexusOps.filter((op) => !(op in NEXUS_TABLE)),
      'Nexus operations the table does not fill: add each to NEXUS_TABLE',
    ).toEqual([]);
    expect(Object.keys(NEXUS_TABLE).filter((op) => !nexusOps.includes(op))).toEqual([]);
    const startsFlows = (op: string) => op === 'createDeposit' || op === 'requestWithdrawal';
    for (const op of [...nexusOps.filter((o) => !startsFlows(o)), ...nexusOps.filter(startsFlows)]) {
      for (const as of [callers.b, callers.platformB]) {
        for (const c of (NEXUS_TABLE[op] as () => NexusCase[])()) {
          const what = `${as.who}: Nexus ${op} (${c.why})`;
          const answer = await nexusCall(as, op, c.input);
          const heard = withoutSent(answer.text, { body: c.input });
          for (const mark of aMarks()) {
            expect(heard.includes(mark), `${what}: answers ${mark}: ${answer.text.slice(0, 400)}`).toBe(
              false,
            );
          }
          const e = c.expect;
          if (e.is === 'as-unknown') {
            const other = await nexusCall(as, op, e.unknown);
            const named = (text: string, input: Record<string, unknown>) =>
              Object.values(input)
                .filter((v): v is string => typeof v === 'string' && v.length > 12)
                .reduce((t, v) => t.split(v).join('{id}'), text);
            expect({ status: answer.status, text: named(answer.text, c.input) }, what).toEqual({
              status: other.status,
              text: named(other.text, e.unknown),
            });
            expect(answer.text, what).toContain('flow-not-found');
          } else {
            expect(e.statuses, `${what}: ${answer.status} ${answer.text.slice(0, 400)}`).toContain(
              answer.status,
            );
            if (e.is === 'answered' && e.notAsForA) {
              // B's own outcome (its own payment's end-to-end id and times), not A's of the same id.
              const asA = await nexusCall(callers.a, op, c.input);
              expect(asA.status, what).toBe(200);
              expect(answer.text, what).not.toEqual(asA.text);
            }
            if (e.is === 'started') {
              const d = await temporal.workflow.getHandle(e.workflowId).describe();
              expect(d.taskQueue, what).toBe(taskQueue);
            }
          }
          checked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThan(8);
    // The other way round: B's person, whom A never onboarded, is to A through Nexus an onboarding
    // nobody started, word for word.
    const unmet = await nexusCall(callers.a, 'waitForOutcome', { flow: 'onboarding', cpf: bPerson.cpf });
    const nobody = await nexusCall(callers.a, 'waitForOutcome', { flow: 'onboarding', cpf: unknownIds.cpf });
    expect(unmet.text).toContain('flow-not-found');
    expect({ status: unmet.status, text: unmet.text.split(bPerson.cpf).join('{cpf}') }).toEqual({
      status: nobody.status,
      text: nobody.text.split(unknownIds.cpf).join('{cpf}'),
    });
    await settleSdkLogs();
    const refusals = refusedOps().map((entry) => ({
      operation: entry.meta.operation,
      type: (entry.meta.error as { cause?: { type?: string } } | undefined)?.cause?.type,
    }));
    // Each caller asked two of A's flows and two unknown ones; A asked B's person's onboarding and
    // an unknown one.
    expect(refusals).toEqual(Array(10).fill({ operation: 'waitForOutcome', type: 'flow-not-found' }));

    // A's flows, endpoint and deliveries as they were, and no flow of A's (nor the person's
    // onboarding) told anything since.
    expect(await stateOfA()).toEqual(before);
    expect(await signalsOfA()).toEqual(signalsBefore);
    const bFlows = await pool.query('SELECT workflow_id FROM flows WHERE brand_id = $1 ORDER BY 1', [B.id]);
    expect(bFlows.rows.map((r) => r.workflow_id)).toEqual(
      [
        depositWorkflowId(ids.sharedTxid, B.id),
        depositWorkflowId(ids.aTxid, B.id),
        withdrawalWorkflowId(ids.sharedTransactionId, B.id),
        withdrawalWorkflowId(ids.aTransactionId, B.id),
        depositWorkflowId(ids.aTxidNexus, B.id),
        withdrawalWorkflowId(ids.aTransactionIdNexus, B.id),
      ].sort(),
    );

    // B's endpoints received B's events alone, every one signed with a secret B was given;
    // none of A's was ever queued for them.
    await waitUntil(
      async () => rxB.delivered().length,
      (n) => n > 0,
      15_000,
    );
    expect(rxB.unverified).toEqual([]);
    for (const r of rxB.received) {
      expect(r.body.brand, r.body.type).toBe(B.id);
      expect(ids.aEvents).not.toContain(r.webhookId);
    }
    const queued = await pool.query(
      `SELECT ev.id, ev.brand_id FROM webhook_deliveries d JOIN events ev ON ev.id = d.event_id
        WHERE d.endpoint_id = ANY($1) AND ev.brand_id <> $2`,
      [bEndpoints, B.id],
    );
    expect(queued.rows).toEqual([]);
    expect(rxA.unverified).toEqual([]);
    for (const r of rxA.received) expect(r.body.brand).toBe(A.id);
  }, 240_000);
});
