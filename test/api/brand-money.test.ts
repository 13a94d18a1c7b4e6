import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../common/api-key';
import { MerchantKey } from '../../common/search-attributes';
import { sealBrandAccount } from '../../connectors/accounts';
import { type BrandAccount, brandAccountSchema } from '../../contracts/brand-account';
import { depositWorkflowId } from '../../contracts/deposit';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import { setBrandAccount } from '../../db/brand-accounts';
import { type BrandActor, createBrand } from '../../db/brands';
import { brandKey } from '../helpers/brands';
import { testCodecKeys } from '../helpers/temporal';
import {
  API_KEY,
  type ApiEnv,
  eventually,
  expectProblem,
  freshCpf,
  onboardApproved,
  PII_KEY,
  startApiEnv,
} from './support';

// Another brand moves money through the API once it has the connector account the flow needs
// (docs/brands.md, "What else knows a flow's brand"), on the real API, worker, Temporal and
// Postgres: its deposit and withdrawal start under its own ids and record its account's merchant,
// never the environment's nor the one asked; a brand without the account is refused 409
// `brand-without-account` naming it, with nothing started, until it is given one.

const tag = randomBytes(3).toString('hex');
const FULL = `money-${tag}`;
const PIX_ONLY = `pix-${tag}`;
const NONE = `none-${tag}`;
const CACHE_MS = 300;
const admin: BrandActor = { operatorId: null, operatorEmail: 'admin@example.com', operatorRole: 'admin' };
const SCOPES: Scope[] = [
  'onboardings:write',
  'deposits:read',
  'deposits:write',
  'withdrawals:read',
  'withdrawals:write',
];

let e: ApiEnv;
const person = freshCpf();
const keys: Record<string, string> = {};

const identityPayments = (brand: string): BrandAccount =>
  brandAccountSchema.parse({
    connector: 'identity-payments',
    settings: {
      baseUrl: 'http://127.0.0.1:1',
      authUrl: 'http://127.0.0.1:1',
      clientId: `client-${brand}`,
      merchant: `merchant-${brand}`,
      partnerId: `partner-${brand}`,
    },
    secrets: {
      clientSecret: randomBytes(12).toString('hex'),
      apiKey: randomBytes(12).toString('hex'),
      webhookSecret: `wh-${brand}-${randomBytes(12).toString('hex')}`,
    },
  });

const apiPix = (brand: string): BrandAccount =>
  brandAccountSchema.parse({
    connector: 'api-pix',
    settings: {
      baseUrl: 'https://127.0.0.1:1',
      clientId: `client-${brand}`,
      pixKey: `${brand}@example.com`,
      certFile: '/nonexistent/cert.pem',
      keyFile: '/nonexistent/key.pem',
    },
    secrets: { clientSecret: randomBytes(12).toString('hex') },
  });

async function giveAccount(brand: string, account: BrandAccount) {
  const sealed = sealBrandAccount({ codecKeys: testCodecKeys, hashKey: PII_KEY }, brand, account);
  await setBrandAccount(e.pool, admin, { ...sealed, settings: sealed.settings as Record<string, unknown> });
}

const makeKey = (brandId: string | null) => brandKey(e.pool, brandId, SCOPES);

type Caller = { key?: string; brand?: string };

