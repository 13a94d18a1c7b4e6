import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import express from 'express';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseCodecKeys } from '../../common/codec';
import { closeServer, listen } from '../../common/http';
import { type AccountKeys, sealBrandAccount } from '../../connectors/accounts';
import { readPixNotifications, toApiPixTxid } from '../../connectors/api-pix';
import type { BrandAccount } from '../../contracts/brand-account';
import { depositWorkflowId } from '../../contracts/deposit';
import { removeBrandAccount, setBrandAccount } from '../../db/brand-accounts';
import { type BrandActor, createBrand } from '../../db/brands';
import { migrate } from '../../db/migrate';
import { createPool, type Pool } from '../../db/pool';
import { problemHandler } from '../../http/problem';
import { apiPixWebhookRouter } from '../../ingress/api-pix-router';
import { NOT_THE_BRANDS_LIVENESS } from '../../ingress/router';
import { freshDatabase } from '../helpers/postgres';
import { waitUntil } from '../helpers/wait';
import {
  INGRESS_PII_KEY,
  PARTNER,
  post,
  type RunningIngress,
  SECRET,
  silentLog,
  startIngress,
  uniqueCpf,
  uniqueId,
} from '../ingress/harness';

// The ingress routes a notification to the brand whose account it came through: the secret in
// its path (the environment's WEBHOOK_SECRET the default brand's, a brand's own found by its keyed
// hash), whose partner id the body must name. On a real Postgres and the run's real Temporal
// server: the flows told are workflows started there with the ids the brands' flows take.

const codec = `k${randomBytes(3).toString('hex')}:${randomBytes(32).toString('base64')}`;
// The ingress's PII_HASH_KEY keys the hashes the accounts are found by: the same key seals them.
const keys: AccountKeys = {
  codecKeys: parseCodecKeys(codec, codec.split(':')[0] as string),
  hashKey: INGRESS_PII_KEY,
};
const admin: BrandActor = {
  operatorId: null,
  operatorEmail: 'ana.admin@pixflow.local',
  operatorRole: 'admin',
};
const tag = randomBytes(3).toString('hex');
const B = `bet-${tag}`;
const B_SECRET = `b-webhook-${randomBytes(12).toString('hex')}`;
const B_PARTNER = `partner-${B}`;
const B_PIX_SECRET = `b-pix-${randomBytes(12).toString('hex')}`;
const ENV_PIX_SECRET = `env-pix-${randomBytes(12).toString('hex')}`;
/** No worker polls it: a flow started there waits, and counts the signals it is sent. */
const QUEUE = `brand-ingress-${tag}`;

let pool: Pool;
let connection: Connection;
let temporal: Client;
let ingress: RunningIngress;
let pix: { url: string; close(): Promise<void> };
const started: WorkflowHandle[] = [];

const account: BrandAccount = {
  connector: 'identity-payments',
  settings: {
    baseUrl: 'https://api.provider.example',
    authUrl: 'https://auth.provider.example',
    clientId: `client-${B}`,
    merchant: `merchant-${B}`,
    partnerId: B_PARTNER,
  },
  secrets: { clientSecret: randomBytes(12).toString('hex'), apiKey: 'k'.repeat(20), webhookSecret: B_SECRET },
};
const pixAccount: BrandAccount = {
  connector: 'api-pix',
  settings: {
    baseUrl: 'https://pix.psp.example/api/v2',
    clientId: 'psp-client',
    pixKey: `${tag}@bet.example`,
    certFile: '/nonexistent/cert.pem',
    keyFile: '/nonexistent/key.pem',
  },
  secrets: { clientSecret: randomBytes(12).toString('hex'), webhookSecret: B_PIX_SECRET },
};

const setAccount = (brand: string, a: BrandAccount) => {
  const sealed = sealBrandAccount(keys, brand, a);
  return setBrandAccount(pool, admin, { ...sealed, settings: sealed.settings as Record<string, unknown> });
};

