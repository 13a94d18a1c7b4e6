import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../api-keys/admin';
import type { Scope } from '../../common/api-key';
import { parseCodecKeys, pixflowDataConverter } from '../../common/codec';
import { loadConfig } from '../../common/config';
import { sealBrandAccount } from '../../connectors/accounts';
import { brandAccountSchema } from '../../contracts/brand-account';
import type { DepositState } from '../../contracts/deposit';
import { setBrandAccount } from '../../db/brand-accounts';
import { createBrand } from '../../db/brands';
import { createPool } from '../../db/pool';
import type { DepositOutcome, WithdrawalOutcome } from '../../nexus/outcomes';
import {
  PIXFLOW_API_KEY_HEADER,
  PIXFLOW_BRAND_HEADER,
  PIXFLOW_NEXUS_ENDPOINT,
  pixflowService,
} from '../../nexus/service';
import { type EmbeddedStack, startEmbeddedStack } from '../../scripts/embedded-stack';
import { runTool } from '../../scripts/temporal-server';
import { ensureTemporalCli } from '../../scripts/temporal-tools';
import { runNpmScript } from '../helpers/npm-script';
import { newPerson, onboard, type Person } from '../helpers/people';
import { waitUntil } from '../helpers/wait';
import type { backendMovesMoney, backendRefusals, backendWithKey } from './caller-workflows';

// A backend that runs on Temporal calls pixflow from its own workflows, in a namespace of its
// own, through the Nexus endpoint `npm start` makes: the whole stack as `npm start` runs it
// (every part a real process), a caller namespace on its Temporal, and the caller's worker in a
// process of its own, killed (SIGKILL) while its workflow waits on pixflow and started again.
// The flows' outcomes reach the caller through the server's completion callbacks. The caller
// presents a pixflow API key in each operation's header and holds no pixflow codec key
// (Temporal's default data converter): what pixflow answers crosses in the clear, with nothing
// personal, while pixflow's own histories keep personal data sealed. Without a proper key, over
// Temporal's Nexus HTTP endpoint or from a workflow, nothing starts.

const { PendingNexusOperationState, CallbackState } = temporal.api.enums.v1;

const API_KEY = 'nexus-key';
const WEBHOOK_SECRET = 'nexus-webhook-secret-0123456789';
const CALLER_NAMESPACE = 'backend';
const CALLER_TASK_QUEUE = 'backend';

let stack: EmbeddedStack;
let connection: Connection;
/** The backend's client, in its own namespace: the SDK's default data converter, no pixflow key. */
let caller: Client;
/** pixflow's own namespace, with pixflow's codec, to look at its flows. */
let pixflowNs: Client;
let bundleDir: string;
const workers: ChildProcess[] = [];
/** Key records the test makes as an operator would: one lacking deposits:write, one holding it. */
let readsDeposits: string;
let writesDeposits: string;
/** A key of another brand, and a platform key (no brand of its own), both with deposits' scopes. */
let otherBrandKey: string;
let platformKey: string;
const OTHER_BRAND = 'nexus-other';

