import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { runner } from 'node-pg-migrate';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { payeeHashOf } from '../../activities/withdrawal-rules';
import { newKeyId, newSecret } from '../../common/api-key';
import { loadConfig } from '../../common/config';
import { maskCpf } from '../../common/mask';
import { accountKeyHash, cpfHash } from '../../common/pii';
import { sealSecret } from '../../common/secret-box';
import type { WithdrawalInput } from '../../contracts/withdrawal';
import { MIGRATIONS_DIR, migrate } from '../../db/migrate';
import { createPool, type Pool } from '../../db/pool';
import { type RunningSandbox, startSandbox } from '../../sandbox';
import { TEST_PII_KEY } from '../helpers/flow-env';
import { newPerson, ownCpfKey } from '../helpers/people';
import { freePort } from '../helpers/ports';
import { freshDatabase } from '../helpers/postgres';
import { testCodecKeys } from '../helpers/temporal';
import { waitUntil } from '../helpers/wait';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

// A single-brand install upgrading to brands with no new setting, on the data the version before
// brands left: a database migrated up to the last migration before brands and filled by that
// version's own statements (a key, a webhook endpoint, a verified person, a finished deposit and
// withdrawal with their events, a receipt), then migrated to the head. The API and the worker,
// as processes, start on it with the settings that version ran with. The old key still reads its
// flows, events and receipt and starts new deposits and withdrawals, its endpoint still receives
// their events: everything the default brand's.

const ROOT = path.resolve(__dirname, '../..');
/** The first migration of brands: the version before ran every one before it. */
const FIRST_OF_BRANDS = '1732000000031_brands';
const taskQueue = `brand-upgrade-${randomBytes(4).toString('hex')}`;
const { WEBHOOK_SECRET, WEBHOOK_PARTNER_ID } = loadConfig({});
const ALL_SCOPES = ['onboardings', 'deposits', 'withdrawals', 'customers', 'events', 'webhooks'].flatMap(
  (r) => [`${r}:read`, `${r}:write`],
);

