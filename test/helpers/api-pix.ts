import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import {
  type ApiPixFaultsPatch,
  type ApiPixPki,
  type RunningApiPix,
  startApiPixSandboxWithPki,
} from '../../sandbox/api-pix';

// A PSP speaking the API Pix for a test: its own test PKI in a temp folder, the emulation on a
// free port of 127.0.0.1, what a client (pixflow) needs to call it, what pixflow's webhook
// listener needs to be called by it, and the payer's side (pay a cob, start a MED return) and
// the fault knobs, spoken over the same mutual TLS as everything else.

export interface ClientTls {
  cert: string;
  key: string;
  ca: string;
}

export interface ApiPixAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: a wire body, checked field by field by the tests
  body: any;
}

export interface ApiPixRequest {
  method?: string;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string as is. */
  body?: unknown;
  /** The client certificate, key and trusted CA; omitted parts are not presented. */
  tls?: Partial<ClientTls>;
  timeoutMs?: number;
}

/** One HTTPS request, its answer read (JSON parsed when it is JSON). */
export function apiPixRequest(url: string, req: ApiPixRequest = {}): Promise<ApiPixAnswer> {
  const body =
    req.body === undefined ? undefined : typeof req.body === 'string' ? req.body : JSON.stringify(req.body);
  const headers: Record<string, string> = {
    ...(body !== undefined && typeof req.body !== 'string' ? { 'content-type': 'application/json' } : {}),
    ...req.headers,
  };
  return new Promise((resolve, reject) => {
    const r = https.request(
      url,
      {
        method: req.method ?? 'GET',
        headers,
        ...req.tls,
        agent: false,
        timeout: req.timeoutMs ?? 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text === '' ? undefined : JSON.parse(text);
          } catch {
            // not JSON: kept as text
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
        });
      },
    );
    r.on('timeout', () => r.destroy(new Error('request timed out')));
    r.on('error', reject);
    r.end(body);
  });
}

export interface PayOptions {
  /** `holder` (default): the cob's devedor pays; `third_party`: someone else. */
  payer?: 'holder' | 'third_party';
  cpf?: string;
  nome?: string;
  infoPagador?: string;
}

export interface MedOptions {
  natureza?: 'MED_OPERACIONAL' | 'MED_FRAUDE';
  /** Decimal text ("10.00"); default all the Pix still holds. */
  valor?: string;
}

export interface ApiPixForTest {
  url: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** The account's Pix key (a cob's `chave`, the webhook's key). */
  pixKey: string;
  /** What a client (pixflow) presents to the PSP and trusts it with. */
  tls: ClientTls;
  /** What pixflow's webhook listener serves with, and the CA of the PSP's client certificate it checks. */
  webhook: { serverCert: string; serverKey: string; clientCa: string; serverCa: string };
  pki: ApiPixPki;
  sandbox: RunningApiPix;
  /** A request to the PSP presenting the merchant's certificate (what a test needs without a client). */
  request(pathAndQuery: string, req?: Omit<ApiPixRequest, 'tls'>): Promise<ApiPixAnswer>;
  /** An access token with these scopes (all of them when none are named). */
  token(scope?: string): Promise<string>;
  /** The payer pays the cob: answers the Pix (its `endToEndId`, `pagador`). */
  // biome-ignore lint/suspicious/noExplicitAny: a wire body
  pay(txid: string, opts?: PayOptions): Promise<any>;
  /** The payer's side starts a MED return: answers the devolução. */
  // biome-ignore lint/suspicious/noExplicitAny: a wire body
  med(e2eId: string, opts?: MedOptions): Promise<any>;
  // biome-ignore lint/suspicious/noExplicitAny: the knobs as they stand
  faults(knobs: ApiPixFaultsPatch): Promise<any>;
  // biome-ignore lint/suspicious/noExplicitAny: the PSP's state, for assertions
  state(): Promise<any>;
  reset(): Promise<void>;
  close(): Promise<void>;
}

export interface StartApiPixForTestOptions {
  /** Reuse (or make) the PKI here instead of a fresh temp folder, which close() then keeps. */
  pkiDir?: string;
  returnSettleMs?: number;
  cobExpiryDefaultS?: number;
  pixKey?: string;
  webhookMaxAttempts?: number;
  webhookBackoffMs?: number;
}

export async function startApiPixForTest(options: StartApiPixForTestOptions = {}): Promise<ApiPixForTest> {
  const dir = options.pkiDir ?? mkdtempSync(path.join(os.tmpdir(), 'api-pix-pki-'));
  const clientId = 'pixflow-merchant';
  const clientSecret = 'api-pix-sandbox-secret';
  const pixKey = options.pixKey ?? '7d9f0335-8dcc-4054-9bf9-0dbd61d36906';
  const sandbox = await startApiPixSandboxWithPki(dir, {
    clientId,
    clientSecret,
    pixKeys: [pixKey],
    ...(options.returnSettleMs === undefined ? {} : { returnSettleMs: options.returnSettleMs }),
    ...(options.cobExpiryDefaultS === undefined ? {} : { cobExpiryDefaultS: options.cobExpiryDefaultS }),
    webhookMaxAttempts: options.webhookMaxAttempts ?? 4,
    webhookBackoffMs: options.webhookBackoffMs ?? 100,
  });
  const { pki } = sandbox;
  const read = (file: string) => readFileSync(file, 'utf8');
  const tls: ClientTls = {
    cert: read(pki.merchantClient.cert),
    key: read(pki.merchantClient.key),
    ca: read(pki.pspCa.cert),
  };
  const request = (pathAndQuery: string, req: Omit<ApiPixRequest, 'tls'> = {}) =>
    apiPixRequest(`${sandbox.url}${pathAndQuery}`, { ...req, tls });
  const control = async (pathAndQuery: string, body?: unknown, method = 'POST') => {
    const answer = await request(pathAndQuery, { method, body: method === 'GET' ? undefined : (body ?? {}) });
    if (answer.status !== 200)
      throw new Error(`${method} ${pathAndQuery}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  return {
    url: sandbox.url,
    tokenUrl: sandbox.tokenUrl,
    clientId,
    clientSecret,
    pixKey,
    tls,
    webhook: {
      serverCert: read(pki.pixflowIngress.cert),
      serverKey: read(pki.pixflowIngress.key),
      clientCa: read(pki.pspCa.cert),
      serverCa: read(pki.pixflowCa.cert),
    },
    pki,
    sandbox,
    request,
    async token(scope) {
      const form = new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) });
      const answer = await request('/oauth/token', {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: form.toString(),
      });
      if (answer.status !== 200) throw new Error(`token: ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer.body.access_token as string;
    },
    pay: (txid, opts = {}) => control(`/sandbox/cob/${encodeURIComponent(txid)}/pay`, opts),
    med: (e2eId, opts = {}) =>
      control(`/sandbox/pix/${encodeURIComponent(e2eId)}/med`, { natureza: 'MED_OPERACIONAL', ...opts }),
    faults: (knobs) => control('/sandbox/faults', knobs),
    state: () => control('/sandbox/state', undefined, 'GET'),
    reset: async () => {
      await control('/sandbox/reset');
    },
    close: async () => {
      await sandbox.close();
      if (options.pkiDir === undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}
