import { randomBytes } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../common/config';
import { createLogger } from '../../common/logger';
import type { AccountKeys } from '../../connectors/accounts';
import { type DepositState, depositStateQuery, depositWorkflowId } from '../../contracts/deposit';
import {
  type WithdrawalRequest,
  type WithdrawalState,
  withdrawalStateQuery,
  withdrawalWorkflowId,
} from '../../contracts/withdrawal';
import { migrate } from '../../db/migrate';
import { createPool, type Pool } from '../../db/pool';
import { staticPolicyReader } from '../../policy/seed';
import type { RunningSandbox } from '../../sandbox';
import { startDeposit } from '../../starters/deposit';
import { startWithdrawal } from '../../starters/withdrawal';
import { startProviderSandbox } from '../contract/support';
import {
  atSandbox,
  brandIngress,
  brandSandboxOptions,
  setUpBrand,
  startBrandWorker,
  testBrand,
} from '../helpers/brands';
import { verifiedDepositor, verifiedWithKnownPayee } from '../helpers/customers';
import { newCpf } from '../helpers/people';
import { defaultPolicy } from '../helpers/policy';
import { freshDatabase } from '../helpers/postgres';
import { sandboxControl } from '../helpers/sandbox-client';
import { testCodecKeys, testDataConverter } from '../helpers/temporal';
import { waitUntil } from '../helpers/wait';
import {
  INGRESS_PII_KEY,
  PARTNER,
  post,
  type RunningIngress,
  SECRET,
  startIngress,
} from '../ingress/harness';

// Two brands' deposits end to end on the real worker code, the run's Temporal dev server and a
// real Postgres: the default brand on the environment's provider sandbox, brand B on a second
// sandbox with credentials, a merchant, a partner id and a webhook path of its own. Each deposit
// is started as the API starts it (starters/deposit.ts), charged at its brand's sandbox, paid
// there, announced by that sandbox's notification through its brand's ingress path, and proven
// by its brand's inquiry; the same txid at the two brands is two flows, each paid on its own.

const PII_KEY = INGRESS_PII_KEY;
const keys: AccountKeys = { codecKeys: testCodecKeys, hashKey: PII_KEY };
const tag = randomBytes(3).toString('hex');
const B = `bet-${tag}`;
const brandB = testBrand(B);
const PERSON = newCpf();

let env: TestWorkflowEnvironment;
let pool: Pool;
let ingress: RunningIngress;
let defaultSandbox: RunningSandbox;
let brandSandbox: RunningSandbox;
let worker: Worker;
let running: Promise<void>;
let closeCache: () => void;
const taskQueue = `brand-flows-${tag}`;
const config = loadConfig({
  TEMPORAL_TASK_QUEUE: taskQueue,
  PII_HASH_KEY: PII_KEY,
  PROVIDER_MERCHANT: 'sandbox-merchant',
});

beforeAll(async () => {
  env = await TestWorkflowEnvironment.createFromExistingServer({
    address: inject('temporalAddress'),
    client: { dataConverter: testDataConverter },
  });
  const url = await freshDatabase();
  await migrate(url);
  pool = createPool(url, 5);
  ingress = await startIngress(pool, env.client, {
    config: {
      WEBHOOK_SECRET: SECRET,
      WEBHOOK_PARTNER_ID: PARTNER,
      PII_HASH_KEY: PII_KEY,
      AUTH_FAILURE_LIMIT: 1000,
    },
  });
  // Each sandbox notifies its own brand's path on the ingress, with its own partner id.
  defaultSandbox = await startProviderSandbox({
    notificationTarget: { url: ingress.base, partnerId: PARTNER },
  });
  brandSandbox = await startProviderSandbox(brandSandboxOptions(brandB, brandIngress(ingress.url, brandB)));
  await setUpBrand(pool, keys, atSandbox(brandB, brandSandbox.url));
  // Verified, and met by every brand there is now (its onboarding at each).
  await verifiedDepositor(pool, PII_KEY, PERSON);

  ({ worker, running, closeCache } = await startBrandWorker({
    temporal: env.client,
    nativeConnection: env.nativeConnection,
    taskQueue,
    pool,
    keys,
    envSandboxUrl: defaultSandbox.url,
    policy: staticPolicyReader(defaultPolicy()),
    log: createLogger('test', 'silent'),
  }));
}, 120_000);

afterAll(async () => {
  worker?.shutdown();
  await running;
  closeCache?.();
  await ingress?.close();
  await defaultSandbox?.close();
  await brandSandbox?.close();
  await pool?.end();
  await env?.teardown();
});

const starter = () => ({ config, temporal: env.client as Client });
const body = (txid: string) => ({
  txid,
  amountCentavos: 15_000,
  client: { externalId: 'user-b', cpf: PERSON, email: 'bia@example.com', name: 'Bia Lima' },
});
const stateOf = (handle: WorkflowHandle) => handle.query<DepositState>(depositStateQuery);
const settled = (handle: WorkflowHandle, status: string) =>
  waitUntil(
    () => stateOf(handle),
    (s) => s.status === status,
    20_000,
  );
