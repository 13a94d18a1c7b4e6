import { randomBytes } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { depositStateResponseSchema } from '../../api/deposits-schemas';
import { withdrawalResponseSchema } from '../../api/withdrawals-schemas';
import { loadConfig } from '../../common/config';
import { createLogger } from '../../common/logger';
import { type AccountKeys, sealBrandAccount } from '../../connectors/accounts';
import { toApiPixTxid } from '../../connectors/api-pix/txid';
import type { BrandAccount } from '../../contracts/brand-account';
import { type DepositInput, type DepositState, depositStateQuery } from '../../contracts/deposit';
import { providerNotificationSignal } from '../../contracts/flow';
import {
  payoutDecisionUpdate,
  type WithdrawalRequest,
  type WithdrawalState,
  withdrawalStateQuery,
  withdrawalWorkflowId,
} from '../../contracts/withdrawal';
import { setBrandAccount } from '../../db/brand-accounts';
import { createBrand } from '../../db/brands';
import { migrate } from '../../db/migrate';
import { latestPolicyVersion } from '../../db/policy';
import { createPool, type Pool } from '../../db/pool';
import { proposeBrandPolicyChange } from '../../policy/brand-changes';
import { proposeAssignments } from '../../policy/changes';
import { type PolicyStore, startPolicyStore } from '../../policy/store';
import type { RunningSandbox } from '../../sandbox';
import { startDeposit } from '../../starters/deposit';
import { startWithdrawal } from '../../starters/withdrawal';
import { flowState } from '../../starters/workflow-calls';
import { startProviderSandbox } from '../contract/support';
import { type ApiPixForTest, startApiPixForTest } from '../helpers/api-pix';
import { atSandbox, BRAND_ADMIN, brandSandboxOptions, startBrandWorker, testBrand } from '../helpers/brands';
import { verifiedDepositor, verifiedWithKnownPayee } from '../helpers/customers';
import { provenDecision } from '../helpers/decisions';
import { recordHistory } from '../helpers/histories';
import { newCpf } from '../helpers/people';
import { defaultPolicy } from '../helpers/policy';
import { freshDatabase } from '../helpers/postgres';
import { testCodecKeys, testDataConverter } from '../helpers/temporal';
import { waitUntil } from '../helpers/wait';

// A brand's rules decide its own flows on the real worker: the workflows and activities on the
// run's Temporal server, the policy store every worker keeps over a real Postgres, brand B's
// overrides set as an admin sets them. B routes its deposits to its API Pix PSP first and sends
// payouts above R$ 1.000,00 to four eyes, while the default brand keeps the operator's policy:
// the first provider, and four eyes above R$ 10.000,00. The operator's change of a rule B does
// not set reaches B's flows. B's flows name the version of B's rules beside the operator's in
// their state, row and answers; the default brand's name none.

const PII_KEY = 'brand-policy-worker-pii-key-0123456789';
const keys: AccountKeys = { codecKeys: testCodecKeys, hashKey: PII_KEY };
const admin = BRAND_ADMIN;
const tag = randomBytes(3).toString('hex');
const B = `bet-${tag}`;
const PERSON = newCpf();
const taskQueue = `brand-policy-${tag}`;
const config = loadConfig({
  TEMPORAL_TASK_QUEUE: taskQueue,
  PII_HASH_KEY: PII_KEY,
  PROVIDER_MERCHANT: 'sandbox-merchant',
});

let env: TestWorkflowEnvironment;
let pool: Pool;
let store: PolicyStore;
let defaultSandbox: RunningSandbox;
let brandSandbox: RunningSandbox;
let psp: ApiPixForTest;
let worker: Worker;
let running: Promise<void>;
let closeCache: () => void;
let activities: Awaited<ReturnType<typeof startBrandWorker>>['activities'];

const brandB = testBrand(B);

