import { randomBytes } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createActivities } from '../../activities';
import { BRAND_WITHOUT_ACCOUNT } from '../../activities/brand-connectors';
import type { SweepResult } from '../../activities/reconciliation';
import { parseCodecKeys } from '../../common/codec';
import { loadConfig } from '../../common/config';
import { createLogger } from '../../common/logger';
import { accountKeyHash, cpfHash } from '../../common/pii';
import { type AccountKeys, type AccountSources, sealBrandAccount } from '../../connectors/accounts';
import { UnauthorizedError } from '../../connectors/errors';
import type { IdentityPaymentsConnector } from '../../connectors/identity-payments';
import type { BrandAccount } from '../../contracts/brand-account';
import { type DepositInput, depositWorkflowId } from '../../contracts/deposit';
import type { FlowRecord } from '../../contracts/flow';
import { type WithdrawalInput, withdrawalWorkflowId } from '../../contracts/withdrawal';
import { moneyAccountsOf, sealedBrandAccounts, setBrandAccount } from '../../db/brand-accounts';
import { type BrandActor, createBrand } from '../../db/brands';
import { migrate } from '../../db/migrate';
import { createPool, type Pool } from '../../db/pool';
import { staticPolicyReader } from '../../policy/seed';
import type { RunningSandbox } from '../../sandbox';
import { createWorkerActivities } from '../../worker/activities';
import { brandConnectorCache } from '../../worker/brand-connectors';
import { startProviderSandbox } from '../contract/support';
import { startApiPixForTest } from '../helpers/api-pix';
import { newCpf } from '../helpers/people';
import { defaultPolicy } from '../helpers/policy';
import { freshDatabase } from '../helpers/postgres';
import { connectorFor, sandboxControl } from '../helpers/sandbox-client';
import { waitUntil } from '../helpers/wait';

// The money flows of a brand go through that brand's connector accounts: the worker's activities,
// built as the worker builds them (worker/brand-connectors.ts over the brand's records in a real
// Postgres), against two real provider sandboxes over HTTP, the default brand's on the
// environment's credentials and brand B's on credentials of its own that the other refuses.

const PII_KEY = 'brand-connectors-pii-key-0123456789';
const codec = `k${randomBytes(3).toString('hex')}:${randomBytes(32).toString('base64')}`;
const keys: AccountKeys = {
  codecKeys: parseCodecKeys(codec, codec.split(':')[0] as string),
  hashKey: PII_KEY,
};
const admin: BrandActor = {
  operatorId: null,
  operatorEmail: 'ana.admin@pixflow.local',
  operatorRole: 'admin',
};
const fresh = () => randomBytes(12).toString('base64url');
const tag = randomBytes(3).toString('hex');
/** Brand B, with its own first-provider account; brand C, with none. */
const B = `bet-${tag}`;
const C = `nada-${tag}`;

let pool: Pool;
let databaseUrl: string;
let defaultSandbox: RunningSandbox;
let brandSandbox: RunningSandbox;
let defaultProvider: IdentityPaymentsConnector;
let connection: Connection;
let activities: ReturnType<typeof createActivities>;
let closeCache: () => void;

/** B's account: credentials and a merchant only its own sandbox knows (its URLs set once it runs). */
const bAccount = (): Extract<BrandAccount, { connector: 'identity-payments' }> => ({
  connector: 'identity-payments',
  settings: {
    baseUrl: 'http://127.0.0.1:1',
    authUrl: 'http://127.0.0.1:1',
    clientId: `client-${B}`,
    merchant: `merchant-${B}`,
    partnerId: `partner-${B}`,
  },
  secrets: { clientSecret: fresh(), apiKey: fresh(), webhookSecret: fresh() },
});