const api = async (p: string, body?: unknown) => {
  const res = await fetch(`${stack.api}${p}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${API_KEY}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON answers, read field by field
  return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
};
const sandbox = async (p: string, body: unknown = {}) => {
  const res = await fetch(`${stack.sandbox}${p}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  expect(res.status, `${p}: ${await res.text()}`).toBe(200);
};

/** Waits until `probe` is true, polling every 250 ms. */
const until = (what: string, probe: () => Promise<boolean>, timeoutMs = 30_000) =>
  waitUntil(
    () => probe().catch(() => false),
    (ok) => ok,
    {
      timeoutMs,
      intervalMs: 250,
      onTimeout: () => new Error(`${what}: not within ${timeoutMs / 1000} s`),
    },
  );

/** This environment without any pixflow codec key: what a caller's process has. */
function withoutPixflowKeys(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { CODEC_KEYS: _keys, CODEC_ACTIVE_KEY_ID: _active, ...rest } = env;
  return rest;
}

/** Whether a history, as the server keeps it, holds this text in the clear anywhere. */
async function holdsInTheClear(handle: WorkflowHandle, text: string): Promise<boolean> {
  const history = await handle.fetchHistory();
  return Buffer.from(temporal.api.history.v1.History.encode(history).finish()).includes(text);
}

/** The caller's worker as a process of its own, once it polls. */
async function startCallerWorker(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'caller-worker.ts')], {
    env: {
      ...withoutPixflowKeys(process.env),
      TEMPORAL_ADDRESS: stack.temporalAddress,
      CALLER_NAMESPACE,
      CALLER_TASK_QUEUE,
      CALLER_BUNDLE: path.join(bundleDir, 'caller-workflows.js'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  workers.push(child);
  let out = '';
  child.stdout?.on('data', (b: Buffer) => {
    out += b.toString('utf8');
  });
  child.stderr?.on('data', (b: Buffer) => {
    out += b.toString('utf8');
  });
  await until('the caller worker polls', async () => {
    if (child.exitCode !== null) throw new Error(`the caller worker exited:\n${out}`);
    return out.includes('caller worker polling');
  });
  return child;
}

async function kill(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
}

beforeAll(async () => {
  stack = await startEmbeddedStack({
    label: 'nexus',
    env: {
      API_KEYS: API_KEY,
      WEBHOOK_SECRET,
      WEBHOOK_PARTNER_ID: 'nexus-partner',
      POLL_SCHEDULE_MS: '1000,2000',
      RECONCILE_INTERVAL_MS: '500',
    },
  });
  connection = await Connection.connect({ address: stack.temporalAddress });
  // The backend's namespace, on the same server, as its operator would make it.
  await runTool(ensureTemporalCli(), [
    'operator',
    'namespace',
    'create',
    '--namespace',
    CALLER_NAMESPACE,
    '--address',
    stack.temporalAddress,
  ]);
  caller = new Client({ connection, namespace: CALLER_NAMESPACE });
  pixflowNs = new Client({
    connection,
    namespace: stack.env.TEMPORAL_NAMESPACE ?? 'default',
    dataConverter: pixflowDataConverter(
      parseCodecKeys(stack.env.CODEC_KEYS ?? '', stack.env.CODEC_ACTIVE_KEY_ID ?? ''),
    ),
  });
  // Bundled once: each caller worker process starts from it at once.
  bundleDir = mkdtempSync(path.join(os.tmpdir(), 'pixflow-nexus-caller-'));
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(__dirname, 'caller-workflows.ts'),
    // What sets the key header on the workflows' pixflow operations, as docs/nexus.md registers it.
    workflowInterceptorModules: [path.join(__dirname, '../../nexus/caller.ts')],
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} },
  });
  writeFileSync(path.join(bundleDir, 'caller-workflows.js'), code);
  const pool = createPool(stack.databaseUrl, 1);
  try {
    const actor = { operatorId: null, operatorEmail: 'nexus-test', operatorRole: null };
    const made = (name: string, scopes: ['deposits:read'] | ['deposits:write']) =>
      createKey(pool, actor, { name, scopes, expiresAt: null }).then((k) => k.secret);
    readsDeposits = await made('reads deposits', ['deposits:read']);
    writesDeposits = await made('writes deposits', ['deposits:write']);
    await createBrand(pool, actor, { id: OTHER_BRAND, name: 'Another brand' });
    const both: Scope[] = ['deposits:read', 'deposits:write'];
    otherBrandKey = (
      await createKey(pool, actor, { name: 'other brand', scopes: both, brand: OTHER_BRAND, expiresAt: null })
    ).secret;
    platformKey = (
      await createKey(pool, actor, { name: 'platform', scopes: both, brand: null, expiresAt: null })
    ).secret;
  } finally {
    await pool.end();
  }
}, 180_000);

afterAll(async () => {
  for (const w of workers) await kill(w);
  await connection?.close();
  if (bundleDir) rmSync(bundleDir, { recursive: true, force: true });
  if (!stack) return;
  const code = await stack.stop();
  expect(code, stack.output().slice(-5000)).toBe(0);
}, 60_000);

/** Starts a caller workflow; at first the new namespace may not be known to every service yet. */
async function startCaller<
  W extends typeof backendMovesMoney | typeof backendRefusals | typeof backendWithKey,
