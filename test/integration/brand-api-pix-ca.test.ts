import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseCodecKeys } from '../../common/codec';
import { type AccountKeys, sealBrandAccount } from '../../connectors/accounts';
import { readPixNotifications, toApiPixTxid } from '../../connectors/api-pix';
import type { BrandAccount } from '../../contracts/brand-account';
import { depositWorkflowId } from '../../contracts/deposit';
import { setBrandAccount } from '../../db/brand-accounts';
import { type BrandActor, createBrand } from '../../db/brands';
import { migrate } from '../../db/migrate';
import { createPool, type Pool } from '../../db/pool';
import { type ApiPixListener, startApiPixListener } from '../../ingress/api-pix-listener';
import { type ApiPixPki, makeApiPixPki } from '../../sandbox/api-pix/pki';
import { apiPixRequest } from '../helpers/api-pix';
import { freshDatabase } from '../helpers/postgres';
import { waitUntil } from '../helpers/wait';
import { INGRESS_PII_KEY, uniqueId } from '../ingress/harness';

// Each brand's API Pix PSP trusted by its own CA on the webhook listener, over real mutual TLS:
// three PSPs, each with a CA of its own made by openssl (the emulation's PKI). The environment's
// client CA is the default brand's PSP's; brand B's account names its PSP's CA; brand C's names
// none; brand D's names none at first and is given one while the listener runs; brand E's names a
// file that is not there; brand F's PSP's certificate is signed by an intermediate CA. On a real Postgres and the run's
// Temporal server, where the flows told are workflows waiting under the ids the brands' take.

const codec = `k${randomBytes(3).toString('hex')}:${randomBytes(32).toString('base64')}`;
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
const B = `bet-b-${tag}`;
const C = `bet-c-${tag}`;
const D = `bet-d-${tag}`;
const E = `bet-e-${tag}`;
const F = `bet-f-${tag}`;
const ENV_SECRET = `env-pix-${randomBytes(12).toString('hex')}`;
const B_SECRET = `b-pix-${randomBytes(12).toString('hex')}`;
const C_SECRET = `c-pix-${randomBytes(12).toString('hex')}`;
const D_SECRET = `d-pix-${randomBytes(12).toString('hex')}`;
const E_SECRET = `e-pix-${randomBytes(12).toString('hex')}`;
const F_SECRET = `f-pix-${randomBytes(12).toString('hex')}`;
/** No worker polls it: a flow started there waits, and counts the signals it is sent. */
const QUEUE = `brand-api-pix-ca-${tag}`;

const dirs: string[] = [];
/** The default brand's PSP (the environment's client CA), brand B's, and one neither trusts. */
let defaultPsp: ApiPixPki;
let bPsp: ApiPixPki;
let otherPsp: ApiPixPki;
let chainedPsp: ChainedPsp;
let pool: Pool;
let connection: Connection;
let temporal: Client;
let listener: ApiPixListener;
const started: WorkflowHandle[] = [];
const failures: string[] = [];
const logLines: string[] = [];

const pixAccount = (n: number, webhookSecret: string, webhookClientCaFile?: string): BrandAccount => ({
  connector: 'api-pix',
  settings: {
    baseUrl: 'https://pix.psp.example/api/v2',
    clientId: `psp-client-${n}`,
    pixKey: `${n}-${tag}@bet.example`,
    certFile: '/nonexistent/cert.pem',
    keyFile: '/nonexistent/key.pem',
    ...(webhookClientCaFile ? { webhookClientCaFile } : {}),
  },
  secrets: { clientSecret: randomBytes(12).toString('hex'), webhookSecret },
});

interface ChainedPsp {
  /** The intermediate CA with its root, as the account names it. */
  bundle: string;
  /** The webhook client certificate followed by its intermediate, as the PSP presents it. */
  chain: string;
  key: string;
}