// The statements of the version before brands, as its db/ modules ran them.
const PREVIOUS = {
  apiKey: `INSERT INTO api_keys (id, name, scopes, prefix, secret_hash, created_by, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
  endpoint: `INSERT INTO webhook_endpoints (id, owner, url, description, events, secret)
             VALUES ($1, $2, $3, $4, $5, $6)`,
  verification: `INSERT INTO customers (cpf_hash, cpf_masked, verification, verification_at, verification_by,
                                        verification_flow, verification_run, verification_seq, created_at, updated_at)
                 VALUES ($1, $2, 'approved', $3, $4, $4, $5, 3, $3, $3)`,
  kyc: `INSERT INTO customers (cpf_hash, cpf_masked, kyc_status, under_18, deceased, restricted, pep, kyc_read_at,
                               created_at, updated_at)
        VALUES ($1, $2, 'regular', false, false, false, false, $3, $3, $3)
        ON CONFLICT (cpf_hash) DO UPDATE SET
          kyc_status = EXCLUDED.kyc_status, under_18 = EXCLUDED.under_18, deceased = EXCLUDED.deceased,
          restricted = EXCLUDED.restricted, pep = EXCLUDED.pep, kyc_read_at = EXCLUDED.kyc_read_at,
          updated_at = EXCLUDED.updated_at`,
  account: `INSERT INTO customer_accounts (cpf_hash, kind, pix_type, key_hash, masked, source)
            VALUES ($1, 'pix_key', 'CPF', $2, $3, 'api')
            ON CONFLICT (cpf_hash, key_hash) WHERE removed_at IS NULL DO NOTHING`,
  payoutDestination: `INSERT INTO payout_destinations (cpf_hash, payee_hash, first_transaction_id) VALUES ($1, $2, $3)
                      ON CONFLICT (cpf_hash, payee_hash) DO NOTHING`,
  // The flow's row and, in the same statement, its status event.
  flow: `WITH up AS (
           INSERT INTO flows (workflow_id, type, business_id, status, cpf_hash, cpf_masked, merchant, amount_centavos,
                              reason, details, seq, created_at, updated_at, run_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, '{}', 4, $9, $9, NULL)
           RETURNING *)
         SELECT pixflow_append_event(up.type || '.' || up.status, up.workflow_id, up.type, up.business_id,
           jsonb_build_object(
             'workflowId', up.workflow_id, 'type', up.type, 'businessId', up.business_id, 'status', up.status,
             'cpfHash', up.cpf_hash, 'cpfMasked', up.cpf_masked, 'merchant', up.merchant,
             'amountCentavos', up.amount_centavos, 'reason', up.reason, 'details', up.details,
             'createdAt', to_char(up.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'updatedAt', to_char(up.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
           FROM up`,
  receipt: `INSERT INTO withdrawal_receipts (transaction_id, image, paid_at) VALUES ($1, $2, $3)
            ON CONFLICT (transaction_id) DO UPDATE SET image = EXCLUDED.image, paid_at = EXCLUDED.paid_at`,
};

const person = newPerson();
const cpfHashOf = (cpf: string) => cpfHash(cpf, TEST_PII_KEY);
const tag = randomBytes(4).toString('hex');
const old = {
  key: newSecret(),
  keyId: newKeyId(),
  endpointId: `we_${randomBytes(12).toString('hex')}`,
  endpointSecret: `whsec_${randomBytes(24).toString('base64')}`,
  txid: `${Date.now()}${randomBytes(4).readUInt32BE()}1`,
  transactionId: `before-brands-${tag}`,
  receipt: Buffer.from('the receipt the version before stored'),
};

let databaseUrl: string;
let pool: Pool;
let sandbox: RunningSandbox;
let receiver: WebhookReceiver;
let api: string;
const children = new Set<ChildProcess>();

async function migrateUpToBeforeBrands(url: string) {
  const before = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql') && f < FIRST_OF_BRANDS);
  await runner({
    databaseUrl: url,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    count: before.length,
    checkOrder: true,
    log: () => {},
    logger: { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} },
  });
}

/** What the version before wrote: its key, endpoint, verified person, finished flows and receipt. */
async function fillAsTheVersionBefore(db: Pool) {
  const at = new Date(Date.now() - 60_000);
  const hash = cpfHashOf(person.cpf);
  const masked = maskCpf(person.cpf);
  await db.query(PREVIOUS.apiKey, [
    old.keyId,
    'backend (before brands)',
    ALL_SCOPES,
    old.key.prefix,
    old.key.digest,
    'admin@example.com',
    null,
  ]);
  await db.query(PREVIOUS.endpoint, [
    old.endpointId,
    old.keyId,
    receiver.url,
    'before brands',
    ['*'],
    sealSecret(testCodecKeys, old.endpointSecret),
  ]);
  await db.query(PREVIOUS.verification, [hash, masked, at, `onboarding-${person.cpf}`, 'run-before-brands']);
  await db.query(PREVIOUS.kyc, [hash, masked, new Date()]);
  const payout: WithdrawalInput = {
    transactionId: old.transactionId,
    amountCentavos: 10_000,
    ...ownCpfKey(person),
    client: person,
  } as WithdrawalInput;
  const payeeHash = payeeHashOf(payout, (k) => accountKeyHash(k, TEST_PII_KEY));
  await db.query(PREVIOUS.account, [hash, payeeHash, '***']);
  await db.query(PREVIOUS.payoutDestination, [hash, payeeHash, old.transactionId]);
  await db.query(PREVIOUS.flow, [
    `deposit-${old.txid}`,
    'deposit',
    old.txid,
    'completed',
    hash,
    masked,
    'sandbox-merchant',
    4_200,
    at,
  ]);
  await db.query(PREVIOUS.flow, [
    `withdrawal-${old.transactionId}`,
    'withdrawal',
    old.transactionId,
    'completed',
    hash,
    masked,
    'sandbox-merchant',
    10_000,
    at,
  ]);
  await db.query(PREVIOUS.receipt, [old.transactionId, old.receipt, at]);
}

/** What the version before ran its processes with: nothing about brands. */
function previousSettings(apiPort: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    HTTP_HOST: '127.0.0.1',
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: taskQueue,
    // A deployment of its own: the run's other workers never take its tasks.
    WORKER_DEPLOYMENT_NAME: taskQueue,
    DATABASE_URL: databaseUrl,
    PII_HASH_KEY: TEST_PII_KEY,
    CODEC_KEYS: `${testCodecKeys.activeKeyId}:${testCodecKeys.keys.get(testCodecKeys.activeKeyId)?.toString('base64')}`,
    CODEC_ACTIVE_KEY_ID: testCodecKeys.activeKeyId,
    SANDBOX_PORT: new URL(sandbox.url).port,
    API_PORT: String(apiPort),
    POLL_SCHEDULE_MS: '1000,2000',
    RECONCILE_INTERVAL_MS: '500',
    INBOX_RELAY_INTERVAL_MS: '300',
    EVENTS_RELAY_INTERVAL_MS: '100',
    // The test's receiver is on loopback.
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    ALERT_MONITOR: 'false',
  };
  for (const k of Object.keys(env)) {
    if (/^(PROVIDER_|API_PIX_|BRAND)/.test(k)) delete env[k];
  }
  for (const k of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'ELIGIBILITY_URL', 'PAYOUT_AUTHORIZATION_URL', 'API_KEYS'])
    delete env[k];
  return env;
}

/** Starts `entry` and waits until `ready` answers 200. */
async function startProcess(entry: string, env: NodeJS.ProcessEnv, ready: string): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => {
    stderr = (stderr + b.toString('utf8')).slice(-4000);
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  await waitUntil(
    async () => {
      if (child.exitCode !== null) throw new Error(`${entry} exited while starting:\n${stderr}`);
      return fetch(ready)
        .then((r) => r.ok)
        .catch(() => false);
    },
    (ok) => ok,
    { timeoutMs: 90_000, intervalMs: 250 },
  );
}

async function stop(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  if (child.pid) process.kill(child.pid, 'SIGTERM');
  await exited;
}

/** A call with the key the version before made. */
async function call(method: 'GET' | 'POST', pathname: string, body?: unknown) {
  const res = await fetch(`${api}${pathname}`, {
    method,
    headers: {
      authorization: `Bearer ${old.key.secret}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const type = res.headers.get('content-type') ?? '';
  return {
    status: res.status,
    type,
    // biome-ignore lint/suspicious/noExplicitAny: parsed JSON answers, read field by field
    body: (type.includes('json') ? await res.json() : Buffer.from(await res.arrayBuffer())) as any,
  };
}

const control = async (pathname: string, body: unknown = {}) => {
  const r = await fetch(`${sandbox.url}${pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(r.ok, `sandbox ${pathname}: ${r.status}`).toBe(true);
};

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  await migrateUpToBeforeBrands(databaseUrl);
  pool = createPool(databaseUrl, 2);
  receiver = await startWebhookReceiver([old.endpointSecret]);
  await fillAsTheVersionBefore(pool);
  await migrate(databaseUrl);

  const [apiPort, workerPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  api = `http://127.0.0.1:${apiPort}`;
  sandbox = await startSandbox({
    notificationTarget: { url: `${api}/webhooks/provider/${WEBHOOK_SECRET}`, partnerId: WEBHOOK_PARTNER_ID },
  });
  const env = previousSettings(apiPort);
  await Promise.all([
    startProcess(
      'worker/main.ts',
      { ...env, WORKER_HTTP_PORT: String(workerPort), WORKER_SDK_METRICS_PORT: String(metricsPort) },
      `http://127.0.0.1:${workerPort}/healthz`,
    ),
    startProcess('api/main.ts', env, `${api}/healthz`),
  ]);
}, 180_000);

afterAll(async () => {
  for (const c of [...children]) await stop(c);
  await sandbox?.close();
  await receiver?.close();
  await pool?.end();
});

describe('a single-brand install upgrading to brands with no new setting', () => {
  it("keeps the version before's key, flows, events, endpoint and receipt, all the default brand's", async () => {
    // What the migrations made of the rows they found.
    const brands = await pool.query('SELECT id FROM brands');
    expect(brands.rows.map((r) => r.id)).toEqual(['default']);
    const key = await pool.query('SELECT brand_id FROM api_keys WHERE id = $1', [old.keyId]);
    expect(key.rows[0]?.brand_id).toBe('default');
    const endpoint = await pool.query('SELECT brand_id FROM webhook_endpoints WHERE id = $1', [
      old.endpointId,
    ]);
    expect(endpoint.rows[0]?.brand_id).toBe('default');
    const flows = await pool.query(
      'SELECT workflow_id, brand_id FROM flows WHERE cpf_hash = $1 ORDER BY workflow_id',
      [cpfHashOf(person.cpf)],
    );
    expect(flows.rows).toEqual([
      { workflow_id: `deposit-${old.txid}`, brand_id: 'default' },
      { workflow_id: `withdrawal-${old.transactionId}`, brand_id: 'default' },
    ]);

    // The old key reads them through the API as before.
    const listed = await call('GET', `/v1/flows?cpf=${person.cpf}`);
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.items.map((f: { workflowId: string }) => f.workflowId).sort()).toEqual([
      `deposit-${old.txid}`,
      `withdrawal-${old.transactionId}`,
    ]);
    const receipt = await call('GET', `/v1/withdrawals/${old.transactionId}/receipt.png`);
    expect(receipt.status).toBe(200);
    expect(Buffer.compare(receipt.body, old.receipt)).toBe(0);
    // Read once the sequencer has given the events their positions.
    const oldFlow = (e: { data: { flowId?: string } }) =>
      e.data.flowId === `deposit-${old.txid}` || e.data.flowId === `withdrawal-${old.transactionId}`;
    const events = await waitUntil(
      () => call('GET', '/v1/events?limit=100'),
      (r) => r.status === 200 && r.body.items.filter(oldFlow).length >= 2,
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    const oldEvents = events.body.items.filter(oldFlow);
    expect(oldEvents.map((e: { type: string; brand: string }) => [e.type, e.brand]).sort()).toEqual([
      ['deposit.completed', 'default'],
      ['withdrawal.completed', 'default'],
    ]);
  });

  it('starts new deposits and withdrawals with the old key, the default brand running them as before', async () => {
    await control('/sandbox/auto', { settleWithdrawalsAfterMs: 500 });
    const txid = `${Date.now()}${randomBytes(4).readUInt32BE()}2`;
    const deposit = await call('POST', '/v1/deposits', { txid, amountCentavos: 15_000, client: person });
    expect(deposit.status, JSON.stringify(deposit.body)).toBe(201);
    await control(`/sandbox/deposits/${txid}/pay`);
    const paid = await waitUntil(
      () => call('GET', `/v1/deposits/${txid}`),
      (r) => r.body?.state?.status === 'completed',
      { timeoutMs: 30_000, intervalMs: 300 },
    );
    expect(paid.status).toBe(200);

    const transactionId = `after-brands-${tag}`;
    const withdrawal = await call('POST', '/v1/withdrawals', {
      transactionId,
      amountCentavos: 12_000,
      ...ownCpfKey(person),
      client: person,
    });
    expect(withdrawal.status, JSON.stringify(withdrawal.body)).toBe(202);
    await waitUntil(
      () => call('GET', `/v1/withdrawals/${transactionId}`),
      (r) => r.body?.state?.status === 'completed',
      { timeoutMs: 30_000, intervalMs: 300 },
    );
    const receipt = await waitUntil(
      () => call('GET', `/v1/withdrawals/${transactionId}/receipt.png`),
      (r) => r.status === 200,
      { timeoutMs: 10_000, intervalMs: 300 },
    );
    expect(receipt.type).toContain('image/png');

    // The ids, rows and receipt are the ones the version before would have made.
    const rows = await pool.query(
      'SELECT workflow_id, brand_id, status FROM flows WHERE business_id = ANY($1) ORDER BY workflow_id',
      [[txid, transactionId]],
    );
    expect(rows.rows).toEqual([
      { workflow_id: `deposit-${txid}`, brand_id: 'default', status: 'completed' },
      { workflow_id: `withdrawal-${transactionId}`, brand_id: 'default', status: 'completed' },
    ]);
    const stored = await pool.query('SELECT workflow_id FROM withdrawal_receipts WHERE transaction_id = $1', [
      transactionId,
    ]);
    expect(stored.rows[0]?.workflow_id).toBe(`withdrawal-${transactionId}`);

    // The endpoint the version before made receives both flows' events, signed with its secret.
    const delivered = await waitUntil(
      () => receiver.delivered(),
      (d) =>
        ['deposit.completed', 'withdrawal.completed'].every((type) =>
          d.some(
            (r) => r.body.type === type && [txid, transactionId].includes(String(r.body.data.businessId)),
          ),
        ),
      { timeoutMs: 30_000, intervalMs: 300 },
    );
    const ours = delivered.filter((r) => [txid, transactionId].includes(String(r.body.data.businessId)));
    expect(ours.every((r) => r.verifiedBy.includes(0) && r.body.brand === 'default')).toBe(true);
    expect(receiver.unverified).toEqual([]);
  });
});