>(workflow: string, args: Parameters<W>) {
  const workflowId = `${workflow}-${randomBytes(4).toString('hex')}`;
  await until(`the ${CALLER_NAMESPACE} namespace takes a workflow`, () =>
    caller.workflow.start<W>(workflow, { workflowId, taskQueue: CALLER_TASK_QUEUE, args }).then(() => true),
  );
  return caller.workflow.getHandle<W>(workflowId);
}

describe('a backend calls pixflow through Nexus from another namespace', () => {
  let ana: Person;
  let payout: string;

  it('onboards, takes a deposit and pays out; its worker is killed while it waits and the workflow completes', async () => {
    const started = Date.now();
    // The endpoint npm start made routes to pixflow's namespace and task queue.
    const endpoint = await connection.operatorService.listNexusEndpoints({ name: PIXFLOW_NEXUS_ENDPOINT });
    expect(endpoint.endpoints[0]?.spec?.target?.worker).toMatchObject({
      namespace: stack.env.TEMPORAL_NAMESPACE ?? 'default',
      taskQueue: 'pixflow',
    });

    ana = newPerson();
    const txid = `${Date.now()}${randomBytes(3).readUIntBE(0, 3)}`;
    payout = `payout-${randomBytes(6).toString('hex')}`;
    const first = await startCallerWorker();
    const handle = await startCaller<typeof backendMovesMoney>('backendMovesMoney', [
      {
        apiKey: API_KEY,
        person: ana,
        txid,
        transactionId: payout,
        depositCentavos: 15_000,
        payoutCentavos: 4_990,
      },
    ]);

    // Its onboarding is pixflow's own: the person does the liveness, an operator the review.
    await until(
      'the onboarding the caller started',
      async () => (await api(`/v1/onboardings/${ana.cpf}`)).status === 200,
    );
    await onboard({ api: stack.api, apiKey: API_KEY, sandbox: stack.sandbox }, ana);

    // The deposit exists, and the caller waits for its outcome: then its worker dies.
    await until('the caller waits for the deposit', async () => {
      const { raw } = await handle.describe();
      return (raw.pendingNexusOperations ?? []).some(
        (op) =>
          op.operation === 'waitForOutcome' &&
          op.state === PendingNexusOperationState.PENDING_NEXUS_OPERATION_STATE_STARTED,
      );
    });
    expect((await api(`/v1/deposits/${txid}`)).body.state.status).toBe('awaiting_payment');
    await kill(first);

    // Paid while the caller has no worker: the server calls the caller back all the same.
    await sandbox(`/sandbox/deposits/${txid}/pay`, { payerName: ana.name });
    await until(
      'the deposit completes',
      async () => (await api(`/v1/deposits/${txid}`)).body.state.status === 'completed',
    );
    await until('the caller has the deposit outcome', async () => {
      const { raw } = await handle.describe();
      return (raw.pendingNexusOperations ?? []).length === 0;
    });

    await startCallerWorker();
    await until(
      'the payout is on its way',
      async () => (await api(`/v1/withdrawals/${payout}`)).body?.state.status === 'processing',
    );
    await sandbox(`/sandbox/withdrawals/${payout}/settle`);
    const moved = await handle.result();

    expect(moved.onboarding).toMatchObject({ flow: 'onboarding', status: 'approved' });
    expect(moved.deposit).toMatchObject({ workflowId: `deposit-${txid}`, txid, created: true });
    expect(moved.deposit.qr.payload).toMatch(/^000201/);
    expect(moved.deposit.qr.image).toMatch(/^data:image\/png;base64,/);
    expect(moved.depositOutcome).toMatchObject({
      flow: 'deposit',
      status: 'completed',
      txid,
      amountCentavos: 15_000,
    });
    expect(moved.withdrawal).toMatchObject({
      flow: 'withdrawal',
      status: 'completed',
      transactionId: payout,
      amountCentavos: 4_990,
      receiptStored: true,
    });
    // The caller's worker read every answer without a pixflow key, and no answer holds the
    // person's data: the payer's name is in the deposit's whole state, which pixflow's client reads.
    expect(JSON.stringify(moved)).not.toContain(ana.name);
    const whole = (await pixflowNs.workflow.getHandle(`deposit-${txid}`).result()) as DepositState;
    expect(whole.payment?.payerName).toBe(ana.name);
    // pixflow's histories hold the person's CPF and name sealed only; the caller's holds its own
    // input (the CPF it sent) as its converter wrote it, in the clear.
    for (const workflowId of [`deposit-${txid}`, `withdrawal-${payout}`]) {
      for (const text of [ana.cpf, ana.name]) {
        expect(await holdsInTheClear(pixflowNs.workflow.getHandle(workflowId), text), workflowId).toBe(false);
      }
    }
    expect(await holdsInTheClear(handle, ana.cpf)).toBe(true);
    // Each outcome came from the flow's own run: the server's callback to the caller succeeded.
    for (const workflowId of [`deposit-${txid}`, `withdrawal-${payout}`]) {
      const { raw } = await pixflowNs.workflow.getHandle(workflowId).describe();
      expect(raw.callbacks?.length, workflowId).toBeGreaterThan(0);
      for (const cb of raw.callbacks ?? []) {
        expect(cb.state, workflowId).toBe(CallbackState.CALLBACK_STATE_SUCCEEDED);
      }
    }
    process.stdout.write(
      `[nexus] the backend's workflow completed in ${Math.round((Date.now() - started) / 1000)} s\n`,
    );
  }, 180_000);

  it('refusals: bad input is a handler error naming the field, a rule or a conflict fails the operation', async () => {
    const stranger = newPerson();
    const handle = await startCaller<typeof backendRefusals>('backendRefusals', [
      { apiKey: API_KEY, stranger, approved: ana, conflictingTransactionId: payout },
    ]);
    const [badCpf, unverifiedDeposit, unverifiedPayout, conflict, noSuchFlow, badIspb, oldName] =
      await handle.result();
    expect(badCpf).toMatchObject({ kind: 'handler-error', type: 'BAD_REQUEST' });
    expect(badCpf?.message).toContain('input.client.cpf: has invalid check digits');
    expect(badIspb).toMatchObject({ kind: 'handler-error', type: 'BAD_REQUEST' });
    expect(badIspb?.message).toContain('input.client.bankAccount.ispb: must be 8 digits');
    expect(oldName).toMatchObject({ kind: 'handler-error', type: 'BAD_REQUEST' });
    expect(oldName?.message).toContain('input.client.bankispb: renamed to client.bankAccount.ispb');
    // A refusal of the rules, deposit or withdrawal, has the type and details the API's 409 has:
    // the reason, the rules' version, the flow that keeps it.
    expect(unverifiedDeposit).toMatchObject({
      kind: 'operation-failed',
      type: 'not-verified',
      details: {
        reason: 'not_verified',
        verification: 'none',
        policyVersion: 1,
        workflowId: expect.stringMatching(/^deposit-/),
      },
    });
    expect(unverifiedPayout).toMatchObject({
      kind: 'operation-failed',
      type: 'withdrawal-refused',
      details: {
        status: 'refused',
        reason: 'not_verified',
        policyVersion: 1,
        workflowId: expect.stringMatching(/^withdrawal-/),
      },
    });
    expect(conflict).toMatchObject({ kind: 'operation-failed', type: 'conflict' });
    expect(noSuchFlow).toMatchObject({ kind: 'operation-failed', type: 'flow-not-found' });
    // Refused in their flows, before the provider heard of them: the stranger's deposit and payout
    // ended refused, with nothing charged or sent.
    const flows = await api(`/v1/flows?cpf=${stranger.cpf}`);
    const theirs = flows.body.items as { type: string; status: string; reason: string }[];
    expect(theirs.filter((f) => f.type === 'deposit')).toMatchObject([
      { status: 'refused', reason: 'not_verified' },
    ]);
    expect(theirs.filter((f) => f.type === 'withdrawal')).toMatchObject([
      { status: 'refused', reason: 'not_verified' },
    ]);
    expect(pixflowService.name).toBe('pixflow');
  }, 60_000);

  /** A txid no flow has. */
  const newTxid = () => `${Date.now()}${randomBytes(3).readUIntBE(0, 3)}`;
  /** No deposit with this txid: not in the API, no workflow in pixflow's namespace. */
  async function nothingStarted(txid: string, who: string) {
    expect((await api(`/v1/deposits/${txid}`)).status, who).toBe(404);
    await expect(pixflowNs.workflow.getHandle(`deposit-${txid}`).describe(), who).rejects.toThrow(
      /not found/i,
    );
  }

  it("over Temporal's Nexus HTTP endpoint: no key, a wrong key, a key lacking deposits:write are refused and start nothing; a proper key starts the deposit", async () => {
    // Where the anonymous caller posted: the frontend's HTTP address, the endpoint's id.
    const [endpoint] = (await connection.operatorService.listNexusEndpoints({ name: PIXFLOW_NEXUS_ENDPOINT }))
      .endpoints;
    const { clusters } = await connection.operatorService.listClusters({});
    const httpAddress = clusters?.[0]?.httpAddress;
    expect(httpAddress).toMatch(/^127\.0\.0\.1:\d+$/);
    const url = `http://${httpAddress}/nexus/endpoints/${endpoint?.id}/services/pixflow/createDeposit`;
    const post = async (txid: string, headers: Record<string, string>) => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'nexus-request-id': randomUUID(), ...headers },
        body: JSON.stringify({ txid, amountCentavos: 1_000, client: ana }),
        signal: AbortSignal.timeout(20_000),
      });
      // A refusal is not to be asked again: the frontend says so in a Nexus header.
      return {
        status: res.status,
        retryable: res.headers.get('nexus-request-retryable'),
        text: await res.text(),
      };
    };

    const refusals: { who: string; headers: Record<string, string>; status: number; says: string }[] = [
      { who: 'no key', headers: {}, status: 401, says: 'Missing API key' },
      {
        who: 'a wrong key',
        headers: { [PIXFLOW_API_KEY_HEADER]: `pxk_${randomBytes(32).toString('base64url')}` },
        status: 401,
        says: 'Invalid API key',
      },
      {
        who: 'a bootstrap key of another stack',
        headers: { [PIXFLOW_API_KEY_HEADER]: 'dev-api-key' },
        status: 401,
        says: 'Invalid API key',
      },
      {
        who: 'a key lacking deposits:write',
        headers: { [PIXFLOW_API_KEY_HEADER]: readsDeposits },
        status: 403,
        says: 'lacks deposits:write',
      },
    ];
    for (const r of refusals) {
      const txid = newTxid();
      const answer = await post(txid, r.headers);
      expect(answer.status, `${r.who}: ${answer.text}`).toBe(r.status);
      expect(answer.text, r.who).toContain(r.says);
      expect(answer.retryable, r.who).toBe('false');
      await nothingStarted(txid, r.who);
    }

    const txid = newTxid();
    const answer = await post(txid, { [PIXFLOW_API_KEY_HEADER]: writesDeposits });
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({ workflowId: `deposit-${txid}`, txid, created: true });
    expect((await api(`/v1/deposits/${txid}`)).body.state.status).toBe('awaiting_payment');
  }, 60_000);

  it("a key acts for its brand through Nexus as on the API: another brand's key neither starts money flows nor reads the default brand's; a platform key names its brand", async () => {
    const [endpoint] = (await connection.operatorService.listNexusEndpoints({ name: PIXFLOW_NEXUS_ENDPOINT }))
      .endpoints;
    const { clusters } = await connection.operatorService.listClusters({});
    const base = `http://${clusters?.[0]?.httpAddress}/nexus/endpoints/${endpoint?.id}/services/pixflow`;
    const call = async (operation: string, body: unknown, headers: Record<string, string>) => {
      const res = await fetch(`${base}/${operation}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'nexus-request-id': randomUUID(), ...headers },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(20_000),
      });
      return { status: res.status, text: await res.text() };
    };
    const deposit = (txid: string, headers: Record<string, string>) =>
      call('createDeposit', { txid, amountCentavos: 1_000, client: ana }, headers);

    // The default brand's deposit, which the other brand must not reach.
    const ours = newTxid();
    const made = await deposit(ours, { [PIXFLOW_API_KEY_HEADER]: writesDeposits });
    expect(made.status, made.text).toBe(200);

    const refusals: { who: string; headers: Record<string, string>; status: number; says: string }[] = [
      {
        who: "another brand's key",
        headers: { [PIXFLOW_API_KEY_HEADER]: otherBrandKey },
        status: 424,
        says: 'brand-without-account',
      },
      {
        who: "another brand's key naming the default brand",
        headers: { [PIXFLOW_API_KEY_HEADER]: otherBrandKey, [PIXFLOW_BRAND_HEADER]: 'default' },
        status: 403,
        says: 'acts for its own brand only',
      },
      {
        who: 'a platform key naming no brand',
        headers: { [PIXFLOW_API_KEY_HEADER]: platformKey },
        status: 400,
        says: 'platform key names the brand',
      },
      {
        who: 'a platform key naming a brand that does not exist',
        headers: { [PIXFLOW_API_KEY_HEADER]: platformKey, [PIXFLOW_BRAND_HEADER]: 'no-such-brand' },
        status: 400,
        says: 'no brand',
      },
    ];
    for (const r of refusals) {
      const txid = newTxid();
      const answer = await deposit(txid, r.headers);
      expect(answer.status, `${r.who}: ${answer.text}`).toBe(r.status);
      expect(answer.text, r.who).toContain(r.says);
      await nothingStarted(txid, r.who);
      await expect(
        pixflowNs.workflow.getHandle(`${OTHER_BRAND}:deposit-${txid}`).describe(),
        r.who,
      ).rejects.toThrow(/not found/i);
    }

    // Asked by the other brand, the default brand's deposit is no flow of its own: not found.
    const waited = await call(
      'waitForOutcome',
      { flow: 'deposit', txid: ours },
      { [PIXFLOW_API_KEY_HEADER]: otherBrandKey },
    );
    expect(waited.status, waited.text).toBe(424);
    expect(waited.text).toContain('flow-not-found');

    // A platform key naming the default brand acts for it.
    const txid = newTxid();
    const answer = await deposit(txid, {
      [PIXFLOW_API_KEY_HEADER]: platformKey,
      [PIXFLOW_BRAND_HEADER]: 'default',
    });
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({ workflowId: `deposit-${txid}`, created: true });
  }, 60_000);

  it('a brand with an account of its own starts its deposit through Nexus, under its own id', async () => {
    const funded = 'nexus-funded';
    // The account at the stack's provider sandbox, sealed with the stack's own keys.
    const e = loadConfig({});
    const account = brandAccountSchema.parse({
      connector: 'identity-payments',
      settings: {
        baseUrl: stack.sandbox,
        authUrl: stack.sandbox,
        clientId: e.PROVIDER_CLIENT_ID,
        merchant: e.PROVIDER_MERCHANT,
        partnerId: `${funded}-partner`,
      },
      secrets: {
        clientSecret: e.PROVIDER_CLIENT_SECRET,
        apiKey: e.PROVIDER_API_KEY,
        webhookSecret: `${funded}-${randomBytes(12).toString('hex')}`,
      },
    });
    const sealed = sealBrandAccount(
      {
        codecKeys: parseCodecKeys(stack.env.CODEC_KEYS ?? '', stack.env.CODEC_ACTIVE_KEY_ID ?? ''),
        hashKey: stack.env.PII_HASH_KEY ?? '',
      },
      funded,
      account,
    );
    const pool = createPool(stack.databaseUrl, 1);
    let key: string;
    try {
      const actor = { operatorId: null, operatorEmail: 'nexus-test', operatorRole: null };
      await createBrand(pool, actor, { id: funded, name: 'A brand with its account' });
      await setBrandAccount(
        pool,
        { ...actor, operatorRole: 'admin' },
        {
          ...sealed,
          settings: sealed.settings as Record<string, unknown>,
        },
      );
      const scopes: Scope[] = ['onboardings:write', 'deposits:read', 'deposits:write'];
      key = (await createKey(pool, actor, { name: 'funded brand', scopes, brand: funded, expiresAt: null }))
        .secret;
    } finally {
      await pool.end();
    }
    // The brand meets ana by starting her onboarding, answered at once (approved): only a brand
    // that knows a person takes their deposits (docs/brands.md, "People a brand knows").
    const met = await fetch(`${stack.api}/v1/onboardings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ cpf: ana.cpf, plan: 'plan_basic', event: 'onboarding' }),
      signal: AbortSignal.timeout(20_000),
    });
    expect(met.status, await met.clone().text()).toBe(200);
    const [endpoint] = (await connection.operatorService.listNexusEndpoints({ name: PIXFLOW_NEXUS_ENDPOINT }))
      .endpoints;
    const { clusters } = await connection.operatorService.listClusters({});
    const txid = newTxid();
    const res = await fetch(
      `http://${clusters?.[0]?.httpAddress}/nexus/endpoints/${endpoint?.id}/services/pixflow/createDeposit`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'nexus-request-id': randomUUID(),
          [PIXFLOW_API_KEY_HEADER]: key,
        },
        body: JSON.stringify({ txid, amountCentavos: 1_000, client: ana }),
        signal: AbortSignal.timeout(20_000),
      },
    );
    const text = await res.text();
    expect(res.status, text).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ workflowId: `${funded}:deposit-${txid}`, txid, created: true });
    await expect(pixflowNs.workflow.getHandle(`deposit-${txid}`).describe()).rejects.toThrow(/not found/i);
  }, 60_000);

  it('from a workflow: a wrong key or one lacking the scope fails the operation at once (UNAUTHENTICATED, UNAUTHORIZED), starting nothing', async () => {
    for (const [apiKey, type] of [
      ['not-a-pixflow-key', 'UNAUTHENTICATED'],
      [readsDeposits, 'UNAUTHORIZED'],
    ] as const) {
      const txid = newTxid();
      const handle = await startCaller<typeof backendWithKey>('backendWithKey', [
        { apiKey, person: ana, txid },
      ]);
      // A handler error the caller's server does not retry: the workflow gets it, it does not wait.
      expect(await handle.result()).toMatchObject({ kind: 'handler-error', type });
      await nothingStarted(txid, type);
    }
  }, 60_000);
});

