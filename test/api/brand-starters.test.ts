import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../common/config';
import { MerchantKey } from '../../common/search-attributes';
import { sealBrandAccount } from '../../connectors/accounts';
import type { DepositReturnInput } from '../../contracts/deposit';
import { depositWorkflowId } from '../../contracts/deposit';
import type { WithdrawalRequest } from '../../contracts/withdrawal';
import { getBrandAccount, setBrandAccount } from '../../db/brand-accounts';
import { type BrandActor, createBrand } from '../../db/brands';
import { startDeposit } from '../../starters/deposit';
import { startDepositReturn } from '../../starters/deposit-return';
import type { StarterDeps } from '../../starters/types';
import { startWithdrawal } from '../../starters/withdrawal';
import { type FlowEnv, startFlowEnv, TEST_PII_KEY } from '../helpers/flow-env';
import { newCpf } from '../helpers/people';
import { testCodecKeys } from '../helpers/temporal';

// The starters for a brand other than the default, on the real workflows, worker, Temporal dev
// server and Postgres: the merchant its flow records is its own account's (or its id), never the
// environment's PROVIDER_MERCHANT, which is the default brand's; a deposit's return is started
// under the deposit's brand.

const tag = randomBytes(3).toString('hex');
/** Brand B has an identity-payments account with a merchant of its own; brand C has none. */
const B = `mer-b-${tag}`;
const C = `mer-c-${tag}`;
const B_MERCHANT = `merchant-of-${B}`;
const ENV_MERCHANT = 'sandbox-merchant';
const admin: BrandActor = {
  operatorId: null,
  operatorEmail: 'ana.admin@pixflow.local',
  operatorRole: 'admin',
};

let f: FlowEnv;
let deps: StarterDeps;