beforeAll(async () => {
  const url = await freshDatabase();
  await migrate(url);
  pool = createPool(url, 5);
  await createBrand(pool, admin, { id: B, name: 'Bet B' });
  await setAccount(B, account);
  await setAccount(B, pixAccount);
  connection = await Connection.connect({ address: inject('temporalAddress') });
  temporal = new Client({ connection });
  ingress = await startIngress(pool, temporal, {
    config: {
      WEBHOOK_SECRET: SECRET,
      WEBHOOK_PARTNER_ID: PARTNER,
      PII_HASH_KEY: INGRESS_PII_KEY,
      AUTH_FAILURE_LIMIT: 1000,
    },
  });
  // The API Pix router as its listener mounts it (mutual TLS is the listener's: ingress/api-pix-listener.ts).
  const app = express();
  app.use(
    apiPixWebhookRouter({
      config: {
        API_PIX_WEBHOOK_SECRET: ENV_PIX_SECRET,
        PII_HASH_KEY: INGRESS_PII_KEY,
        AUTH_FAILURE_LIMIT: 1000,
      },
      pool,
      temporal,
      log: silentLog,
      read: readPixNotifications,
    }),
  );
  app.use(problemHandler(silentLog));
  const server = http.createServer(app);
  const port = await listen(server, 0);
  pix = { url: `http://127.0.0.1:${port}`, close: () => closeServer(server) };
}, 60_000);

afterAll(async () => {
  for (const h of started) await h.terminate('test over').catch(() => undefined);
  await ingress?.close();
  await pix?.close();
  await connection?.close();
  await pool?.end();
});

/** A flow waiting under `workflowId`, as the brand's deposit would. */
async function waitingFlow(workflowId: string) {
  const handle = await temporal.workflow.start('depositWorkflow', { workflowId, taskQueue: QUEUE, args: [] });
  started.push(handle);
  return handle;
}

/** The signals a flow has been sent. */
async function signalsOf(handle: WorkflowHandle): Promise<number> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes).length;
}

const inboxRows = async (businessId: string) =>
  (
    await pool.query<{
      workflow_id: string;
      attempts: number;
      delivered_at: Date | null;
      last_error: string | null;
    }>(
      'SELECT workflow_id, attempts, delivered_at, last_error FROM webhook_inbox WHERE raw_body LIKE $1 ORDER BY id',
      [`%${businessId}%`],
    )
  ).rows;

const providerPath = (secret: string, point = 'deposit') =>
  `${ingress.url}/webhooks/provider/${secret}/${point}`;
const depositMsg = (id: string, partner: string) => ({
  id,
  type: 'deposit',
  action: 'updated',
  partner_id: partner,
});

