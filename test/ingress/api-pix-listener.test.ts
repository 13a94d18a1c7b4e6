import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ConfigError, loadConfig } from '../../common/config';
import { createLogger } from '../../common/logger';
import {
  type ApiPixConnector,
  createApiPixConnector,
  readPixNotifications,
  toApiPixTxid,
} from '../../connectors/api-pix';
import { depositWorkflowId } from '../../contracts/deposit';
import { createPool, type Pool } from '../../db/pool';
import { type ApiPixListener, startApiPixListener } from '../../ingress/api-pix-listener';
import { type ApiPixForTest, apiPixRequest, startApiPixForTest } from '../helpers/api-pix';
import { testPool } from '../helpers/postgres';
import { testDataConverter } from '../helpers/temporal';
import { waitUntil } from '../helpers/wait';

// pixflow's listener for a PSP speaking the API Pix, over real HTTPS against the emulated PSP and
// its test PKI: who is let in (the PSP's client certificate, then the path's secret), what a body
// of another shape gets (400 naming the field, nothing stored), what a PSP's paid charge leaves in
// the inbox (the deposit's hint, stored before the 200), and a 503 when the inbox cannot store.

const SECRET = `api-pix-path-${randomBytes(8).toString('hex')}`;
const log = createLogger('api-pix-listener-test', 'silent');

let psp: ApiPixForTest;
let pool: Pool;
let connection: Connection;
let temporal: Client;
let listener: ApiPixListener;
let connector: ApiPixConnector;
const extra: ApiPixListener[] = [];

const pspClient = () => ({
  cert: readFileSync(psp.pki.pspWebhookClient.cert, 'utf8'),
  key: readFileSync(psp.pki.pspWebhookClient.key, 'utf8'),
  ca: psp.webhook.serverCa,
});

async function listen(over: { pool?: Pool } = {}) {
  const l = await startApiPixListener({
    config: { API_PIX_WEBHOOK_SECRET: SECRET, AUTH_FAILURE_LIMIT: 1000 },
    pool: over.pool ?? pool,
    temporal,
    log,
    read: readPixNotifications,
    port: 0,
    host: '127.0.0.1',
    tls: { cert: psp.webhook.serverCert, key: psp.webhook.serverKey, clientCa: psp.webhook.clientCa },
  });
  return l;
}

beforeAll(async () => {
  psp = await startApiPixForTest();
  pool = testPool();
  connection = Connection.lazy({ address: inject('temporalAddress') });
  temporal = new Client({ connection, dataConverter: testDataConverter });
  listener = await listen();
  connector = createApiPixConnector({
    baseUrl: psp.url,
    tokenUrl: psp.tokenUrl,
    clientId: psp.clientId,
    clientSecret: psp.clientSecret,
    ...psp.tls,
    pixKey: psp.pixKey,
  });
}, 60_000);

afterAll(async () => {
  for (const l of extra) await l.close();
  await listener?.close();
  await connection?.close();
  await pool?.end();
  await psp?.close();
});

const url = (path: string, port = listener.port) => `https://127.0.0.1:${port}${path}`;
const pixPath = (secret = SECRET) => `/webhooks/api-pix/${secret}/pix`;
const E2E = 'E99999020202611280400ABCDEFGHIJK';
const aPix = (over: Record<string, unknown> = {}) => ({
  endToEndId: E2E,
  valor: '10.00',
  horario: '2026-11-28T04:00:00.000Z',
  ...over,
});

const rowsWithBody = async (marker: string) =>
  (await pool.query('SELECT count(*)::int AS n FROM webhook_inbox WHERE raw_body LIKE $1', [`%${marker}%`]))
    .rows[0].n as number;