const setAccount = async (account: BrandAccount) => {
  const sealed = sealBrandAccount(keys, B, account);
  await setBrandAccount(pool, admin, { ...sealed, settings: sealed.settings as Record<string, unknown> });
};

beforeAll(async () => {
  env = await TestWorkflowEnvironment.createFromExistingServer({
    address: inject('temporalAddress'),
    client: { dataConverter: testDataConverter },
  });
  const url = await freshDatabase();
  await migrate(url);
  pool = createPool(url, 5);
  store = startPolicyStore({
    pool,
    seed: defaultPolicy(),
    log: createLogger('test', 'silent'),
    refreshMs: 60_000,
  });
  await store.current();
  defaultSandbox = await startProviderSandbox();
  brandSandbox = await startProviderSandbox(brandSandboxOptions(brandB));
  psp = await startApiPixForTest();
  await createBrand(pool, admin, { id: B, name: 'Bet B' });
  // Verified, and met by every brand there is now (its onboarding at each).
  await verifiedDepositor(pool, PII_KEY, PERSON);
  await setAccount(atSandbox(brandB, brandSandbox.url).account);
  await setAccount({
    connector: 'api-pix',
    settings: {
      baseUrl: psp.url,
      tokenUrl: psp.tokenUrl,
      clientId: psp.clientId,
      pixKey: psp.pixKey,
      certFile: psp.pki.merchantClient.cert,
      keyFile: psp.pki.merchantClient.key,
      caFile: psp.pki.pspCa.cert,
    },
    secrets: { clientSecret: psp.clientSecret },
  });
  ({ worker, running, closeCache, activities } = await startBrandWorker({
    temporal: env.client,
    nativeConnection: env.nativeConnection,
    taskQueue,
    pool,
    keys,
    envSandboxUrl: defaultSandbox.url,
    policy: store,
    log: createLogger('test', 'silent'),
  }));
  // B's rules, as an admin sets them (the CLI's own call): applied at once, a tightening.
  const out = await proposeBrandPolicyChange(pool, admin, {
    brand: B,
    set: [
      ['deposits.routing.connectors', 'api-pix,identity-payments'],
      ['payouts.approvalAboveCentavos', '100000'],
    ],
    inherit: [],
    reason: 'B collects at its PSP first and approves payouts above R$ 1.000,00',
  });
  expect(out).toMatchObject({ kind: 'applied', version: 1 });
  await waitUntil(
    () => store.current(B),
    (p) => p.brandPolicyVersion === 1,
    5_000,
  );
}, 120_000);

afterAll(async () => {
  worker?.shutdown();
  await running;
  closeCache?.();
  await store?.close();
  await defaultSandbox?.close();
  await brandSandbox?.close();
  await psp?.close();
  await pool?.end();
  await env?.teardown();
});

const starter = () => ({ config, temporal: env.client as Client });
const newTxid = () => `${Date.now()}${randomBytes(2).readUInt16BE()}`;
const depositBody = (txid: string) => ({
  txid,
  amountCentavos: 15_000,
  client: { externalId: 'user-b', cpf: PERSON, email: 'bia@example.com', name: 'Bia Lima' },
});
const depositState = (handle: WorkflowHandle) => handle.query<DepositState>(depositStateQuery);
const withdrawal = (amountCentavos: number): WithdrawalRequest => ({
  transactionId: `wd-${newTxid()}`,
  merchant: 'sandbox-merchant',
  client: { externalId: 'user-b', cpf: PERSON, email: 'bia@example.com', name: 'Bia Lima' },
  pixKey: 'bia@example.com',
  pixType: 'EMAIL',
  amountCentavos,
});
const withdrawalState = (transactionId: string, brand?: string) =>
  env.client.workflow
    .getHandle(withdrawalWorkflowId(transactionId, brand))
    .query<WithdrawalState>(withdrawalStateQuery);