describe("the first provider's notifications", () => {
  it("through a brand's account signal that brand's flow; the same txid through the default brand's account signals none of it", async () => {
    const txid = uniqueId();
    const brandFlow = await waitingFlow(depositWorkflowId(txid, B));
    const res = await post(providerPath(B_SECRET), depositMsg(txid, B_PARTNER));
    expect(res.status).toBe(200);
    await waitUntil(
      () => signalsOf(brandFlow),
      (n) => n === 1,
      10_000,
    );
    expect(await inboxRows(txid)).toMatchObject([{ workflow_id: `${B}:deposit-${txid}` }]);

    // The default brand's path, naming B's txid: as for an unknown txid (200, kept, retried), for
    // the default brand's `deposit-<txid>`, which does not exist; B's flow hears nothing more.
    const other = await post(providerPath(SECRET), depositMsg(txid, PARTNER));
    expect(other.status).toBe(200);
    expect(JSON.parse(other.text)).toEqual({ received: true, duplicate: false });
    await waitUntil(
      () => inboxRows(txid),
      (rows) => (rows[1]?.attempts ?? 0) >= 1,
      10_000,
    );
    const rows = await inboxRows(txid);
    expect(rows[1]).toMatchObject({ workflow_id: `deposit-${txid}`, delivered_at: null });
    expect(await signalsOf(brandFlow)).toBe(1);
  });

  it("refuse a partner id that is not the account's, and a secret that is no account's", async () => {
    const txid = uniqueId();
    // B's path with the default brand's partner id, the default's path with B's: neither is the account's.
    expect((await post(providerPath(B_SECRET), depositMsg(txid, PARTNER))).status).toBe(401);
    expect((await post(providerPath(SECRET), depositMsg(txid, B_PARTNER))).status).toBe(401);
    expect((await post(providerPath(`no-such-${B_SECRET}`), depositMsg(txid, B_PARTNER))).status).toBe(401);
    // B's API Pix secret is not a first-provider account's.
    expect((await post(providerPath(B_PIX_SECRET), depositMsg(txid, B_PARTNER))).status).toBe(401);
    expect(await inboxRows(txid)).toEqual([]);
  });

  it("keep a liveness callback through another brand's account without signalling: onboardings are the default brand's", async () => {
    const document = uniqueCpf();
    const res = await post(providerPath(B_SECRET, 'liveness'), {
      transaction_id: `tx-${document}`,
      correlation_id: `corr-${document}`,
      document,
      status_verification: 'completed',
      status_onboarding: 'approved',
      action_type: 'onboarding',
      event: 'onboarding',
      datetime: '2026-11-28T03:04:05.000Z',
      partner_id: B_PARTNER,
    });
    expect(res.status).toBe(200);
    const [row] = await inboxRows(`tx-${document}`);
    expect(row).toMatchObject({ last_error: NOT_THE_BRANDS_LIVENESS });
    expect(row?.delivered_at).not.toBeNull();
  });
  it("of the default brand come through its own record once it has one, and no longer through the environment's secret", async () => {
    const secret = `default-webhook-${randomBytes(12).toString('hex')}`;
    const partner = `default-partner-${tag}`;
    await setAccount('default', {
      ...account,
      settings: { ...account.settings, clientId: 'default-client', partnerId: partner },
      secrets: { ...account.secrets, webhookSecret: secret },
    });
    // A process started after the record: it has not trusted the environment's account before.
    const fresh = await startIngress(pool, temporal, {
      config: {
        WEBHOOK_SECRET: SECRET,
        WEBHOOK_PARTNER_ID: PARTNER,
        PII_HASH_KEY: INGRESS_PII_KEY,
        AUTH_FAILURE_LIMIT: 1000,
      },
    });
    try {
      const txid = uniqueId();
      const at = (s: string, point = 'deposit') => `${fresh.url}/webhooks/provider/${s}/${point}`;
      expect((await post(at(SECRET), depositMsg(txid, PARTNER))).status).toBe(401);
      expect((await post(at(secret), depositMsg(txid, partner))).status).toBe(200);
      expect(await inboxRows(txid)).toMatchObject([{ workflow_id: `deposit-${txid}` }]);
    } finally {
      await fresh.close();
      await removeBrandAccount(pool, admin, 'default', 'identity-payments');
    }
  });
});

describe("an API Pix PSP's callbacks", () => {
  const e2e = () => `E${randomBytes(15).toString('hex').toUpperCase()}a`;
  const body = (txid: string, endToEndId: string) => ({
    pix: [{ endToEndId, txid: toApiPixTxid(txid), valor: '10.00', horario: '2026-11-28T04:00:00.000Z' }],
  });

  it("through a brand's account tell that brand's deposit; through the environment's, the default brand's", async () => {
    const txid = uniqueId();
    const brandFlow = await waitingFlow(depositWorkflowId(txid, B));
    const first = e2e();
    expect((await post(`${pix.url}/webhooks/api-pix/${B_PIX_SECRET}/pix`, body(txid, first))).status).toBe(
      200,
    );
    await waitUntil(
      () => signalsOf(brandFlow),
      (n) => n === 1,
      10_000,
    );
    expect(await inboxRows(first)).toMatchObject([{ workflow_id: `${B}:deposit-${txid}` }]);

    const second = e2e();
    expect((await post(`${pix.url}/webhooks/api-pix/${ENV_PIX_SECRET}/pix`, body(txid, second))).status).toBe(
      200,
    );
    await waitUntil(
      () => inboxRows(second),
      (rows) => (rows[0]?.attempts ?? 0) >= 1,
      10_000,
    );
    expect(await inboxRows(second)).toMatchObject([{ workflow_id: `deposit-${txid}`, delivered_at: null }]);
    expect(await signalsOf(brandFlow)).toBe(1);
    // The first provider's secret opens no API Pix path.
    expect((await post(`${pix.url}/webhooks/api-pix/${B_SECRET}/pix`, body(txid, e2e()))).status).toBe(401);
  });
});