/** A request as `as` (the bootstrap key when it names none), naming its brand when it has one. */
function call(as: Caller, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${e.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${as.key ?? API_KEY}`,
      ...(as.brand === undefined ? {} : { 'pixflow-brand': as.brand }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const newTxid = () => `${Date.now()}${randomBytes(4).readUInt32BE()}`.slice(0, 35);
const newTransactionId = () => `money-wd-${Date.now()}-${randomBytes(3).toString('hex')}`;
const client = { externalId: 'user-m', cpf: '', email: 'mia@example.com', name: 'Mia Costa' };
const depositBody = (txid: string, over: Record<string, unknown> = {}) => ({
  txid,
  amountCentavos: 12_300,
  client: { ...client, cpf: person },
  ...over,
});
const withdrawalBody = (transactionId: string, over: Record<string, unknown> = {}) => ({
  transactionId,
  client: { ...client, cpf: person },
  pixKey: person,
  pixType: 'CPF',
  amountCentavos: 4_500,
  ...over,
});

/** The flow's row, once its first write made it. */
const rowOf = (workflowId: string) =>
  eventually(
    async () =>
      (
        await e.pool.query<{ brand_id: string; merchant: string }>(
          'SELECT brand_id, merchant FROM flows WHERE workflow_id = $1',
          [workflowId],
        )
      ).rows[0],
    (r) => r !== undefined,
  );

const merchantAttribute = async (workflowId: string) =>
  (await e.temporal.workflow.getHandle(workflowId).describe()).typedSearchAttributes.get(MerchantKey);

beforeAll(async () => {
  e = await startApiEnv({}, { env: { API_KEY_CACHE_MS: String(CACHE_MS) } });
  for (const [id, name] of [
    [FULL, 'Money Full'],
    [PIX_ONLY, 'Money Pix'],
    [NONE, 'Money None'],
  ] as const) {
    await createBrand(e.pool, admin, { id, name });
    keys[id] = await makeKey(id);
  }
  keys.platform = await makeKey(null);
  await giveAccount(FULL, identityPayments(FULL));
  await giveAccount(PIX_ONLY, apiPix(PIX_ONLY));
  await onboardApproved(e, person);
  // Each brand meets the person by starting their onboarding, answered at once: only then does
  // it move their money (docs/brands.md, "People a brand knows").
  for (const brand of [FULL, PIX_ONLY, NONE]) {
    const met = await call({ key: keys[brand] }, 'POST', '/v1/onboardings', {
      cpf: person,
      plan: 'plan_basic',
      event: 'onboarding',
    });
    expect(met.status, await met.clone().text()).toBe(200);
  }
}, 240_000);
afterAll(() => e?.close());

describe('a brand with its own accounts', () => {
  it("starts a deposit and a withdrawal under its own ids, recording its account's merchant, never the one asked or the environment's", async () => {
    const txid = newTxid();
    const deposit = await call(
      { key: keys[FULL] },
      'POST',
      '/v1/deposits',
      depositBody(txid, { merchant: 'asked-merchant' }),
    );
    expect(deposit.status, await deposit.clone().text()).toBe(201);
    expect(await deposit.json()).toMatchObject({ workflowId: depositWorkflowId(txid, FULL) });
    expect(await rowOf(depositWorkflowId(txid, FULL))).toEqual({
      brand_id: FULL,
      merchant: `merchant-${FULL}`,
    });
    expect(await merchantAttribute(depositWorkflowId(txid, FULL))).toBe(`merchant-${FULL}`);

    // The default brand's deposit of the same txid is another flow, with the environment's merchant.
    const ours = await call({}, 'POST', '/v1/deposits', depositBody(txid));
    expect(ours.status).toBe(201);
    expect(await rowOf(depositWorkflowId(txid))).toEqual({
      brand_id: 'default',
      merchant: 'sandbox-merchant',
    });

    const transactionId = newTransactionId();
    const withdrawal = await call(
      { key: keys.platform, brand: FULL },
      'POST',
      '/v1/withdrawals',
      withdrawalBody(transactionId, { merchant: 'asked-merchant' }),
    );
    expect(withdrawal.status, await withdrawal.clone().text()).toBe(202);
    expect(await withdrawal.json()).toMatchObject({ workflowId: withdrawalWorkflowId(transactionId, FULL) });
    expect(await rowOf(withdrawalWorkflowId(transactionId, FULL))).toEqual({
      brand_id: FULL,
      merchant: `merchant-${FULL}`,
    });
  });

  it("records the brand's id as a deposit's merchant when it has no identity-payments account, and refuses its withdrawal", async () => {
    const txid = newTxid();
    const deposit = await call({ key: keys[PIX_ONLY] }, 'POST', '/v1/deposits', depositBody(txid));
    expect(deposit.status, await deposit.clone().text()).toBe(201);
    expect(await rowOf(depositWorkflowId(txid, PIX_ONLY))).toEqual({
      brand_id: PIX_ONLY,
      merchant: PIX_ONLY,
    });

    const transactionId = newTransactionId();
    const refused = await expectProblem(
      await call({ key: keys[PIX_ONLY] }, 'POST', '/v1/withdrawals', withdrawalBody(transactionId)),
      409,
      'brand-without-account',
    );
    expect(refused).toMatchObject({ brand: PIX_ONLY, detail: expect.stringContaining('identity-payments') });
    expect(await e.workflowExists(withdrawalWorkflowId(transactionId, PIX_ONLY))).toBe(false);
  });
});

describe('a brand without accounts', () => {
  it('is refused 409 brand-without-account naming it, nothing started, until it is given one', async () => {
    const txid = newTxid();
    const transactionId = newTransactionId();
    for (const as of [{ key: keys[NONE] }, { key: keys.platform, brand: NONE }] as Caller[]) {
      const deposit = await expectProblem(
        await call(as, 'POST', '/v1/deposits', depositBody(txid)),
        409,
        'brand-without-account',
      );
      expect(deposit).toMatchObject({ brand: NONE, detail: expect.stringContaining(`"${NONE}"`) });
      const withdrawal = await expectProblem(
        await call(as, 'POST', '/v1/withdrawals', withdrawalBody(transactionId)),
        409,
        'brand-without-account',
      );
      expect(withdrawal).toMatchObject({ brand: NONE });
    }
    for (const id of [depositWorkflowId(txid, NONE), withdrawalWorkflowId(transactionId, NONE)])
      expect(await e.workflowExists(id), id).toBe(false);
    const rows = await e.pool.query('SELECT 1 FROM flows WHERE business_id = ANY($1)', [
      [txid, transactionId],
    ]);
    expect(rows.rowCount).toBe(0);

    // Given an account, the door learns it within API_KEY_CACHE_MS.
    await giveAccount(NONE, identityPayments(NONE));
    const started = await eventually(
      () => call({ key: keys[NONE] }, 'POST', '/v1/deposits', depositBody(txid)),
      (res) => res.status === 201,
      CACHE_MS * 20,
    );
    expect(await started.json()).toMatchObject({ workflowId: depositWorkflowId(txid, NONE) });
    expect(await rowOf(depositWorkflowId(txid, NONE))).toEqual({
      brand_id: NONE,
      merchant: `merchant-${NONE}`,
    });
  });
});