const setAccount = (brand: string, account: BrandAccount) => {
  const sealed = sealBrandAccount(keys, brand, account);
  return setBrandAccount(pool, admin, { ...sealed, settings: sealed.settings as Record<string, unknown> });
};

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  await migrate(databaseUrl);
  pool = createPool(databaseUrl, 5);
  defaultSandbox = await startProviderSandbox();
  const account = bAccount();
  brandSandbox = await startProviderSandbox({
    clientId: account.settings.clientId,
    clientSecret: account.secrets.clientSecret,
    apiKey: account.secrets.apiKey,
    merchant: account.settings.merchant,
  });
  await createBrand(pool, admin, { id: B, name: 'Bet B' });
  await createBrand(pool, admin, { id: C, name: 'Nada C' });
  await setAccount(B, {
    ...account,
    settings: { ...account.settings, baseUrl: brandSandbox.url, authUrl: brandSandbox.url },
  });
  defaultProvider = connectorFor(defaultSandbox.url, { timeoutMs: 5_000 });
  const sources: AccountSources = {
    environment: loadConfig({ PROVIDER_BASE_URL: defaultSandbox.url, PROVIDER_AUTH_URL: defaultSandbox.url }),
    keys,
    read: (brandId) => sealedBrandAccounts(pool, brandId),
  };
  const cache = brandConnectorCache({
    sources,
    options: { provider: { timeoutMs: 5_000 }, environment: { provider: defaultProvider } },
    log: createLogger('test', 'silent'),
  });
  closeCache = cache.close;
  connection = await Connection.connect({ address: inject('temporalAddress') });
  activities = createActivities({
    provider: defaultProvider,
    connectorsFor: cache.connectorsFor,
    pool,
    clock: () => new Date(),
    hashCpf: (cpf) => cpfHash(cpf, PII_KEY),
    hashAccount: (k) => accountKeyHash(k, PII_KEY),
    policy: staticPolicyReader(defaultPolicy()),
    temporal: { client: new Client({ connection }), taskQueue: `brand-connectors-${tag}` },
    reconciliation: { scheduleMs: [1, 3_600_000], maxPerSecond: 50, intervalMs: 200 },
  });
}, 60_000);

afterAll(async () => {
  closeCache?.();
  await connection?.close();
  await defaultSandbox?.close();
  await brandSandbox?.close();
  await pool?.end();
});

/** Runs an activity as the flow `workflowId` runs it. */
const as = <A extends unknown[], R>(workflowId: string, fn: (...args: A) => Promise<R>, ...args: A) =>
  new MockActivityEnvironment({
    workflowExecution: { workflowId, runId: randomBytes(8).toString('hex') },
  }).run(fn, ...args) as Promise<R>;

let n = 0;
const txidOf = () => `${Date.now()}${++n}`;
const person = { externalId: 'user-1', cpf: newCpf(), email: 'bia@example.com', name: 'Bia Lima' };

function deposit(txid: string, brand?: string) {
  const input: DepositInput = {
    txid,
    amountCentavos: 15_000,
    merchant: 'sandbox-merchant',
    client: person,
    ...(brand ? { brand } : {}),
  };
  const row = (status: string, seq: number): FlowRecord => ({
    workflowId: depositWorkflowId(txid, brand),
    type: 'deposit',
    businessId: txid,
    status,
    cpf: person.cpf,
    merchant: input.merchant,
    amountCentavos: input.amountCentavos,
    seq,
    ...(brand ? { brand } : {}),
  });
  return {
    input,
    workflowId: row('', 0).workflowId,
    awaiting: row('awaiting_payment', 1),
    completed: row('completed', 2),
  };
}

function withdrawal(transactionId: string, brand?: string) {
  const input: WithdrawalInput = {
    transactionId,
    merchant: 'sandbox-merchant',
    client: person,
    pixKey: 'bia@example.com',
    pixType: 'EMAIL',
    amountCentavos: 25_050,
    ...(brand ? { brand } : {}),
  };
  const row = (status: string, seq: number): FlowRecord => ({
    workflowId: withdrawalWorkflowId(transactionId, brand),
    type: 'withdrawal',
    businessId: transactionId,
    status,
    cpf: person.cpf,
    merchant: input.merchant,
    amountCentavos: input.amountCentavos,
    seq,
    ...(brand ? { brand } : {}),
  });
  return {
    input,
    workflowId: row('', 0).workflowId,
    sending: row('sending', 1),
    processing: row('processing', 2),
    completed: row('completed', 3),
  };
}

