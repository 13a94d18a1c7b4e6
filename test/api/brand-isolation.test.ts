import { readdirSync } from 'node:fs';
import { runner } from 'node-pg-migrate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { depositOperations } from '../../api/deposits';
import { withdrawalOperations } from '../../api/withdrawals';
import { newKeyId, newSecret, type Scope } from '../../common/api-key';
import { loadConfig } from '../../common/config';
import { BrandKey } from '../../common/search-attributes';
import { depositWorkflowId } from '../../contracts/deposit';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import { insertApiKey } from '../../db/api-keys';
import { createBrand } from '../../db/brands';
import { MIGRATIONS_DIR, migrate } from '../../db/migrate';
import type { Operation } from '../../http/operation';
import { brandKey } from '../helpers/brands';
import {
  API_KEY,
  type ApiEnv,
  eventually,
  expectProblem,
  freshCpf,
  onboardApproved,
  PNG_SIGNATURE,
  startApiEnv,
} from './support';

// Deposits and withdrawals belong to the brand that started them (docs/brands.md), on the real
// API, worker and Postgres: another brand's key, or a platform key naming another brand, finds
// none of the default brand's flows on any deposit or withdrawal route (404, word for word an
// unknown id's answer), lists none of them, and, without a connector account of its own, may start
// none (409 brand-without-account); the default brand's keys see and drive them as before, under
// the same ids.

const MIGRATION = '1732000000034_flows_brand';
const OTHER = 'bet-rio';
const { WEBHOOK_SECRET, WEBHOOK_PARTNER_ID } = loadConfig({});
const SCOPES: Scope[] = ['onboardings:read', 'deposits:write', 'withdrawals:write'];

let e: ApiEnv;
const person = freshCpf();
/** A deposit row the version before brands wrote. */
const oldTxid = `${Date.now()}0000000000000000001`;

/** The keys: the other brand's, the default brand's made as a record, and a platform key. */
const keys = { other: '', default: '', platform: '' };

/** The default brand's flows, made by the default brand's key. */
let held: string;
let completedDeposit: string;
let completedWithdrawal: string;

type Caller = { key: string; brand?: string };
const otherKey = (): Caller => ({ key: keys.other });
const platformNaming = (brand: string): Caller => ({ key: keys.platform, brand });
const defaultKey = (): Caller => ({ key: keys.default });