const signalsOf = async (handle: WorkflowHandle) =>
  ((await handle.fetchHistory()).events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes)
    .length;

describe('two brands on two provider accounts', () => {
  it("pay each brand's deposit through its own account, the same txid at both being two flows", async () => {
    const txid = `${Date.now()}${randomBytes(2).readUInt16BE()}`;
    const atB = await startDeposit(starter(), body(txid), undefined, B);
    expect(atB).toMatchObject({ outcome: 'started', workflowId: `${B}:deposit-${txid}` });
    expect(brandSandbox.state.deposits.get(txid)).toMatchObject({ merchant: `merchant-${B}` });
    expect(defaultSandbox.state.deposits.has(txid)).toBe(false);

    const atDefault = await startDeposit(starter(), body(txid));
    expect(atDefault).toMatchObject({ outcome: 'started', workflowId: `deposit-${txid}` });
    expect(defaultSandbox.state.deposits.has(txid)).toBe(true);

    // Paid at B's sandbox: its notification comes through B's path and B's flow proves it there.
    const bFlow = env.client.workflow.getHandle(depositWorkflowId(txid, B));
    const defaultFlow = env.client.workflow.getHandle(depositWorkflowId(txid));
    await sandboxControl(brandSandbox.url, `/sandbox/deposits/${txid}/pay`);
    await settled(bFlow, 'completed');
    expect((await stateOf(defaultFlow)).status).toBe('awaiting_payment');

    // The default brand's own payment, at its own sandbox, completes its own flow.
    await sandboxControl(defaultSandbox.url, `/sandbox/deposits/${txid}/pay`);
    await settled(defaultFlow, 'completed');
    const { rows } = await pool.query(
      "SELECT brand_id, status FROM flows WHERE business_id = $1 ORDER BY brand_id <> 'default'",
      [txid],
    );
    expect(rows).toEqual([
      { brand_id: 'default', status: 'completed' },
      { brand_id: B, status: 'completed' },
    ]);
  });

  it("signal nothing of brand B's when B's txid is notified through the default brand's path", async () => {
    const txid = `${Date.now()}${randomBytes(2).readUInt16BE()}`;
    await startDeposit(starter(), body(txid), undefined, B);
    const bFlow = env.client.workflow.getHandle(depositWorkflowId(txid, B));
    const before = await signalsOf(bFlow);
    const res = await post(ingress.base, {
      id: txid,
      type: 'deposit',
      action: 'updated',
      partner_id: PARTNER,
    });
    expect(res.status).toBe(200);
    // Its delivery was tried, to the default brand's `deposit-<txid>`, which does not exist.
    await waitUntil(
      async () =>
        (
          await pool.query<{ attempts: number; workflow_id: string }>(
            'SELECT attempts, workflow_id FROM webhook_inbox WHERE workflow_id = $1',
            [`deposit-${txid}`],
          )
        ).rows[0]?.attempts ?? 0,
      (n) => n >= 1,
      10_000,
    );
    expect(await signalsOf(bFlow)).toBe(before);
    expect((await stateOf(bFlow)).status).toBe('awaiting_payment');
  });
  it("send brand B's payout through B's account alone, confirmed by B's notification and receipt", async () => {
    const transactionId = `wd-${Date.now()}${randomBytes(2).readUInt16BE()}`;
    const request: WithdrawalRequest = {
      transactionId,
      merchant: 'sandbox-merchant',
      client: { externalId: 'user-b', cpf: PERSON, email: 'bia@example.com', name: 'Bia Lima' },
      pixKey: 'bia@example.com',
      pixType: 'EMAIL',
      amountCentavos: 25_050,
    };
    await verifiedWithKnownPayee(pool, PII_KEY, request);
    const started = await startWithdrawal(starter(), request, B);
    expect(started).toMatchObject({ outcome: 'started', workflowId: `${B}:withdrawal-${transactionId}` });
    const flow = env.client.workflow.getHandle(withdrawalWorkflowId(transactionId, B));
    await waitUntil(
      () => brandSandbox.state.withdrawals.get(transactionId),
      (w) => w !== undefined,
      20_000,
    );
    expect(brandSandbox.state.withdrawals.get(transactionId)).toMatchObject({ merchant: `merchant-${B}` });
    expect(defaultSandbox.state.withdrawals.has(transactionId)).toBe(false);
    await sandboxControl(brandSandbox.url, `/sandbox/withdrawals/${transactionId}/settle`);
    const done = await waitUntil(
      () => flow.query<WithdrawalState>(withdrawalStateQuery),
      (s) => s.status === 'completed' && s.receiptStored === true,
      30_000,
    );
    expect(done).toMatchObject({ status: 'completed', receiptStored: true });
  });
});
