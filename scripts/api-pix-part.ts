import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import type { Config } from '../common/config';
import { type ApiPixPki, makeApiPixPki } from '../sandbox/api-pix';

// npm start's API Pix PSP: the emulation (sandbox/api-pix/main.ts) and what pixflow is given to
// speak to it, as a deployment would set them for a real PSP: the worker's API_PIX_* (the
// merchant's client certificate, the PSP's CA, the account's Pix key), the API's mutual TLS
// webhook listener (API_PIX_WEBHOOK_*, pixflow's own server certificate, the PSP's CA for its
// callers) and the URL the worker registers at the PSP. Deposits are then routed to it after the
// first provider, and a held deposit paid through it can be returned (docs/tour.md).

/** The emulation's account: its Pix key, and the client id its OAuth answers. */
const ACCOUNT = { clientId: 'pixflow-api-pix', pixKey: 'pix@pixflow.dev' };
/** The webhook listener's port when API_PIX_WEBHOOK_PORT sets none. */
export const DEFAULT_API_PIX_WEBHOOK_PORT = 3443;

/**
 * A secret of this data folder's own, for one purpose: derived from its webhook secret, so a folder
 * made before the API Pix PSP gets them with nothing new stored.
 */
const derived = (config: Config, purpose: string) =>
  createHmac('sha256', config.WEBHOOK_SECRET).update(`api-pix:${purpose}`).digest('base64url');

export function apiPixPkiDir(config: Config, dataDir: string): string {
  return config.SANDBOX_API_PIX_PKI_DIR ?? path.join(dataDir, 'api-pix-pki');
}

/**
 * The environment of the emulation, the worker and the API for the PSP npm start runs; `port`:
 * the webhook listener's (API_PIX_WEBHOOK_PORT as given, else 3443).
 */
export function apiPixEnv(
  config: Config,
  dataDir: string,
  env: NodeJS.ProcessEnv,
  port: string | undefined = env.API_PIX_WEBHOOK_PORT,
): Record<string, string> {
  const pkiDir = apiPixPkiDir(config, dataDir);
  const pki = makeApiPixPki(pkiDir);
  const webhookSecret = env.API_PIX_WEBHOOK_SECRET ?? derived(config, 'webhook-path');
  const webhookPort = port ?? String(DEFAULT_API_PIX_WEBHOOK_PORT);
  return {
    SANDBOX_API_PIX_PKI_DIR: pkiDir,
    API_PIX_BASE_URL: `https://127.0.0.1:${config.SANDBOX_API_PIX_PORT}`,
    API_PIX_CLIENT_ID: ACCOUNT.clientId,
    API_PIX_CLIENT_SECRET: derived(config, 'client-secret'),
    API_PIX_CERT_FILE: pki.merchantClient.cert,
    API_PIX_KEY_FILE: pki.merchantClient.key,
    API_PIX_CA_FILE: pki.pspCa.cert,
    API_PIX_PIX_KEY: ACCOUNT.pixKey,
    API_PIX_WEBHOOK_PORT: webhookPort,
    API_PIX_WEBHOOK_CERT_FILE: pki.pixflowIngress.cert,
    API_PIX_WEBHOOK_KEY_FILE: pki.pixflowIngress.key,
    API_PIX_WEBHOOK_CLIENT_CA_FILE: pki.pspCa.cert,
    API_PIX_WEBHOOK_SECRET: webhookSecret,
    API_PIX_WEBHOOK_URL: `https://127.0.0.1:${webhookPort}/webhooks/api-pix/${webhookSecret}`,
  };
}

/** Whether the emulation answers its health check to a caller with the merchant's certificate. */
export function apiPixHealthy(config: Config, pki: ApiPixPki): Promise<boolean> {
  return new Promise((resolve) => {
    const req = https.get(
      `https://127.0.0.1:${config.SANDBOX_API_PIX_PORT}/healthz`,
      {
        cert: readFileSync(pki.merchantClient.cert),
        key: readFileSync(pki.merchantClient.key),
        ca: readFileSync(pki.pspCa.cert),
        timeout: 2_000,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
  });
}

/** The curl options a person uses to reach the emulation's controls, for the banner and the tour. */
export function apiPixCurlOptions(pki: ApiPixPki): string {
  return `--cert ${pki.merchantClient.cert} --key ${pki.merchantClient.key} --cacert ${pki.pspCa.cert}`;
}