/** A flow's row as the workflows wrote it: its status and details. */
const rowOf = async (workflowId: string) =>
  (await pool.query('SELECT status, details FROM flows WHERE workflow_id = $1', [workflowId])).rows[0] as {
    status: string;
    details: Record<string, unknown>;
  };
/**
 * The answer of GET /v1/deposits/{txid} as the API builds it: the flow's state, read as it reads
 * it (its QR, which the API draws, left aside).
 */
const depositAnswer = async (handle: WorkflowHandle) => {
  const { qr: _qr, ...state } = await flowState(handle, depositStateQuery);
  return depositStateResponseSchema.parse({ workflowId: handle.workflowId, state }).state;
};
/** The answer of GET /v1/withdrawals/{transactionId}, likewise. */
const withdrawalAnswer = async (transactionId: string, brand?: string) => {
  const handle = env.client.workflow.getHandle(withdrawalWorkflowId(transactionId, brand));
  return withdrawalResponseSchema.parse({
    workflowId: handle.workflowId,
    transactionId,
    state: await flowState(handle, withdrawalStateQuery),
  }).state;
};

describe("a brand's rules on the real worker", () => {
  it("route B's deposit to B's API Pix PSP first, while the default brand's goes to the first provider", async () => {
    const txid = newTxid();
    const atB = await startDeposit(starter(), depositBody(txid), undefined, B);
    expect(atB).toMatchObject({ outcome: 'started', workflowId: `${B}:deposit-${txid}` });
    const bState = await waitUntil(
      () => depositState(env.client.workflow.getHandle(`${B}:deposit-${txid}`)),
      (s) => s.status === 'awaiting_payment',
      20_000,
    );
    expect(bState.connector).toBe('api-pix');
    expect(bState).toMatchObject({ policyVersion: 1, brandPolicyVersion: 1 });
    const token = await psp.token();
    const cob = await psp.request(`/cob/${toApiPixTxid(txid)}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(cob.status).toBe(200);
    expect(brandSandbox.state.deposits.has(txid)).toBe(false);
    // Paid at B's PSP by the person: completed, its state, row and answer naming B's version.
    const bHandle = env.client.workflow.getHandle(`${B}:deposit-${txid}`);
    await psp.pay(toApiPixTxid(txid), { payer: 'holder' });
    await bHandle.signal(providerNotificationSignal, { type: 'deposit', action: 'updated', id: txid });
    expect(await bHandle.result()).toMatchObject({
      status: 'completed',
      connector: 'api-pix',
      policyVersion: 1,
      brandPolicyVersion: 1,
    });
    expect(await rowOf(bHandle.workflowId)).toMatchObject({
      status: 'completed',
      details: { policyVersion: 1, brandPolicyVersion: 1 },
    });
    expect(await depositAnswer(bHandle)).toMatchObject({ policyVersion: 1, brandPolicyVersion: 1 });
    await recordHistory(bHandle, 'deposit-brand-policy-api-pix-paid');

    const other = newTxid();
    const atDefault = await startDeposit(starter(), depositBody(other));
    expect(atDefault).toMatchObject({ outcome: 'started', workflowId: `deposit-${other}` });
    const dState = await waitUntil(
      () => depositState(env.client.workflow.getHandle(`deposit-${other}`)),
      (s) => s.status === 'awaiting_payment',
      20_000,
    );
    expect(dState.connector ?? 'identity-payments').toBe('identity-payments');
    expect(dState.policyVersion).toBe(1);
    expect(dState).not.toHaveProperty('brandPolicyVersion');
    expect((await rowOf(`deposit-${other}`)).details).not.toHaveProperty('brandPolicyVersion');
    expect(await depositAnswer(env.client.workflow.getHandle(`deposit-${other}`))).not.toHaveProperty(
      'brandPolicyVersion',
    );
    expect(defaultSandbox.state.deposits.has(other)).toBe(true);
    expect(
      (await psp.request(`/cob/${toApiPixTxid(other)}`, { headers: { authorization: `Bearer ${token}` } }))
        .status,
    ).toBe(404);
  });

  it("name B's overrides' version beside the operator's in the decision, and none for the default brand", async () => {
    const input = (brand?: string): DepositInput => ({
      ...depositBody(newTxid()),
      requestId: randomBytes(8).toString('hex'),
      merchant: 'sandbox-merchant',
      ...(brand ? { brand } : {}),
    });
    expect(await activities.screenDeposit(input(B))).toEqual({
      verdict: 'pass',
      policyVersion: 1,
      brandPolicyVersion: 1,
    });
    expect(await activities.screenDeposit(input())).toEqual({ verdict: 'pass', policyVersion: 1 });
  });

  it("answer B's refused deposit with B's version beside the operator's, and the default brand's with none", async () => {
    // A person nobody onboarded: the rules refuse the deposit in its flow.
    const stranger = { ...depositBody(newTxid()), client: { ...depositBody('').client, cpf: newCpf() } };
    const atB = await startDeposit(starter(), stranger, undefined, B);
    expect(atB).toMatchObject({
      outcome: 'refused',
      reason: 'not_verified',
      policyVersion: 1,
      brandPolicyVersion: 1,
    });
    // The refusal's own fields (what the problem carries besides) hold no version.
    if (atB.outcome !== 'refused') throw new Error('not refused');
    expect(atB.details).not.toHaveProperty('brandPolicyVersion');
    expect(atB.details).not.toHaveProperty('policyVersion');
    // The same request again reads the closed flow's state: the same versions.
    expect(await startDeposit(starter(), stranger, undefined, B)).toMatchObject({
      outcome: 'refused',
      policyVersion: 1,
      brandPolicyVersion: 1,
    });
    const atDefault = await startDeposit(starter(), { ...stranger, txid: newTxid() });
    expect(atDefault).toMatchObject({ outcome: 'refused', reason: 'not_verified', policyVersion: 1 });
    expect(atDefault).not.toHaveProperty('brandPolicyVersion');
  });

  it("send B's R$ 2.000,00 payout to four eyes under B's threshold, while the default brand's is sent", async () => {
    const atB = withdrawal(200_000);
    await verifiedWithKnownPayee(pool, PII_KEY, atB);
    expect(await startWithdrawal(starter(), atB, B)).toMatchObject({ outcome: 'started' });
    const bState = await waitUntil(
      () => withdrawalState(atB.transactionId, B),
      (s) => s.status === 'awaiting_approval',
      20_000,
    );
    expect(bState).toMatchObject({ policyVersion: 1, brandPolicyVersion: 1 });
    expect(brandSandbox.state.withdrawals.has(atB.transactionId)).toBe(false);
    // An operator refuses it: it ends refused, nothing sent, still naming B's version.
    const bId = withdrawalWorkflowId(atB.transactionId, B);
    const bHandle = env.client.workflow.getHandle(bId);
    const refusal = {
      operator: 'bruno@ops.example',
      decision: 'refuse',
      reason: 'payee under review',
    } as const;
    await bHandle.executeUpdate(payoutDecisionUpdate, {
      args: [await provenDecision(pool, bId, 'withdrawal.decision', refusal.operator, refusal)],
    });
    expect(await bHandle.result()).toMatchObject({
      status: 'refused',
      reason: 'operator_refused',
      policyVersion: 1,
      brandPolicyVersion: 1,
    });
    expect(await rowOf(bId)).toMatchObject({
      status: 'refused',
      details: { policyVersion: 1, brandPolicyVersion: 1 },
    });
    expect(await withdrawalAnswer(atB.transactionId, B)).toMatchObject({
      status: 'refused',
      policyVersion: 1,
      brandPolicyVersion: 1,
    });
    expect(brandSandbox.state.withdrawals.has(atB.transactionId)).toBe(false);
    await recordHistory(bHandle, 'withdrawal-brand-policy-four-eyes-refused');

    const atDefault = withdrawal(200_000);
    await verifiedWithKnownPayee(pool, PII_KEY, atDefault);
    expect(await startWithdrawal(starter(), atDefault)).toMatchObject({ outcome: 'started' });
    await waitUntil(
      () => Promise.resolve(defaultSandbox.state.withdrawals.get(atDefault.transactionId)),
      (w) => w !== undefined,
      20_000,
    );
    const dState = await withdrawalState(atDefault.transactionId);
    expect(dState.status).not.toBe('awaiting_approval');
    expect(dState.policyVersion).toBe(1);
    expect(dState).not.toHaveProperty('brandPolicyVersion');
    expect((await rowOf(withdrawalWorkflowId(atDefault.transactionId))).details).not.toHaveProperty(
      'brandPolicyVersion',
    );
    expect(await withdrawalAnswer(atDefault.transactionId)).not.toHaveProperty('brandPolicyVersion');
  });

  it("bring the operator's change of a rule B does not set to B's flows: a lower daily limit refuses B's payout", async () => {
    const current = await latestPolicyVersion(pool);
    if (!current) throw new Error('no operator version');
    await proposeAssignments(pool, admin, {
      current,
      assignments: ['withdrawals.dailyLimitCentavos=100000'],
      reason: "a lower daily limit for every brand's customers",
    });
    await waitUntil(
      () => store.current(B),
      (p) => p.version === 2,
      5_000,
    );
    const atB = withdrawal(150_000);
    await verifiedWithKnownPayee(pool, PII_KEY, atB);
    const started = await startWithdrawal(starter(), atB, B);
    // The refusal as the API and Nexus answer it: the operator's version 2 under B's own 1.
    expect(started).toMatchObject({ outcome: 'refused', policyVersion: 2, brandPolicyVersion: 1 });
    const state = await withdrawalState(atB.transactionId, B);
    expect(state).toMatchObject({
      status: 'refused',
      reason: 'limit_exceeded',
      policyVersion: 2,
      brandPolicyVersion: 1,
    });
    expect(brandSandbox.state.withdrawals.has(atB.transactionId)).toBe(false);
  });

  it("return B's held deposit by B's rules after B's review delay, the hold and the return naming B's version", async () => {
    const out = await proposeBrandPolicyChange(pool, admin, {
      brand: B,
      set: [
        ['deposits.autoReturnThirdParty', 'true'],
        ['deposits.autoReturnAfterMs', '1000'],
      ],
      inherit: [],
      reason: "B returns a third party's money itself after a second",
    });
    expect(out).toMatchObject({ kind: 'applied', version: 2 });
    await waitUntil(
      () => store.current(B),
      (p) => p.brandPolicyVersion === 2,
      5_000,
    );
    const txid = newTxid();
    await startDeposit(starter(), depositBody(txid), undefined, B);
    const handle = env.client.workflow.getHandle(`${B}:deposit-${txid}`);
    await waitUntil(
      () => depositState(handle),
      (s) => s.status === 'awaiting_payment',
      20_000,
    );
    await psp.pay(toApiPixTxid(txid), { payer: 'third_party', cpf: newCpf(), nome: 'João' });
    await handle.signal(providerNotificationSignal, { type: 'deposit', action: 'updated', id: txid });
    const decided = { policyVersion: 2, brandPolicyVersion: 2 };
    const result: DepositState = await handle.result();
    expect(result).toMatchObject({
      status: 'returned',
      ...decided,
      resolution: { decision: 'return', by: 'rules', ...decided },
      return: { state: 'returned', by: 'rules', ...decided },
    });
    expect(await rowOf(handle.workflowId)).toMatchObject({
      status: 'returned',
      details: { ...decided, resolution: decided, return: decided },
    });
    expect(await depositAnswer(handle)).toMatchObject({
      ...decided,
      resolution: decided,
      return: decided,
    });
    await recordHistory(handle, 'deposit-brand-policy-held-auto-returned');
  });
});