function call(as: Caller, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${e.url}${path}`, {
    method: method.toUpperCase(),
    headers: {
      authorization: `Bearer ${as.key}`,
      ...(as.brand === undefined ? {} : { 'pixflow-brand': as.brand }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const makeKey = (brandId: string | null) => brandKey(e.pool, brandId, SCOPES);

const depositBody = (over: Record<string, unknown> = {}) => ({
  client: { externalId: 'user-1', cpf: person, email: 'ana@example.com', name: 'Ana Souza' },
  amountCentavos: 15_000,
  ...over,
});
const withdrawalBody = (over: Record<string, unknown> = {}) => ({
  transactionId: `iso-wd-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`,
  client: { externalId: 'user-1', cpf: person, email: 'ana@example.com', name: 'Ana Souza' },
  pixKey: person,
  pixType: 'CPF',
  amountCentavos: 10_000,
  ...over,
});

const statusOf = async (as: Caller, path: string) =>
  ((await (await call(as, 'get', path)).json()) as { state: { status: string } }).state.status;

/** A deposit by the default brand's key, paid in the sandbox by `payerCpf` (omitted: the person). */
async function paidDeposit(payerCpf?: string): Promise<string> {
  const res = await call(defaultKey(), 'post', '/v1/deposits', depositBody());
  expect(res.status).toBe(201);
  const { txid } = (await res.json()) as { txid: string };
  await e.sandboxControl(`/sandbox/deposits/${txid}/pay`, {
    payerName: 'Someone',
    ...(payerCpf === undefined ? {} : { payerCpf }),
  });
  return txid;
}

beforeAll(async () => {
  e = await startApiEnv({ pollScheduleMs: [1_000] });
  // The database as the version before brands' flows left it, with a deposit's row, then the upgrade.
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
  await e.pool.query(
    `INSERT INTO flows (workflow_id, type, business_id, status, merchant, amount_centavos, seq)
     VALUES ($1, 'deposit', $2, 'completed', 'sandbox-merchant', 4200, 3)`,
    [depositWorkflowId(oldTxid), oldTxid],
  );
  await migrate(e.databaseUrl);

  await createBrand(
    e.pool,
    { operatorId: null, operatorEmail: 'admin@example.com', operatorRole: 'admin' },
    { id: OTHER, name: 'Bet Rio' },
  );
  keys.other = await makeKey(OTHER);
  keys.default = await makeKey('default');
  keys.platform = await makeKey(null);

  await e.sandboxControl('/sandbox/notifications', {
    url: `${e.url}/webhooks/provider/${WEBHOOK_SECRET}`,
    partnerId: WEBHOOK_PARTNER_ID,
  });
  await onboardApproved(e, person);

  // A deposit held for an operator (someone else paid it), a completed one, a completed payout.
  held = await paidDeposit(freshCpf());
  completedDeposit = await paidDeposit();
  const wd = withdrawalBody();
  expect((await call(defaultKey(), 'post', '/v1/withdrawals', wd)).status).toBe(202);
  completedWithdrawal = wd.transactionId;
  await eventually(
    () => statusOf(defaultKey(), `/v1/withdrawals/${completedWithdrawal}`),
    (s) => s === 'processing',
  );
  await e.sandboxControl(`/sandbox/withdrawals/${completedWithdrawal}/settle`);
  await eventually(
    () => statusOf(defaultKey(), `/v1/withdrawals/${completedWithdrawal}`),
    (s) => s === 'completed',
  );
  await eventually(
    () => statusOf(defaultKey(), `/v1/deposits/${held}`),
    (s) => s === 'held',
  );
  await eventually(
    () => statusOf(defaultKey(), `/v1/deposits/${completedDeposit}`),
    (s) => s === 'completed',
  );
}, 240_000);
afterAll(() => e?.close());

/** Every by-id operation of a flow family, its path filled in with `id`, and a body it takes. */
function byIdRoutes(ops: Record<string, Operation>, param: string, id: string) {
  return Object.values(ops)
    .filter((op) => op.path.includes(`:${param}`))
    .map((op) => ({
      name: `${op.method.toUpperCase()} ${op.path}`,
      method: op.method,
      path: `/v1${op.path.replace(`:${param}`, encodeURIComponent(id))}`,
      body: op.body ? { decision: 'accept', by: 'ops@example.com', reason: 'isolation test' } : undefined,
    }));
}

/** What a caller is answered: status, content type and body (a problem's `instance` aside). */
async function answerOf(res: Response) {
  const type = res.headers.get('content-type') ?? '';
  if (!type.startsWith('application/problem+json')) return { status: res.status, type };
  const { instance: _instance, ...problem } = (await res.json()) as Record<string, unknown>;
  return { status: res.status, type, problem };
}

const unknownTxid = () => `${Date.now()}9999999999999999999`;
const notOursCallers = (): [string, Caller][] => [
  [`${OTHER}'s key`, otherKey()],
  [`a platform key naming ${OTHER}`, platformNaming(OTHER)],
];

