import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createApp } from '../../api/app';
import { loadConfig } from '../../common/config';
import { createLogger } from '../../common/logger';
import type { AccountKeys } from '../../connectors/accounts';
import { depositWorkflowId } from '../../contracts/deposit';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import { migrate } from '../../db/migrate';
import { createPool, type Pool } from '../../db/pool';
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
import { testCodecKeys, testDataConverter } from '../helpers/temporal';
import { waitUntil } from '../helpers/wait';
import { PNG_SIGNATURE } from './support';

// Two brands run the tour at once through the real API, each with its own key (docs/brands.md):
// the real worker, the run's Temporal server, a Postgres of its own, the API's own ingress, and
// three provider sandboxes over HTTP: the environment's (the default brand's, where the shared
// onboarding runs) and one per brand's account, each knowing that account's credentials alone and
// notifying that brand's own ingress path. A person onboarded once (each brand meeting them by
// starting their onboarding, answered at once) deposits at both brands under
// the same txid and is paid out at both under the same transactionId: two flows of each, every
// call made at its brand's sandbox alone, each receipt kept. A notification of brand A's deposit
// sent through brand B's path signals nothing of A's.

const PII_KEY = `brand-tour-${randomBytes(8).toString('hex')}`;
const keys: AccountKeys = { codecKeys: testCodecKeys, hashKey: PII_KEY };
const tag = randomBytes(3).toString('hex');
const taskQueue = `brand-tour-${tag}`;
const log = createLogger('brand-tour', 'silent');

/** A brand of the tour, with its sandbox and key once they run. */
type TourBrand = TestBrand & { sandbox?: RunningSandbox; key?: string };
const brand = (name: string): TourBrand => testBrand(`${name}-${tag}`);
const A = brand('tour-a');
const B = brand('tour-b');