/** A PSP whose webhook client certificate an intermediate CA signs, made with openssl in `dir`. */
function chainedPspIn(dir: string): ChainedPsp {
  const f = (name: string) => path.join(dir, name);
  const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  const caExt = (pathlen: number) =>
    `basicConstraints=critical,CA:TRUE,pathlen:${pathlen}\nkeyUsage=critical,keyCertSign,cRLSign\n`;
  openssl(
    ['req', '-x509', ...newKey, '-keyout', f('root.key'), '-out', f('root.pem'), '-days', '30'].concat(
      ['-subj', '/CN=PSP F root', '-addext', 'basicConstraints=critical,CA:TRUE,pathlen:1'],
      ['-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
    ),
  );
  const issue = (name: string, issuer: string, subject: string, ext: string) => {
    openssl([
      'req',
      '-new',
      ...newKey,
      '-keyout',
      f(`${name}.key`),
      '-out',
      f(`${name}.csr`),
      '-subj',
      subject,
    ]);
    writeFileSync(f(`${name}.ext`), ext);
    openssl(
      [
        'x509',
        '-req',
        '-in',
        f(`${name}.csr`),
        '-CA',
        f(`${issuer}.pem`),
        '-CAkey',
        f(`${issuer}.key`),
      ].concat(
        ['-set_serial', `0x${randomBytes(8).toString('hex')}`, '-days', '30'],
        ['-extfile', f(`${name}.ext`), '-out', f(`${name}.pem`)],
      ),
    );
  };
  issue('intermediate', 'root', '/CN=PSP F webhooks CA', caExt(0));
  issue(
    'webhook',
    'intermediate',
    '/CN=PSP F webhooks',
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n',
  );
  const read = (name: string) => readFileSync(f(name), 'utf8');
  writeFileSync(f('bundle.pem'), read('intermediate.pem') + read('root.pem'));
  return {
    bundle: f('bundle.pem'),
    chain: read('webhook.pem') + read('intermediate.pem'),
    key: read('webhook.key'),
  };
}

const setAccount = (brand: string, a: BrandAccount) => {
  const sealed = sealBrandAccount(keys, brand, a);
  return setBrandAccount(pool, admin, { ...sealed, settings: sealed.settings as Record<string, unknown> });
};

beforeAll(async () => {
  for (let i = 0; i < 4; i++) dirs.push(mkdtempSync(path.join(os.tmpdir(), 'brand-api-pix-ca-')));
  [defaultPsp, bPsp, otherPsp] = dirs.slice(0, 3).map((d) => makeApiPixPki(d)) as [
    ApiPixPki,
    ApiPixPki,
    ApiPixPki,
  ];
  chainedPsp = chainedPspIn(dirs[3] as string);
  const url = await freshDatabase();
  await migrate(url);
  pool = createPool(url, 5);
  for (const id of [B, C, D, E, F]) await createBrand(pool, admin, { id, name: id });
  await setAccount(B, pixAccount(2, B_SECRET, bPsp.pspCa.cert));
  await setAccount(C, pixAccount(3, C_SECRET));
  await setAccount(D, pixAccount(4, D_SECRET));
  await setAccount(F, pixAccount(6, F_SECRET, chainedPsp.bundle));
  await setAccount(E, pixAccount(5, E_SECRET, path.join(dirs[0] as string, 'no-such', 'ca.pem')));
  connection = await Connection.connect({ address: inject('temporalAddress') });
  temporal = new Client({ connection });
  const log = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _enc, done) {
        logLines.push(String(chunk));
        done();
      },
    }),
  );
  listener = await startApiPixListener({
    config: { API_PIX_WEBHOOK_SECRET: ENV_SECRET, PII_HASH_KEY: INGRESS_PII_KEY, AUTH_FAILURE_LIMIT: 1000 },
    pool,
    temporal,
    log,
    read: readPixNotifications,
    metrics: {
      countNotification: () => undefined,
      countAuthFailure: (surface) => failures.push(surface),
      countAuthLimited: () => undefined,
    },
    port: 0,
    host: '127.0.0.1',
    tls: {
      cert: readFileSync(defaultPsp.pixflowIngress.cert, 'utf8'),
      key: readFileSync(defaultPsp.pixflowIngress.key, 'utf8'),
      clientCa: readFileSync(defaultPsp.pspCa.cert, 'utf8'),
    },
    clientCaRefreshMs: 200,
  });
}, 60_000);