describe('the API Pix webhook listener', () => {
  it('lets no caller without a client certificate of the PSP finish the handshake', async () => {
    // No certificate: refused by TLS, before any route.
    await expect(
      apiPixRequest(url(pixPath()), {
        method: 'POST',
        body: { pix: [aPix()] },
        tls: { ca: psp.webhook.serverCa },
      }),
    ).rejects.toThrow();
    // A certificate of pixflow's own CA, not the PSP's: refused too.
    await expect(
      apiPixRequest(url(pixPath()), {
        method: 'POST',
        body: { pix: [aPix()] },
        tls: {
          cert: readFileSync(psp.pki.pixflowIngress.cert, 'utf8'),
          key: readFileSync(psp.pki.pixflowIngress.key, 'utf8'),
          ca: psp.webhook.serverCa,
        },
      }),
    ).rejects.toThrow();
    // The PSP's certificate: answered.
    const ok = await apiPixRequest(url(pixPath()), {
      method: 'POST',
      body: { pix: [aPix()] },
      tls: pspClient(),
    });
    expect(ok.status).toBe(200);
  });

  it('answers a wrong path secret 401 as a problem, without the secret', async () => {
    const marker = randomBytes(6).toString('hex');
    const answer = await apiPixRequest(url(pixPath(`wrong-${SECRET}`)), {
      method: 'POST',
      body: { pix: [aPix({ infoPagador: marker })] },
      tls: pspClient(),
    });
    expect(answer.status).toBe(401);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(answer.body.type).toMatch(/unauthorized$/);
    expect(JSON.stringify(answer.body)).not.toContain(SECRET);
    expect(await rowsWithBody(marker)).toBe(0);
    // Only the webhook's route is served there.
    const other = await apiPixRequest(url(`/webhooks/api-pix/${SECRET}`), {
      method: 'POST',
      body: {},
      tls: pspClient(),
    });
    expect(other.status).toBe(404);
  });

  it("answers a body not of the spec's shape 400 naming the field, and stores nothing of it", async () => {
    const marker = randomBytes(6).toString('hex');
    const noE2e = await apiPixRequest(url(pixPath()), {
      method: 'POST',
      body: { pix: [{ valor: '10.00', horario: '2026-11-28T04:00:00.000Z', infoPagador: marker }] },
      tls: pspClient(),
    });
    expect(noE2e.status).toBe(400);
    expect(noE2e.body.detail).toMatch(/^body\.pix\.0\.endToEndId/);
    const badValue = await apiPixRequest(url(pixPath()), {
      method: 'POST',
      body: { pix: [aPix({ valor: 'ten', infoPagador: marker })] },
      tls: pspClient(),
    });
    expect(badValue.status).toBe(400);
    expect(badValue.body.detail).toMatch(/valor/);
    const notJson = await apiPixRequest(url(pixPath()), {
      method: 'POST',
      body: `{"pix": [${marker}`,
      tls: pspClient(),
    });
    expect(notJson.status).toBe(400);
    expect(await rowsWithBody(marker)).toBe(0);
  });

  it("stores a paid charge's webhook in the inbox before its 200, as a hint to the deposit", async () => {
    await connector.registerWebhook(url(`/webhooks/api-pix/${SECRET}`));
    const txid = `${Date.now()}${randomBytes(2).readUInt16BE(0)}`;
    await connector.createCharge({
      txid,
      amountCentavos: 2_500,
      payer: { externalId: `l-${txid}`, cpf: '73628883504', email: 'bia@example.com', name: 'Bia Lima' },
    });
    const pix = await psp.pay(toApiPixTxid(txid));
    const rows = await waitUntil(
      async () =>
        (
          await pool.query(
            'SELECT point, signal_name, signal_payload, raw_body FROM webhook_inbox WHERE workflow_id = $1',
            [depositWorkflowId(txid)],
          )
        ).rows,
      (r) => r.length >= 1,
      { timeoutMs: 15_000 },
    );
    expect(rows[0]).toMatchObject({
      point: 'api-pix',
      signal_name: 'providerNotification',
      signal_payload: { type: 'deposit', action: 'updated', id: txid },
    });
    expect(rows[0].raw_body).toContain(pix.endToEndId);
    // The PSP had its 200 at its first attempt.
    const delivery = await waitUntil(
      async () =>
        ((await psp.state()).deliveries as Array<{ body: unknown; status: string; answers: number[] }>).find(
          (d) => JSON.stringify(d.body).includes(pix.endToEndId),
        ),
      (d) => d?.status === 'delivered',
      { timeoutMs: 10_000 },
    );
    expect(delivery?.answers).toEqual([200]);
  });

  it('answers 503 with Retry-After when the inbox cannot store, so the PSP posts again', async () => {
    const down = createPool('postgres://pixflow:nothing@127.0.0.1:1/none', 1);
    const l = await listen({ pool: down });
    extra.push(l);
    const answer = await apiPixRequest(url(pixPath(), l.port), {
      method: 'POST',
      body: { pix: [aPix()] },
      tls: pspClient(),
    });
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBe('5');
    expect(answer.body.type).toMatch(/inbox-unavailable$/);
    await down.end();
  });
});

describe("the listener's settings", () => {
  const ALL = {
    API_PIX_WEBHOOK_PORT: '8443',
    API_PIX_WEBHOOK_CERT_FILE: '/run/secrets/ingress-cert.pem',
    API_PIX_WEBHOOK_KEY_FILE: '/run/secrets/ingress-key.pem',
    API_PIX_WEBHOOK_CLIENT_CA_FILE: '/run/secrets/psp-ca.pem',
    API_PIX_WEBHOOK_SECRET: randomBytes(16).toString('hex'),
  };

  it('are the port and its TLS files, all or none (unset, no listener); the path secret is the default brand’s alone', () => {
    expect(loadConfig({}).API_PIX_WEBHOOK_PORT).toBeUndefined();
    expect(loadConfig(ALL).API_PIX_WEBHOOK_PORT).toBe(8443);
    // Without the environment's secret the listener takes the brands' own accounts' callbacks.
    const { API_PIX_WEBHOOK_SECRET: _secret, ...noSecret } = ALL;
    expect(loadConfig(noSecret).API_PIX_WEBHOOK_PORT).toBe(8443);
    const { API_PIX_WEBHOOK_CLIENT_CA_FILE: _ca, API_PIX_WEBHOOK_KEY_FILE: _key, ...partial } = noSecret;
    let refused: unknown;
    try {
      loadConfig(partial);
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).problems.join('\n')).toMatch(
      /API_PIX_WEBHOOK_PORT: .*API_PIX_WEBHOOK_KEY_FILE, API_PIX_WEBHOOK_CLIENT_CA_FILE too/,
    );
  });

  it('refuse a path secret shorter than 16 characters, without showing it', () => {
    let refused: unknown;
    try {
      loadConfig({ ...ALL, API_PIX_WEBHOOK_SECRET: 'short-secret' });
    } catch (err) {
      refused = err;
    }
    const problems = (refused as ConfigError).problems.join('\n');
    expect(problems).toMatch(/API_PIX_WEBHOOK_SECRET=\(not shown\): must be at least 16 characters/);
    expect(problems).not.toContain('short-secret');
  });
});