describe('the runnable example (examples/nexus-caller), as its README runs it', () => {
  it('npm run example:nexus: a caller with an API key and no pixflow codec key signs a person up, has a deposit paid and a prize paid out', async () => {
    const example = runNpmScript('example:nexus', {
      ...withoutPixflowKeys(process.env),
      TEMPORAL_ADDRESS: stack.temporalAddress,
      SANDBOX_URL: stack.sandbox,
      CALLER_NAMESPACE: 'nexus-example',
      PIXFLOW_API_KEY: API_KEY,
    });
    try {
      const [, paidJson] = await example.printed(/deposit completed: (\{.*\})\n/, 150_000);
      const [, payoutJson] = await example.printed(/prize completed: (\{.*\})\n/, 120_000);
      expect(await example.exited, example.output()).toBe(0);
      const paid = JSON.parse(paidJson as string) as DepositOutcome;
      const payout = JSON.parse(payoutJson as string) as WithdrawalOutcome;
      expect(example.output()).toContain('onboarding approved');
      expect(paid).toMatchObject({ flow: 'deposit', status: 'completed', amountCentavos: 15_000 });
      expect(payout).toMatchObject({ flow: 'withdrawal', status: 'completed', amountCentavos: 4_990 });
      // pixflow's API tells the same: the deposit paid, the prize sent.
      expect((await api(`/v1/deposits/${paid.txid}`)).body.state.status).toBe('completed');
      expect((await api(`/v1/withdrawals/${payout.transactionId}`)).body.state).toMatchObject({
        status: 'completed',
        receiptStored: true,
      });
      // Its flows keep the person's CPF and name sealed in pixflow's histories.
      for (const workflowId of [`deposit-${paid.txid}`, `withdrawal-${payout.transactionId}`]) {
        for (const text of ['73628883504', 'Bia Lima']) {
          expect(await holdsInTheClear(pixflowNs.workflow.getHandle(workflowId), text), workflowId).toBe(
            false,
          );
        }
      }
    } finally {
      await example.stop();
    }
  }, 300_000);
});