describe("another brand's key", () => {
  it('finds none of the default brand’s deposits on any deposit route: 404, as an unknown txid', async () => {
    const routes = byIdRoutes(depositOperations, 'txid', held);
    expect(routes.map((r) => r.name).sort()).toEqual([
      'GET /deposits/:txid',
      'GET /deposits/:txid/qrcode.png',
      'POST /deposits/:txid/resolution',
    ]);
    for (const txid of [held, completedDeposit]) {
      const unknown = unknownTxid();
      for (const route of byIdRoutes(depositOperations, 'txid', txid)) {
        const asUnknown = await answerOf(
          await call(defaultKey(), route.method, route.path.replace(txid, unknown), route.body),
        );
        expect(asUnknown.status, route.name).toBe(404);
        for (const [who, as] of notOursCallers()) {
          const answer = await answerOf(await call(as, route.method, route.path, route.body));
          expect(answer, `${route.name} by ${who}`).toEqual(asUnknown);
        }
      }
    }
    // The resolution it asked for changed nothing: the deposit is still held for an operator.
    expect(await statusOf(defaultKey(), `/v1/deposits/${held}`)).toBe('held');
  });

  it('finds none of the default brand’s withdrawals on any withdrawal route: 404, as an unknown transactionId', async () => {
    const routes = byIdRoutes(withdrawalOperations, 'transactionId', completedWithdrawal);
    expect(routes.map((r) => r.name).sort()).toEqual([
      'GET /withdrawals/:transactionId',
      'GET /withdrawals/:transactionId/biometrics-link/qrcode.png',
      'GET /withdrawals/:transactionId/receipt.png',
    ]);
    const unknown = `iso-unknown-${Date.now()}`;
    for (const route of routes) {
      const asUnknown = await answerOf(
        await call(defaultKey(), route.method, route.path.replace(completedWithdrawal, unknown)),
      );
      expect(asUnknown.status, route.name).toBe(404);
      for (const [who, as] of notOursCallers()) {
        const answer = await answerOf(await call(as, route.method, route.path));
        expect(answer, `${route.name} by ${who}`).toEqual(asUnknown);
      }
    }
  });

  it("lists none of the default brand's deposits and withdrawals, old or new, whatever the filter, nor the onboarding of a person it never met", async () => {
    const ours = [
      depositWorkflowId(held),
      depositWorkflowId(completedDeposit),
      withdrawalWorkflowId(completedWithdrawal),
      depositWorkflowId(oldTxid),
    ];
    for (const [who, as] of notOursCallers()) {
      for (const query of ['', '?type=deposit', '?type=withdrawal', `?cpf=${person}`, '?limit=100']) {
        const res = await call(as, 'get', `/v1/flows${query}`);
        expect(res.status, `${who} ${query}`).toBe(200);
        const { items } = (await res.json()) as { items: { workflowId: string; type: string }[] };
        expect(
          items.filter((i) => i.type === 'deposit' || i.type === 'withdrawal'),
          `${who} ${query}`,
        ).toEqual([]);
        expect(items.filter((i) => ours.includes(i.workflowId))).toEqual([]);
      }
      // The person the default brand onboarded is one this brand never met: not even their
      // onboarding is listed (docs/brands.md, "People a brand knows").
      const { items } = (await (await call(as, 'get', `/v1/flows?cpf=${person}`)).json()) as {
        items: { type: string }[];
      };
      expect(items).toEqual([]);
    }
  });

  it('may start no deposit or withdrawal without an account of its own: 409 brand-without-account naming the brand, nothing started', async () => {
    for (const [who, as] of notOursCallers()) {
      const txid = unknownTxid();
      const deposit = await expectProblem(
        await call(as, 'post', '/v1/deposits', depositBody({ txid })),
        409,
        'brand-without-account',
      );
      expect(deposit, who).toMatchObject({ brand: OTHER, detail: expect.stringContaining(`"${OTHER}"`) });
      const wd = withdrawalBody();
      const withdrawal = await expectProblem(
        await call(as, 'post', '/v1/withdrawals', wd),
        409,
        'brand-without-account',
      );
      expect(withdrawal, who).toMatchObject({ brand: OTHER });
      for (const id of [
        depositWorkflowId(txid, OTHER),
        depositWorkflowId(txid),
        withdrawalWorkflowId(wd.transactionId, OTHER),
        withdrawalWorkflowId(wd.transactionId),
      ]) {
        expect(await e.workflowExists(id), id).toBe(false);
      }
      const rows = await e.pool.query('SELECT 1 FROM flows WHERE business_id = ANY($1)', [
        [txid, wd.transactionId],
      ]);
      expect(rows.rowCount).toBe(0);
      // Even for a txid the default brand used: its deposit is untouched.
      await expectProblem(
        await call(as, 'post', '/v1/deposits', depositBody({ txid: completedDeposit })),
        409,
        'brand-without-account',
      );
    }
    expect(await statusOf(defaultKey(), `/v1/deposits/${completedDeposit}`)).toBe('completed');
  });
});