/** The flows row's merchant and brand, once the flow wrote it. */
async function rowOf(workflowId: string) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { rows } = await f.pool.query(
      'SELECT merchant, brand_id, status FROM flows WHERE workflow_id = $1',
      [workflowId],
    );
    if (rows[0]) return rows[0] as { merchant: string; brand_id: string; status: string };
    if (Date.now() > deadline) throw new Error(`no flows row for ${workflowId}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const merchantTagOf = async (workflowId: string) =>
  (await f.env.client.workflow.getHandle(workflowId).describe()).typedSearchAttributes.get(MerchantKey);

beforeAll(async () => {
  f = await startFlowEnv({ temporal: 'dev' });
  await createBrand(f.pool, admin, { id: B, name: 'Merchant B' });
  await createBrand(f.pool, admin, { id: C, name: 'Merchant C' });
  const sealed = sealBrandAccount({ codecKeys: testCodecKeys, hashKey: TEST_PII_KEY }, B, {
    connector: 'identity-payments',
    settings: {
      baseUrl: 'http://127.0.0.1:1',
      authUrl: 'http://127.0.0.1:1',
      clientId: `client-${B}`,
      merchant: B_MERCHANT,
      partnerId: `partner-${B}`,
    },
    secrets: {
      clientSecret: randomBytes(12).toString('hex'),
      apiKey: 'c'.repeat(24),
      webhookSecret: `wh-${randomBytes(12).toString('hex')}`,
    },
  });
  await setBrandAccount(f.pool, admin, { ...sealed, settings: sealed.settings as Record<string, unknown> });
  deps = {
    config: loadConfig({
      TEMPORAL_TASK_QUEUE: f.taskQueue,
      PII_HASH_KEY: TEST_PII_KEY,
      PROVIDER_MERCHANT: ENV_MERCHANT,
    }),
    temporal: f.env.client,
    // As a surface reads it: the brand's identity-payments account's merchant.
    brandMerchant: async (brand) => {
      const merchant = (await getBrandAccount(f.pool, brand, 'identity-payments'))?.settings.merchant;
      return typeof merchant === 'string' ? merchant : undefined;
    },
  };
}, 120_000);

afterAll(() => f?.close());

// An unverified person: the rules refuse each flow in its first task, after its row is written.
const client = () => ({ externalId: 'user-m', cpf: newCpf(), email: 'm@example.com', name: 'Mia Melo' });
const withdrawalOf = (over: Partial<WithdrawalRequest> = {}): WithdrawalRequest => ({
  transactionId: `mer-wd-${Date.now()}-${randomBytes(3).toString('hex')}`,
  merchant: ENV_MERCHANT,
  client: client(),
  pixKey: 'm@example.com',
  pixType: 'EMAIL',
  amountCentavos: 10_000,
  ...over,
});

describe("a brand's merchant", () => {
  it("is its account's on a withdrawal, whatever merchant was asked, never the environment's", async () => {
    const asked = withdrawalOf();
    const started = await startWithdrawal(deps, asked, B);
    expect(started.workflowId).toBe(`${B}:withdrawal-${asked.transactionId}`);
    const row = await rowOf(started.workflowId);
    expect({ merchant: row.merchant, brand: row.brand_id }).toEqual({ merchant: B_MERCHANT, brand: B });
    expect(await merchantTagOf(started.workflowId)).toBe(B_MERCHANT);
    // The same request again is the same flow, not a conflict: its merchant is decided the same way.
    const again = await startWithdrawal(deps, asked, B);
    expect(again.outcome).not.toBe('conflict');
    // The default brand's, of the same request, keeps what was asked.
    const ofDefault = await startWithdrawal(deps, asked);
    expect(ofDefault.workflowId).toBe(`withdrawal-${asked.transactionId}`);
    expect((await rowOf(ofDefault.workflowId)).merchant).toBe(ENV_MERCHANT);
  });

  it("is its account's on a deposit, and the brand's id for a brand with no such account", async () => {
    const txid = `${Date.now()}${randomBytes(3).readUIntBE(0, 3)}`;
    const body = { txid, amountCentavos: 15_000, client: client() };
    const atB = await startDeposit(deps, body, undefined, B);
    expect(atB.workflowId).toBe(depositWorkflowId(txid, B));
    expect((await rowOf(atB.workflowId)).merchant).toBe(B_MERCHANT);
    expect(await merchantTagOf(atB.workflowId)).toBe(B_MERCHANT);
    const atC = await startDeposit(deps, { ...body, merchant: ENV_MERCHANT }, undefined, C);
    expect((await rowOf(atC.workflowId)).merchant).toBe(C);
    // A surface that cannot read the account records the brand's id, never the environment's.
    const txid2 = `${txid}1`;
    const unread = await startDeposit(
      { ...deps, brandMerchant: undefined },
      { ...body, txid: txid2 },
      undefined,
      B,
    );
    expect((await rowOf(unread.workflowId)).merchant).toBe(B);
    // The default brand's deposit names the environment's merchant, as before brands.
    const atDefault = await startDeposit(deps, body);
    expect(atDefault.workflowId).toBe(`deposit-${txid}`);
    expect((await rowOf(atDefault.workflowId)).merchant).toBe(ENV_MERCHANT);
  });
});

describe("a deposit's return", () => {
  it("is started under the deposit's brand, apart from the default brand's of the same txid", async () => {
    const txid = `${Date.now()}${randomBytes(3).readUIntBE(0, 3)}`;
    const input: DepositReturnInput = {
      txid,
      amountCentavos: 15_000,
      merchant: B_MERCHANT,
      e2eId: `E${randomBytes(8).toString('hex')}`,
      connector: 'api-pix',
      row: { seq: 3, details: {} },
      by: 'ana.reviewer@pixflow.local',
    };
    // On a queue no worker polls: what is asserted is the flow each start makes, not its run.
    const idle = `${f.taskQueue}-idle`;
    const ofB = await startDepositReturn(f.env.client, idle, input, depositWorkflowId(txid, B));
    expect(ofB).toEqual({ outcome: 'started', workflowId: `${B}:deposit-return-${txid}` });
    expect(await startDepositReturn(f.env.client, idle, input, depositWorkflowId(txid, B))).toEqual({
      outcome: 'already',
      workflowId: `${B}:deposit-return-${txid}`,
    });
    const ofDefault = await startDepositReturn(f.env.client, idle, input);
    expect(ofDefault).toEqual({ outcome: 'started', workflowId: `deposit-return-${txid}` });
    // A deposit id of another txid is a caller's mistake: nothing is started for it.
    await expect(
      startDepositReturn(f.env.client, idle, input, depositWorkflowId(`${txid}9`, B)),
    ).rejects.toThrow(/another flow/);
    for (const id of [ofB.workflowId, ofDefault.workflowId]) {
      await f.env.client.workflow.getHandle(id).terminate('test done');
    }
  });
});
