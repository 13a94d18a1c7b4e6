import { readFileSync } from 'node:fs';
import { type RunningApiPix, type StartApiPixOptions, startApiPixSandbox } from './app';
import { type ApiPixPki, makeApiPixPki } from './pki';

// The API Pix emulation's public face: start it with PEM strings, or from a PKI folder made (or
// kept) with the machine's openssl, as `npm start` and tests do.

export type { RunningApiPix, StartApiPixOptions } from './app';
export { startApiPixSandbox } from './app';
export type { ApiPixOptions } from './context';
export type { FaultsPatch as ApiPixFaultsPatch } from './faults';
export { type ApiPixPki, apiPixPkiFiles, type CertFiles, makeApiPixPki } from './pki';

/**
 * Makes (or reuses) the test PKI in `pkiDir` and starts the PSP with its server certificate,
 * accepting merchant certificates of its CA, and posting webhooks with its webhook client
 * certificate to listeners pixflow's CA signed. pixflow's side then uses `pki.merchantClient`
 * and `pki.pspCa` to call it, and `pki.pixflowIngress` with `pki.pspCa` for its listener.
 */
export async function startApiPixSandboxWithPki(
  pkiDir: string,
  options: Omit<StartApiPixOptions, 'tls' | 'webhookClient'>,
): Promise<RunningApiPix & { pki: ApiPixPki }> {
  const pki = makeApiPixPki(pkiDir);
  const read = (file: string) => readFileSync(file, 'utf8');
  const running = await startApiPixSandbox({
    ...options,
    tls: { cert: read(pki.pspServer.cert), key: read(pki.pspServer.key), ca: read(pki.pspCa.cert) },
    webhookClient: {
      cert: read(pki.pspWebhookClient.cert),
      key: read(pki.pspWebhookClient.key),
      ca: read(pki.pixflowCa.cert),
    },
  });
  return { ...running, pki };
}
