import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../common/config';
import { createLogger } from '../../common/logger';
import { sealBrandAccount } from '../../connectors/accounts';
import { readPixNotifications, toApiPixTxid } from '../../connectors/api-pix';
import { type BrandAccount, brandAccountSchema } from '../../contracts/brand-account';
import { depositWorkflowId } from '../../contracts/deposit';
import { setBrandAccount } from '../../db/brand-accounts';
import { type BrandActor, createBrand } from '../../db/brands';
import { migrate } from '../../db/migrate';
import { createPool, type Pool } from '../../db/pool';
import { type ApiPixListener, startApiPixListener } from '../../ingress/api-pix-listener';
import { type ApiPixForTest, apiPixRequest, startApiPixForTest } from '../helpers/api-pix';
import { freshDatabase } from '../helpers/postgres';
import { testCodecKeys, testDataConverter } from '../helpers/temporal';

// The API Pix webhook listener serves the brands' own API Pix accounts without the environment's
// API_PIX_WEBHOOK_SECRET, which is the default brand's alone (docs/brands.md): the configuration
// takes the port and TLS files without it, and over real mutual TLS against the PSP emulation's
// PKI a brand's callback through its own path is stored for that brand's deposit, while any other
// path, the default brand's included, is 401.

const HASH_KEY = `brand-pix-${randomBytes(8).toString('hex')}`;
const BRAND = `pix-${randomBytes(3).toString('hex')}`;
const BRAND_SECRET = `brand-pix-path-${randomBytes(10).toString('hex')}`;
const admin: BrandActor = { operatorId: null, operatorEmail: 'admin@example.com', operatorRole: 'admin' };
const log = createLogger('brand-money-api-pix', 'silent');

let psp: ApiPixForTest;
let pool: Pool;
let connection: Connection;
let listener: ApiPixListener;

beforeAll(async () => {
  psp = await startApiPixForTest();
  const url = await freshDatabase();
  await migrate(url);
  pool = createPool(url, 3);
  await createBrand(pool, admin, { id: BRAND, name: 'Pix Brand' });
  const account: BrandAccount = brandAccountSchema.parse({
    connector: 'api-pix',
    settings: {
      baseUrl: 'https://pix.psp.example/api/v2',
      clientId: `client-${BRAND}`,
      pixKey: `${BRAND}@example.com`,
      certFile: '/nonexistent/cert.pem',
      keyFile: '/nonexistent/key.pem',
    },
    secrets: { clientSecret: randomBytes(12).toString('hex'), webhookSecret: BRAND_SECRET },
  });
  const sealed = sealBrandAccount({ codecKeys: testCodecKeys, hashKey: HASH_KEY }, BRAND, account);
  await setBrandAccount(pool, admin, { ...sealed, settings: sealed.settings as Record<string, unknown> });
  connection = Connection.lazy({ address: inject('temporalAddress') });
  // The listener's configuration as the API loads it: a port and the TLS files, no path secret.
  const config = loadConfig({
    API_PIX_WEBHOOK_PORT: '8443',
    API_PIX_WEBHOOK_CERT_FILE: '/run/secrets/listener.pem',
    API_PIX_WEBHOOK_KEY_FILE: '/run/secrets/listener.key',
    API_PIX_WEBHOOK_CLIENT_CA_FILE: '/run/secrets/psp-ca.pem',
    PII_HASH_KEY: HASH_KEY,
    AUTH_FAILURE_LIMIT: '1000',
  });
  expect(config.API_PIX_WEBHOOK_SECRET).toBeUndefined();
  listener = await startApiPixListener({
    config,
    pool,
    temporal: new Client({ connection, dataConverter: testDataConverter }),
    log,
    read: readPixNotifications,
    port: 0,
    host: '127.0.0.1',
    tls: { cert: psp.webhook.serverCert, key: psp.webhook.serverKey, clientCa: psp.webhook.clientCa },
  });
}, 60_000);

afterAll(async () => {
  await listener?.close();
  await connection?.close();
  await pool?.end();
  await psp?.close();
});

const pspClient = () => ({
  cert: readFileSync(psp.pki.pspWebhookClient.cert, 'utf8'),
  key: readFileSync(psp.pki.pspWebhookClient.key, 'utf8'),
  ca: psp.webhook.serverCa,
});
const post = (secret: string, txid: string, endToEndId: string) =>
  apiPixRequest(`https://127.0.0.1:${listener.port}/webhooks/api-pix/${secret}/pix`, {
    method: 'POST',
    body: {
      pix: [{ endToEndId, txid: toApiPixTxid(txid), valor: '10.00', horario: '2026-11-28T04:00:00.000Z' }],
    },
    tls: pspClient(),
  });
const e2e = () => `E${randomBytes(15).toString('hex').toUpperCase()}a`;
const inboxOf = async (endToEndId: string) =>
  (
    await pool.query<{ workflow_id: string }>(
      'SELECT workflow_id FROM webhook_inbox WHERE raw_body LIKE $1',
      [`%${endToEndId}%`],
    )
  ).rows;

describe('the API Pix listener without API_PIX_WEBHOOK_SECRET', () => {
  it("stores a brand's callback through its own path for that brand's deposit", async () => {
    const txid = `${Date.now()}${randomBytes(2).readUInt16BE()}`;
    const id = e2e();
    const answer = await post(BRAND_SECRET, txid, id);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(await inboxOf(id)).toEqual([{ workflow_id: depositWorkflowId(txid, BRAND) }]);
  });

  it('answers any other path 401, storing nothing', async () => {
    for (const secret of [`wrong-${BRAND_SECRET}`, 'a-default-brand-secret-it-never-had']) {
      const id = e2e();
      const answer = await post(secret, `${Date.now()}1`, id);
      expect(answer.status).toBe(401);
      expect(JSON.stringify(answer.body)).not.toContain(secret);
      expect(await inboxOf(id)).toEqual([]);
    }
  });
});