/** The failure an activity ended with. */
async function failureOf(run: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

describe("a brand's deposits", () => {
  it("are charged and looked up at the brand's account alone; the default brand's same txid is another charge, at the environment's", async () => {
    const txid = txidOf();
    const b = deposit(txid, B);
    const qr = await as(b.workflowId, activities.createChargeAndRecordAwaitingPayment, b.input, b.awaiting);
    expect(qr).toMatchObject({ txid, connector: 'identity-payments' });
    // Charged at B's sandbox, under B's merchant, and nowhere else.
    expect(brandSandbox.state.deposits.get(txid)).toMatchObject({ merchant: `merchant-${B}` });
    expect(defaultSandbox.state.deposits.has(txid)).toBe(false);

    const d = deposit(txid);
    await as(d.workflowId, activities.createChargeAndRecordAwaitingPayment, d.input, d.awaiting);
    expect(defaultSandbox.state.deposits.has(txid)).toBe(true);
    const { rows } = await pool.query(
      "SELECT workflow_id, brand_id FROM flows WHERE business_id = $1 ORDER BY brand_id <> 'default'",
      [txid],
    );
    expect(rows).toEqual([
      { workflow_id: `deposit-${txid}`, brand_id: 'default' },
      { workflow_id: `${B}:deposit-${txid}`, brand_id: B },
    ]);

    // Paid at B's account: B's inquiry proves it, the default brand's deposit stays unpaid.
    await sandboxControl(brandSandbox.url, `/sandbox/deposits/${txid}/pay`);
    const paidB = await as(
      b.workflowId,
      activities.inquireDepositAndRecordCompleted,
      txid,
      person.cpf,
      b.completed,
      'identity-payments',
    );
    expect(paidB).toMatchObject({ paid: true, recorded: true });
    const unpaid = await as(
      d.workflowId,
      activities.inquireDepositAndRecordCompleted,
      txid,
      person.cpf,
      d.completed,
      'identity-payments',
    );
    expect(unpaid.paid).toBe(false);
  });

  it("of a brand without an account fail for good, and no charge is made at the default brand's", async () => {
    const txid = txidOf();
    const c = deposit(txid, C);
    const failure = await failureOf(
      as(c.workflowId, activities.createChargeAndRecordAwaitingPayment, c.input, c.awaiting),
    );
    expect({ type: failure.type, nonRetryable: failure.nonRetryable }).toEqual({
      type: BRAND_WITHOUT_ACCOUNT,
      nonRetryable: true,
    });
    expect(failure.message).toContain(`brand ${C} has no`);
    expect(defaultSandbox.state.deposits.has(txid)).toBe(false);
    const inquiry = await failureOf(
      as(c.workflowId, activities.inquireDepositAndRecordCompleted, txid, person.cpf, c.completed, undefined),
    );
    expect(inquiry.type).toBe(BRAND_WITHOUT_ACCOUNT);
  });

  it("are reconciled at the brand's account: a paid one found there, the default brand's same txid not", async () => {
    const txid = txidOf();
    const b = deposit(txid, B);
    const d = deposit(txid);
    await as(b.workflowId, activities.createChargeAndRecordAwaitingPayment, b.input, b.awaiting);
    await sandboxControl(brandSandbox.url, `/sandbox/deposits/${txid}/pay`);
    /** One sweep over `workflowId`'s row alone (the flows are not running: a hint reaches no one). */
    const sweepOnly = async (workflowId: string) => {
      await pool.query(
        `UPDATE flows SET next_check_at = CASE WHEN workflow_id = $1 THEN now() - interval '1 second'
                                               ELSE now() + interval '1 hour' END`,
        [workflowId],
      );
      return (await new MockActivityEnvironment().run(activities.reconcileDue)) as SweepResult;
    };
    // Paid at B's account, which the default brand's has never heard of: found only if B's is asked.
    expect(await sweepOnly(b.workflowId)).toMatchObject({ checked: 1, found: 1, failed: 0 });
    // The default brand's deposit of the same txid, unpaid at its account: not B's payment.
    await as(d.workflowId, activities.createChargeAndRecordAwaitingPayment, d.input, d.awaiting);
    expect(await sweepOnly(d.workflowId)).toMatchObject({ checked: 1, found: 0, failed: 0 });
  });
});

describe("a brand's withdrawals", () => {
  it("are sent, checked and their receipt read at the brand's account alone", async () => {
    const id = `wd-${txidOf()}`;
    const b = withdrawal(id, B);
    const sent = await as(b.workflowId, activities.sendPayoutAndRecord, b.input, b.sending, b.processing);
    expect(sent.alreadyExisted).toBe(false);
    expect(brandSandbox.state.withdrawals.get(id)).toMatchObject({ merchant: `merchant-${B}` });
    expect(defaultSandbox.state.withdrawals.has(id)).toBe(false);
    await sandboxControl(brandSandbox.url, `/sandbox/withdrawals/${id}/settle`);
    const check = await as(b.workflowId, activities.checkPayoutAndRecordCompleted, id, b.completed);
    expect(check.outcome).toBe('completed');
    // The receipt, asked of the brand its flow's id names.
    await expect(as(b.workflowId, activities.storeReceipt, id)).resolves.toMatchObject({
      bytes: expect.any(Number),
    });
    // The default brand has no payout of this id: its receipt, asked as its flow, is not B's.
    const other = await as(withdrawalWorkflowId(id), activities.storeReceipt, id).then(
      () => 'stored',
      () => 'refused',
    );
    expect(other).toBe('refused');
  });

  it('of a brand without an account fail for good before anything is sent or written', async () => {
    const id = `wd-${txidOf()}`;
    const c = withdrawal(id, C);
    const failure = await failureOf(
      as(c.workflowId, activities.sendPayoutAndRecord, c.input, c.sending, c.processing),
    );
    expect({ type: failure.type, nonRetryable: failure.nonRetryable }).toEqual({
      type: BRAND_WITHOUT_ACCOUNT,
      nonRetryable: true,
    });
    expect(defaultSandbox.state.withdrawals.has(id)).toBe(false);
    const { rowCount } = await pool.query('SELECT 1 FROM flows WHERE business_id = $1', [id]);
    expect(rowCount).toBe(0);
  });
});

describe('the money flows a brand has the accounts for', () => {
  it('are both for the default brand, those of its own records for another, none for a brand without', async () => {
    expect(await moneyAccountsOf(pool, 'default')).toEqual({ deposit: true, withdrawal: true });
    expect(await moneyAccountsOf(pool, B)).toEqual({ deposit: true, withdrawal: true });
    expect(await moneyAccountsOf(pool, C)).toEqual({ deposit: false, withdrawal: false });
    expect(await moneyAccountsOf(pool, `none-${tag}`)).toBeUndefined();
  });
});

describe("a brand's deposit returns", () => {
  it("ask the deposit's brand's connector, never the default brand's of the same name", async () => {
    const txid = txidOf();
    const ask = {
      connector: 'identity-payments',
      e2eId: `E${txid}`.padEnd(32, '0'),
      returnId: `${txid}D1`,
      amountCentavos: 100,
    };
    // The default brand has the first provider (which returns nothing by itself); brand C has no account.
    expect(await as(`deposit-return-${txid}`, activities.requestDepositReturn, ask)).toEqual({
      kind: 'by_hand',
      why: 'connector_cannot_return',
    });
    expect(await as(`${C}:deposit-return-${txid}`, activities.requestDepositReturn, ask)).toEqual({
      kind: 'by_hand',
      why: 'connector_not_configured',
    });
  });
});

describe("the worker's connectors of each brand", () => {
  it("are the process's own for the default brand, kept while a brand's record stays, built again once it changes", async () => {
    let clock = 0;
    const cache = brandConnectorCache({
      sources: {
        environment: loadConfig({
          PROVIDER_BASE_URL: defaultSandbox.url,
          PROVIDER_AUTH_URL: defaultSandbox.url,
        }),
        keys,
        read: (brandId) => sealedBrandAccounts(pool, brandId),
      },
      options: { provider: { timeoutMs: 5_000 }, environment: { provider: defaultProvider } },
      log: createLogger('test', 'silent'),
      ttlMs: 1_000,
      now: () => clock,
    });
    const original = (await sealedBrandAccounts(pool, B))?.[0];
    try {
      // The default brand without a record: the very connector the process built, one token cache.
      expect((await cache.connectorsFor('default')).provider).toBe(defaultProvider);
      const first = (await cache.connectorsFor(B)).provider;
      expect(first).toBeDefined();
      expect(first).not.toBe(defaultProvider);
      // Read again past the bound, unchanged: the same connector.
      clock += 5_000;
      expect((await cache.connectorsFor(B)).provider).toBe(first);
      // A new client secret: within the bound the old connector still answers; past it, the new one,
      // which speaks with the new secret (B's sandbox knows only the old one).
      const changed = bAccount();
      await setAccount(B, {
        ...changed,
        settings: { ...changed.settings, baseUrl: brandSandbox.url, authUrl: brandSandbox.url },
      });
      expect((await cache.connectorsFor(B)).provider).toBe(first);
      clock += 5_000;
      const second = (await cache.connectorsFor(B)).provider;
      expect(second).not.toBe(first);
      await expect(second?.lookUpDeposit('1')).rejects.toBeInstanceOf(UnauthorizedError);
      await expect(first?.lookUpDeposit('1')).resolves.toMatchObject({ state: 'not_found' });
    } finally {
      // B's account as the other tests set it.
      if (original)
        await pool.query(
          'UPDATE brand_connector_accounts SET secrets_sealed = $2, secret_hashes = $3 WHERE brand_id = $1',
          [B, original.secretsSealed, original.secretHashes],
        );
      cache.close();
    }
  });
});

describe("the worker's connectors of a brand while Postgres does not answer", () => {
  it('stay those it built, and a brand never built fails until its records can be read', async () => {
    let clock = 0;
    let down = false;
    const cache = brandConnectorCache({
      sources: {
        environment: loadConfig({
          PROVIDER_BASE_URL: defaultSandbox.url,
          PROVIDER_AUTH_URL: defaultSandbox.url,
        }),
        keys,
        read: (brandId) =>
          down ? Promise.reject(new Error('connection terminated')) : sealedBrandAccounts(pool, brandId),
      },
      options: { provider: { timeoutMs: 5_000 }, environment: { provider: defaultProvider } },
      log: createLogger('test', 'silent'),
      ttlMs: 1_000,
      now: () => clock,
    });
    try {
      const built = (await cache.connectorsFor(B)).provider;
      down = true;
      clock += 5_000;
      expect((await cache.connectorsFor(B)).provider).toBe(built);
      await expect(cache.connectorsFor('default')).rejects.toThrow('connection terminated');
      down = false;
      expect((await cache.connectorsFor('default')).provider).toBe(defaultProvider);
    } finally {
      cache.close();
    }
  });
});

describe("a brand's API Pix account in the worker", () => {
  it('is told where to post its webhooks once the worker builds its connectors', async () => {
    const psp = await startApiPixForTest();
    const brand = `pix-${tag}`;
    const webhookSecret = `pix-hook-${randomBytes(12).toString('hex')}`;
    const config = loadConfig({
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      PROVIDER_BASE_URL: defaultSandbox.url,
      PROVIDER_AUTH_URL: defaultSandbox.url,
      PII_HASH_KEY: PII_KEY,
      CODEC_KEYS: codec,
      CODEC_ACTIVE_KEY_ID: codec.split(':')[0],
      LOG_LEVEL: 'silent',
    });
    const worker = await createWorkerActivities(config, createLogger('test', 'silent'), defaultPolicy());
    try {
      await createBrand(pool, admin, { id: brand, name: 'Pix Brand' });
      await setAccount(brand, {
        connector: 'api-pix',
        settings: {
          baseUrl: psp.url,
          tokenUrl: psp.tokenUrl,
          clientId: psp.clientId,
          pixKey: psp.pixKey,
          certFile: psp.pki.merchantClient.cert,
          keyFile: psp.pki.merchantClient.key,
          caFile: psp.pki.pspCa.cert,
          webhookOrigin: 'https://hooks.pix-brand.example:8443',
        },
        secrets: { clientSecret: psp.clientSecret, webhookSecret },
      });
      const { collectors } = await worker.brands.connectorsFor(brand);
      expect(collectors.names).toEqual(['api-pix']);
      // The PSP now posts the account's webhooks to the brand's own path on the listener.
      const token = await psp.token();
      const registered = await waitUntil(
        () =>
          psp.request(`/webhook/${encodeURIComponent(psp.pixKey)}`, {
            headers: { authorization: `Bearer ${token}` },
          }),
        (r) => r.status === 200,
        10_000,
      );
      expect(registered.body).toMatchObject({
        webhookUrl: `https://hooks.pix-brand.example:8443/webhooks/api-pix/${webhookSecret}`,
      });
    } finally {
      await worker.close();
      await psp.close();
    }
  });
});