describe("the default brand's keys", () => {
  it('see and drive its flows as before, under the ids they always had, tagged with their brand', async () => {
    // A record key of the default brand, a platform key naming it, a bootstrap key of API_KEYS.
    for (const as of [defaultKey(), platformNaming('default'), { key: API_KEY }]) {
      const deposit = (await (await call(as, 'get', `/v1/deposits/${completedDeposit}`)).json()) as {
        workflowId: string;
      };
      expect(deposit.workflowId).toBe(`deposit-${completedDeposit}`);
      const png = await call(as, 'get', `/v1/deposits/${completedDeposit}/qrcode.png`);
      expect(png.status).toBe(200);
      const receipt = await call(as, 'get', `/v1/withdrawals/${completedWithdrawal}/receipt.png`);
      expect(receipt.status).toBe(200);
      expect(Buffer.from(await receipt.arrayBuffer()).subarray(0, 8)).toEqual(PNG_SIGNATURE);
      const withdrawal = (await (await call(as, 'get', `/v1/withdrawals/${completedWithdrawal}`)).json()) as {
        workflowId: string;
      };
      expect(withdrawal.workflowId).toBe(`withdrawal-${completedWithdrawal}`);
      const { items } = (await (await call(as, 'get', '/v1/flows?limit=100')).json()) as {
        items: { workflowId: string }[];
      };
      expect(items.map((i) => i.workflowId)).toEqual(
        expect.arrayContaining([
          `deposit-${held}`,
          `deposit-${completedDeposit}`,
          `withdrawal-${completedWithdrawal}`,
          `deposit-${oldTxid}`,
        ]),
      );
    }

    // The held deposit is decided by a platform key acting for the default brand.
    const decision = { decision: 'accept', by: 'ops@example.com', reason: 'her husband paid, documented' };
    const res = await call(platformNaming('default'), 'post', `/v1/deposits/${held}/resolution`, decision);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ txid: held, status: 'completed' });

    // Each row and each flow's start tags say whose it is; the row the version before wrote is the default's.
    const rows = await e.pool.query<{ workflow_id: string; brand_id: string }>(
      'SELECT workflow_id, brand_id FROM flows WHERE workflow_id = ANY($1) ORDER BY workflow_id',
      [[`deposit-${held}`, `withdrawal-${completedWithdrawal}`, `deposit-${oldTxid}`]],
    );
    expect(rows.rows.map((r) => r.brand_id)).toEqual(['default', 'default', 'default']);
    for (const id of [`deposit-${held}`, `withdrawal-${completedWithdrawal}`]) {
      const { typedSearchAttributes } = await e.temporal.workflow.getHandle(id).describe();
      expect(typedSearchAttributes.get(BrandKey), id).toBe('default');
    }
  });

  it('start deposits and withdrawals as before: a platform key naming the default brand, under the same ids', async () => {
    const txid = unknownTxid();
    const res = await call(platformNaming('default'), 'post', '/v1/deposits', depositBody({ txid }));
    expect(res.status).toBe(201);
    expect(((await res.json()) as { workflowId: string }).workflowId).toBe(`deposit-${txid}`);
    const wd = withdrawalBody();
    const sent = await call(platformNaming('default'), 'post', '/v1/withdrawals', wd);
    expect(sent.status).toBe(202);
    expect(((await sent.json()) as { workflowId: string }).workflowId).toBe(`withdrawal-${wd.transactionId}`);
    // The same request by the default brand's own key is the same flow.
    const again = await call(defaultKey(), 'post', '/v1/withdrawals', wd);
    expect(again.status).toBe(202);
  });
});

describe("a person's customer record", () => {
  it("is every brand's that met the person, an unknown CPF to one that did not, its open deposits and withdrawals only the acting brand's", async () => {
    const readers = { other: '', default: '', platform: '' };
    for (const [who, brandId] of [
      ['other', OTHER],
      ['default', 'default'],
      ['platform', null],
    ] as const) {
      const s = newSecret();
      await insertApiKey(e.pool, {
        id: newKeyId(),
        name: `customers ${brandId ?? 'platform'}`,
        scopes: ['customers:read', 'onboardings:write'],
        brandId,
        prefix: s.prefix,
        secretHash: s.digest,
        createdBy: 'test',
        expiresAt: null,
      });
      readers[who] = s.secret;
    }
    type Customer = { verification: { status: string }; openFlows: { workflowId: string; type: string }[] };
    const customerAs = async (as: Caller) => {
      const res = await call(as, 'get', `/v1/customers/${person}`);
      expect(res.status).toBe(200);
      return (await res.json()) as Customer;
    };
    const money = (c: Customer) => c.openFlows.filter((f) => f.type === 'deposit' || f.type === 'withdrawal');

    // The default brand's key sees the person's open deposits (one started above, held or unpaid).
    const ofDefault = await customerAs({ key: readers.default });
    expect(ofDefault.verification.status).toBe('approved');
    expect(money(ofDefault).map((f) => f.type)).toContain('deposit');
    expect(money(ofDefault).every((f) => !f.workflowId.includes(':'))).toBe(true);
    // Another brand never met the person: to its key, and a platform key naming it, they are a
    // CPF nobody used (docs/brands.md, "People a brand knows").
    for (const as of [{ key: readers.other }, { key: readers.platform, brand: OTHER }]) {
      const res = await call(as, 'get', `/v1/customers/${person}`);
      const never = await call(as, 'get', `/v1/customers/${freshCpf()}`);
      expect(res.status).toBe(404);
      const typeOf = async (r: Response) => ((await r.json()) as { type: string }).type;
      expect(await typeOf(res)).toBe(await typeOf(never));
    }
    // Once it starts their onboarding (answered at once), it reads the same verified person and
    // none of the default brand's money.
    const met = await call({ key: readers.other }, 'post', '/v1/onboardings', {
      cpf: person,
      plan: 'plan_basic',
      event: 'onboarding',
    });
    expect(met.status, await met.clone().text()).toBe(200);
    for (const as of [{ key: readers.other }, { key: readers.platform, brand: OTHER }]) {
      const c = await customerAs(as);
      expect(c.verification.status).toBe('approved');
      expect(money(c)).toEqual([]);
    }
  });
});
