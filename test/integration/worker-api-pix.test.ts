import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../common/config';
import { createLogger } from '../../common/logger';
import type { ProviderCallEvent } from '../../common/metrics';
import { apiPixConnectorOf } from '../../worker/activities';
import { type ApiPixForTest, startApiPixForTest } from '../helpers/api-pix';

// The worker's API Pix connector as a deployment configures it: API_PIX_* read by the
// configuration, its PEM files and client secret file read at start, a charge made over mutual
// TLS at the emulated PSP, its calls counted in the worker's metrics beside the first provider's.

let psp: ApiPixForTest;
beforeAll(async () => {
  psp = await startApiPixForTest();
});
afterAll(async () => {
  await psp?.close();
});

const log = createLogger('worker-api-pix-test', 'silent');

function environment(): Record<string, string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'api-pix-secret-'));
  const secretFile = path.join(dir, 'client-secret');
  writeFileSync(secretFile, `${psp.clientSecret}\n`);
  return {
    API_PIX_BASE_URL: psp.url,
    API_PIX_TOKEN_URL: psp.tokenUrl,
    API_PIX_CLIENT_ID: psp.clientId,
    API_PIX_CLIENT_SECRET_FILE: secretFile,
    API_PIX_CERT_FILE: psp.pki.merchantClient.cert,
    API_PIX_KEY_FILE: psp.pki.merchantClient.key,
    API_PIX_CA_FILE: psp.pki.pspCa.cert,
    API_PIX_PIX_KEY: psp.pixKey,
    API_PIX_EXPIRY_SECONDS: '900',
  };
}

describe("the worker's API Pix connector", () => {
  it('is built from API_PIX_* and makes a charge at the PSP over mutual TLS', async () => {
    const settings = loadConfig(environment()).apiPix;
    expect(settings).toBeDefined();
    const calls: ProviderCallEvent[] = [];
    const connector = apiPixConnectorOf(settings!, log, (e) => calls.push(e));
    try {
      expect(connector.name).toBe('api-pix');
      expect(connector.capabilities).toEqual(['collect', 'return']);
      const txid = `7${Date.now()}`;
      const charge = await connector.createCharge({
        txid,
        amountCentavos: 4_200,
        payer: { externalId: 'user-1', cpf: '63401825771', email: 'ana@example.com', name: 'Ana Souza' },
      });
      expect(charge).toMatchObject({ txid, amountCentavos: 4_200 });
      expect(charge.payload).toMatch(/^000201/);
      // About 900 s to pay, as API_PIX_EXPIRY_SECONDS says.
      const lasts = new Date(charge.expiresAt).getTime() - Date.now();
      expect(lasts).toBeGreaterThan(800_000);
      expect(lasts).toBeLessThanOrEqual(900_000);
      expect(calls.map((c) => c.endpoint)).toContain('api-pix:cob_put');
      expect(calls.every((c) => c.endpoint.startsWith('api-pix:'))).toBe(true);
    } finally {
      connector.close();
    }
  });

  it('stops the worker at start naming a PEM file it cannot read', () => {
    const settings = loadConfig({
      ...environment(),
      API_PIX_KEY_FILE: '/nonexistent/api-pix-key.pem',
    }).apiPix;
    expect(() => apiPixConnectorOf(settings!, log)).toThrow(
      'API_PIX_KEY_FILE="/nonexistent/api-pix-key.pem": cannot be read (ENOENT)',
    );
  });
});