afterAll(async () => {
  for (const h of started) await h.terminate('test over').catch(() => undefined);
  await listener?.close();
  await connection?.close();
  await pool?.end();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A flow waiting under `workflowId`, as the brand's deposit would. */
async function waitingFlow(workflowId: string) {
  const handle = await temporal.workflow.start('depositWorkflow', { workflowId, taskQueue: QUEUE, args: [] });
  started.push(handle);
  return handle;
}

const signalsOf = async (handle: WorkflowHandle) =>
  ((await handle.fetchHistory()).events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes)
    .length;

const inboxRows = async (e2e: string) =>
  (
    await pool.query<{ workflow_id: string }>(
      'SELECT workflow_id FROM webhook_inbox WHERE raw_body LIKE $1',
      [`%${e2e}%`],
    )
  ).rows;

const e2e = () => `E${randomBytes(15).toString('hex').toUpperCase()}a`;
const body = (txid: string, endToEndId: string) => ({
  pix: [{ endToEndId, txid: toApiPixTxid(txid), valor: '10.00', horario: '2026-11-28T04:00:00.000Z' }],
});

/** A callback posted as `psp` posts it: its webhook client certificate, trusting pixflow's server. */
const callback = (psp: ApiPixPki, secret: string, payload: unknown) =>
  apiPixRequest(`https://127.0.0.1:${listener.port}/webhooks/api-pix/${secret}/pix`, {
    method: 'POST',
    body: payload,
    tls: {
      cert: readFileSync(psp.pspWebhookClient.cert, 'utf8'),
      key: readFileSync(psp.pspWebhookClient.key, 'utf8'),
      ca: readFileSync(defaultPsp.pixflowCa.cert, 'utf8'),
    },
  });

describe("the API Pix listener trusts each brand's PSP by its own CA", () => {
  it("lets brand B's PSP, signed by B's CA, call B's path: stored and B's flow told", async () => {
    const txid = uniqueId();
    const flow = await waitingFlow(depositWorkflowId(txid, B));
    const id = e2e();
    const answer = await callback(bPsp, B_SECRET, body(txid, id));
    expect(answer.status).toBe(200);
    await waitUntil(
      () => signalsOf(flow),
      (n) => n === 1,
      10_000,
    );
    expect(await inboxRows(id)).toEqual([{ workflow_id: `${B}:deposit-${txid}` }]);
  });

  it("answers B's PSP calling the default brand's path 401, counted as a wrong secret, nothing stored or signalled", async () => {
    const txid = uniqueId();
    const flow = await waitingFlow(depositWorkflowId(txid));
    const before = failures.length;
    const id = e2e();
    const answer = await callback(bPsp, ENV_SECRET, body(txid, id));
    expect(answer.status).toBe(401);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.stringify(answer.body)).not.toContain(ENV_SECRET);
    expect(failures.slice(before)).toEqual(['ingress']);
    // The default brand's PSP is not B's either.
    const other = e2e();
    expect((await callback(defaultPsp, B_SECRET, body(uniqueId(), other))).status).toBe(401);
    expect(failures.length - before).toBe(2);
    // The default brand's own PSP on its path is let in: the 401s were the certificates'.
    const own = e2e();
    expect((await callback(defaultPsp, ENV_SECRET, body(txid, own))).status).toBe(200);
    await waitUntil(
      () => signalsOf(flow),
      (n) => n === 1,
      10_000,
    );
    expect(await inboxRows(id)).toEqual([]);
    expect(await inboxRows(other)).toEqual([]);
    expect(await signalsOf(flow)).toBe(1);
  });

  it("takes the environment's CA for an account that names none", async () => {
    const txid = uniqueId();
    const flow = await waitingFlow(depositWorkflowId(txid, C));
    expect((await callback(defaultPsp, C_SECRET, body(txid, e2e()))).status).toBe(200);
    await waitUntil(
      () => signalsOf(flow),
      (n) => n === 1,
      10_000,
    );
  });

  it("lets in a PSP whose certificate an intermediate CA signs, its account's file holding it with its root", async () => {
    const txid = uniqueId();
    const flow = await waitingFlow(depositWorkflowId(txid, F));
    const answer = await apiPixRequest(
      `https://127.0.0.1:${listener.port}/webhooks/api-pix/${F_SECRET}/pix`,
      {
        method: 'POST',
        body: body(txid, e2e()),
        tls: {
          cert: chainedPsp.chain,
          key: chainedPsp.key,
          ca: readFileSync(defaultPsp.pixflowCa.cert, 'utf8'),
        },
      },
    );
    expect(answer.status).toBe(200);
    await waitUntil(
      () => signalsOf(flow),
      (n) => n === 1,
      10_000,
    );
    // It is F's PSP alone: on the default brand's path, 401.
    const elsewhere = await apiPixRequest(
      `https://127.0.0.1:${listener.port}/webhooks/api-pix/${ENV_SECRET}/pix`,
      {
        method: 'POST',
        body: body(uniqueId(), e2e()),
        tls: {
          cert: chainedPsp.chain,
          key: chainedPsp.key,
          ca: readFileSync(defaultPsp.pixflowCa.cert, 'utf8'),
        },
      },
    );
    expect(elsewhere.status).toBe(401);
  });

  it('refuses in the handshake a certificate that neither CA signed', async () => {
    for (const secret of [ENV_SECRET, B_SECRET, C_SECRET])
      await expect(callback(otherPsp, secret, body(uniqueId(), e2e()))).rejects.toThrow();
  });

  it('names the brand whose CA file cannot be read, and takes none of its callbacks', async () => {
    const logged = logLines.find((l) => l.includes('webhookClientCaFile'));
    expect(logged).toBeDefined();
    expect(JSON.parse(logged as string)).toMatchObject({
      level: 50,
      problem: expect.stringMatching(
        new RegExp(
          `^brand ${E}'s api-pix account: webhookClientCaFile ".*ca\\.pem" cannot be read \\(ENOENT\\)$`,
        ),
      ),
    });
    expect((await callback(defaultPsp, E_SECRET, body(uniqueId(), e2e()))).status).toBe(401);
  });

  it('takes a CA given to a brand while the listener runs, without a restart', async () => {
    const port = listener.port;
    const txid = uniqueId();
    const flow = await waitingFlow(depositWorkflowId(txid, D));
    // D's PSP, whose CA nobody trusts yet.
    await expect(callback(otherPsp, D_SECRET, body(txid, e2e()))).rejects.toThrow();
    await setAccount(D, pixAccount(4, D_SECRET, otherPsp.pspCa.cert));
    const id = e2e();
    const status = await waitUntil(
      () =>
        callback(otherPsp, D_SECRET, body(txid, id)).then(
          (a) => a.status,
          () => 'refused',
        ),
      (s) => s !== 'refused',
      10_000,
    );
    expect(status).toBe(200);
    expect(listener.port).toBe(port);
    await waitUntil(
      () => signalsOf(flow),
      (n) => n === 1,
      10_000,
    );
    expect(await inboxRows(id)).toEqual([{ workflow_id: `${D}:deposit-${txid}` }]);
  });
});