const config = loadConfig({
  API_KEYS: 'brand-tour-bootstrap-key',
  TEMPORAL_ADDRESS: inject('temporalAddress'),
  TEMPORAL_TASK_QUEUE: taskQueue,
  PII_HASH_KEY: PII_KEY,
  PROVIDER_MERCHANT: 'sandbox-merchant',
  LOG_LEVEL: 'silent',
  AUTH_FAILURE_LIMIT: '1000',
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

beforeAll(async () => {
  const url = await freshDatabase();
  await migrate(url);
  pool = createPool(url, 8);
  connection = await Connection.connect({ address: inject('temporalAddress') });
  temporal = new Client({ connection, dataConverter: testDataConverter });
  nativeConnection = await NativeConnection.connect({ address: inject('temporalAddress') });
  const policy = staticPolicyReader(defaultPolicy());

  // The API first: its ingress is where every sandbox notifies.
  const app = createApp({ config, temporal, pool, log, policy });
  server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  envSandbox = await startProviderSandbox({
    notificationTarget: {
      url: `${api}/webhooks/provider/${config.WEBHOOK_SECRET}`,
      partnerId: config.WEBHOOK_PARTNER_ID,
    },
  });
  await sendLivenessCallbacksTo(
    envSandbox.url,
    `${api}/webhooks/provider/${config.WEBHOOK_SECRET}`,
    config.WEBHOOK_PARTNER_ID,
  );
  for (const b of [A, B]) {
    b.sandbox = await startProviderSandbox(brandSandboxOptions(b, brandIngress(api, b)));
    await setUpBrand(pool, keys, atSandbox(b, b.sandbox.url));
    b.key = await brandKey(pool, b.id);
  }

  ({ worker, running, closeCache } = await startBrandWorker({
    temporal,
    nativeConnection,
    taskQueue,
    pool,
    keys,
    envSandboxUrl: envSandbox.url,
    policy,
    log,
  }));
}, 120_000);

afterAll(async () => {
  await new Promise<void>((resolve) => {
    if (!server) return resolve();
    server.close(() => resolve());
    server.closeAllConnections();
  });
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
  closeCache?.();
  await envSandbox?.close();
  for (const b of [A, B]) await b.sandbox?.close();
  await nativeConnection?.close();
  await connection?.close();
  await pool?.end();
});

/** A request with `key`, JSON in and out. */
async function call(key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${api}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return res;
}
const jsonOf = async (res: Response) =>
  (await res.json()) as Record<string, unknown> & { state: { status: string } };
const statusAt = async (key: string, path: string) =>
  (await jsonOf(await call(key, 'GET', path))).state.status;
const waitStatus = (key: string, path: string, status: string) =>
  waitUntil(
    () => statusAt(key, path),
    (s) => s === status,
    30_000,
  );
const signalsOf = async (handle: WorkflowHandle) =>
  ((await handle.fetchHistory()).events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes)
    .length;

const person = newPerson();
const client = { externalId: 'tour-user', cpf: person.cpf, email: 'tour@example.com', name: 'Tour Person' };

/** The tour at one brand, through the API with its own key: a deposit paid and a payout with its receipt. */
async function tourAt(b: TourBrand, txid: string, transactionId: string) {
  const key = b.key as string;
  const sandbox = b.sandbox as RunningSandbox;
  // The person's verification, made once, is every brand's that onboards them: the brand meets
  // them, answered at once (docs/brands.md, "People a brand knows").
  const met = await call(key, 'POST', '/v1/onboardings', {
    cpf: person.cpf,
    plan: 'plan_basic',
    event: 'tour',
  });
  expect(met.status, await met.clone().text()).toBe(200);
  expect(((await met.json()) as { state: { status: string } }).state.status).toBe('approved');
  expect(await statusAt(key, `/v1/onboardings/${person.cpf}`)).toBe('approved');

  const deposit = await call(key, 'POST', '/v1/deposits', { txid, amountCentavos: 15_000, client });
  expect(deposit.status, await deposit.clone().text()).toBe(201);
  expect(await deposit.json()).toMatchObject({ workflowId: depositWorkflowId(txid, b.id) });
  await sandboxControl(sandbox.url, `/sandbox/deposits/${txid}/pay`);
  await waitStatus(key, `/v1/deposits/${txid}`, 'completed');

  const sent = await call(key, 'POST', '/v1/withdrawals', {
    transactionId,
    client,
    pixKey: person.cpf,
    pixType: 'CPF',
    amountCentavos: 9_000,
  });
  expect(sent.status, await sent.clone().text()).toBe(202);
  expect(await sent.json()).toMatchObject({ workflowId: withdrawalWorkflowId(transactionId, b.id) });
  await waitStatus(key, `/v1/withdrawals/${transactionId}`, 'processing');
  await sandboxControl(sandbox.url, `/sandbox/withdrawals/${transactionId}/settle`);
  await waitStatus(key, `/v1/withdrawals/${transactionId}`, 'completed');
  const receipt = await waitUntil(
    () => call(key, 'GET', `/v1/withdrawals/${transactionId}/receipt.png`),
    (r) => r.status === 200,
    15_000,
  );
  expect(Buffer.from(await receipt.arrayBuffer()).subarray(0, 8)).toEqual(PNG_SIGNATURE);
}

describe('two brands through the API', () => {
  it('run the tour at once, each paid through its own account, the same txid and transactionId at both being two flows', async () => {
    // The person onboards through brand A's key: the onboarding runs on the environment's account.
    await onboard({ api, apiKey: A.key as string, sandbox: envSandbox.url }, person, {
      reviewedBy: 'provider',
    });

    const txid = `${Date.now()}${randomBytes(2).readUInt16BE()}`;
    const transactionId = `tour-wd-${Date.now()}-${tag}`;
    await Promise.all([tourAt(A, txid, transactionId), tourAt(B, txid, transactionId)]);

    // Every call at its brand's sandbox alone, naming its account's merchant; none at the environment's.
    for (const b of [A, B]) {
      const sandbox = b.sandbox as RunningSandbox;
      expect(sandbox.state.deposits.get(txid), b.id).toMatchObject({ merchant: b.account.settings.merchant });
      expect(sandbox.state.withdrawals.get(transactionId), b.id).toMatchObject({
        merchant: b.account.settings.merchant,
      });
    }
    expect(envSandbox.state.deposits.has(txid)).toBe(false);
    expect(envSandbox.state.withdrawals.has(transactionId)).toBe(false);

    const { rows } = await pool.query(
      'SELECT workflow_id, brand_id, merchant, status FROM flows WHERE business_id = ANY($1) ORDER BY workflow_id',
      [[txid, transactionId]],
    );
    expect(rows).toEqual(
      [A, B]
        .flatMap((b) => [
          {
            workflow_id: depositWorkflowId(txid, b.id),
            brand_id: b.id,
            merchant: b.account.settings.merchant,
            status: 'completed',
          },
          {
            workflow_id: withdrawalWorkflowId(transactionId, b.id),
            brand_id: b.id,
            merchant: b.account.settings.merchant,
            status: 'completed',
          },
        ])
        .sort((x, y) => x.workflow_id.localeCompare(y.workflow_id)),
    );
    // Each brand's receipt kept apart, under its own flow.
    const receipts = await pool.query(
      'SELECT workflow_id FROM flow_receipts WHERE transaction_id = $1 ORDER BY 1',
      [transactionId],
    );
    expect(receipts.rows.map((r) => r.workflow_id)).toEqual(
      [A, B].map((b) => withdrawalWorkflowId(transactionId, b.id)).sort(),
    );
    // Neither brand's key reaches the other's flows: the other's is its own, under the same ids.
    expect((await jsonOf(await call(A.key as string, 'GET', `/v1/deposits/${txid}`))).workflowId).toBe(
      depositWorkflowId(txid, A.id),
    );
  }, 180_000);

  it("signal nothing of brand A's deposit when it is notified through brand B's path", async () => {
    const txid = `${Date.now()}${randomBytes(2).readUInt16BE()}`;
    const res = await call(A.key as string, 'POST', '/v1/deposits', { txid, amountCentavos: 4_200, client });
    expect(res.status).toBe(201);
    const aFlow = temporal.workflow.getHandle(depositWorkflowId(txid, A.id));
    const before = await signalsOf(aFlow);
    const notify = (partnerId: string) =>
      fetch(brandIngress(api, B), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: txid, type: 'deposit', action: 'updated', partner_id: partnerId }),
      });
    // A's partner id on B's path: not B's account, refused.
    expect((await notify(A.account.settings.partnerId)).status).toBe(401);
    // B's own partner id: taken as B's, for B's deposit of that txid, which does not exist.
    expect((await notify(B.account.settings.partnerId)).status).toBe(200);
    await waitUntil(
      async () =>
        (
          await pool.query<{ attempts: number }>(
            'SELECT attempts FROM webhook_inbox WHERE workflow_id = $1',
            [depositWorkflowId(txid, B.id)],
          )
        ).rows[0]?.attempts ?? 0,
      (n) => n >= 1,
      10_000,
    );
    expect(await signalsOf(aFlow)).toBe(before);
    expect(await statusAt(A.key as string, `/v1/deposits/${txid}`)).toBe('awaiting_payment');
    // B's key knows no such deposit.
    expect((await call(B.key as string, 'GET', `/v1/deposits/${txid}`)).status).toBe(404);
  });
});
