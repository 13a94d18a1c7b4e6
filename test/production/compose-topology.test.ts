import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientTlsOf, temporalTlsFiles } from '../../scripts/temporal-certs';
import { waitUntil } from '../helpers/wait';
import {
  type ComposeProject,
  type ComposeStack,
  resolvedProject,
  startComposeStack,
  writeFreshEnvFile,
} from './compose-stack';
import { sdkTls, temporalAnswers } from './temporal-tls';

// docker-compose.yml's topology, run from the compose file itself (compose-stack.ts says how each
// image maps to this project's binaries): every service's command with the environment compose
// resolves from an env file of fresh secrets, in depends_on order, the worker twice. Through the
// API it starts, with no other call to any part: a person onboarded to `approved`, the README's
// first deposit paid to `completed`, and a payout to `completed`.

const CPF = '73628883504';

let scratch: string;
let env: Record<string, string>;
let project: ComposeProject;
let stack: ComposeStack | undefined;
let stopStack: (() => Promise<void>) | undefined;

beforeAll(async () => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'pixflow-compose-env-'));
  const envFile = path.join(scratch, '.env');
  env = writeFreshEnvFile(envFile);
  project = resolvedProject(envFile);
  // Everything it starts is stopped after the tests, also when the start itself fails.
  stack = await startComposeStack(project, env, {
    timeoutMs: 240_000,
    onStop: (stop) => {
      stopStack = stop;
    },
  });
}, 300_000);

afterAll(async () => {
  await stopStack?.();
  rmSync(scratch, { recursive: true, force: true });
}, 120_000);

const running = () => {
  if (!stack) throw new Error('the compose stack did not start');
  return stack;
};

interface Reply {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON answers, read field by field
  body: any;
}

async function call(
  url: string,
  init: { method?: string; body?: unknown; key?: boolean } = {},
): Promise<Reply> {
  const res = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      ...(init.key === false ? {} : { authorization: `Bearer ${env.API_KEYS}` }),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text for the failure message
  }
  return { status: res.status, body };
}

const api = (p: string, body?: unknown) => call(`${running().api}${p}`, { body });
const sandbox = (p: string, body?: unknown) =>
  call(`${running().sandbox}${p}`, { body, method: 'POST', key: false });

/** GET `p` on the API until its status is `status`; the last answer on failure. */
async function untilStatus(p: string, status: string, timeoutMs = 60_000): Promise<Reply> {
  return waitUntil(
    () => api(p),
    (r) => r.status === 200 && r.body?.state?.status === status,
    {
      timeoutMs,
      intervalMs: 500,
      onTimeout: (last) =>
        new Error(`${p} never reached ${status}: ${last.status} ${JSON.stringify(last.body)}`),
    },
  );
}

/** A process' environment as the kernel holds it. */
function environOf(pid: number): Record<string, string> {
  return Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

describe('docker-compose.yml, every service run from its own command and environment', () => {
  it('runs every service but the UI, the worker per deploy.replicas', () => {
    const { processes, skipped } = running();
    expect(Object.keys(skipped)).toEqual(['temporal-ui']);
    expect([...processes.keys()].sort()).toEqual(
      [
        'api',
        'migrate',
        'sandbox',
        'temporal',
        'temporal-schema',
        'temporal-setup',
        'worker.1',
        'worker.2',
      ].sort(),
    );
    // The one-shot services ran to their end; the rest still run.
    for (const name of ['migrate', 'temporal-schema', 'temporal-setup'])
      expect(processes.get(name)?.child.exitCode, name).toBe(0);
    for (const name of ['api', 'sandbox', 'temporal', 'worker.1', 'worker.2'])
      expect(processes.get(name)?.child.exitCode, name).toBeNull();
  });

  it("gives the API, the sandbox and each worker compose's environment, only addresses rewritten", () => {
    const { processes, plan } = running();
    const rewritten = new Set<string>();
    for (const [name, service, replica] of [
      ['api', 'api', 1],
      ['sandbox', 'sandbox', 1],
      ['worker.1', 'worker', 1],
      ['worker.2', 'worker', 2],
    ] as const) {
      const composed = project.services[service]?.environment ?? {};
      const actual = environOf(processes.get(name)?.child.pid as number);
      const expected = plan.environmentOf(service, replica);
      expect(Object.keys(expected).sort(), name).toEqual(
        Object.keys(composed)
          .filter((k) => composed[k] !== null)
          .sort(),
      );
      for (const [key, value] of Object.entries(expected)) {
        expect(actual[key], `${name} ${key}`).toBe(value);
        if (value !== composed[key]) rewritten.add(key);
      }
      // Secrets reach each part as the env file gave them.
      if (service === 'api') {
        expect(actual.API_KEYS).toBe(env.API_KEYS);
        expect(actual.WEBHOOK_SECRET).toBe(env.WEBHOOK_SECRET);
      }
      expect(actual.NODE_ENV, name).toBe('production');
    }
    // What the rewrite touched: addresses, ports and paths in a mounted folder, nothing else.
    expect([...rewritten].sort()).toEqual(
      [
        'API_PORT',
        'CODEC_CORS_ORIGINS',
        'DATABASE_URL',
        'ELIGIBILITY_URL',
        'HTTP_HOST',
        'PROVIDER_AUTH_URL',
        'PROVIDER_BASE_URL',
        'PROVIDER_LIVENESS_URL',
        'SANDBOX_NOTIFICATION_URL',
        'SANDBOX_PORT',
        'TEMPORAL_ADDRESS',
        'TEMPORAL_TLS_CA_PATH',
        'TEMPORAL_TLS_CERT_PATH',
        'TEMPORAL_TLS_KEY_PATH',
        'TEMPORAL_UI_URL',
        'WORKER_HTTP_PORT',
        'WORKER_SDK_METRICS_PORT',
      ].sort(),
    );
    // Two replicas, two sets of ports.
    const w1 = environOf(processes.get('worker.1')?.child.pid as number);
    const w2 = environOf(processes.get('worker.2')?.child.pid as number);
    expect(w1.WORKER_HTTP_PORT).not.toBe(w2.WORKER_HTTP_PORT);
  });

  it('has Temporal serve only clients with a certificate of the CA made as docs/production.md says', async () => {
    const address = `127.0.0.1:${running().plan.port('temporal', 7233)}`;
    const tls = clientTlsOf(temporalTlsFiles(env.TEMPORAL_TLS_DIR as string));
    expect(await temporalAnswers(address, undefined)).not.toBe('served');
    const { clientCertPair: _none, ...withoutCert } = sdkTls(tls);
    expect(await temporalAnswers(address, withoutCert)).not.toBe('served');
    expect(await temporalAnswers(address, sdkTls(tls))).toBe('served');
    // The workers and the API read the client certificate from the mounted folder.
    const api = environOf(running().processes.get('api')?.child.pid as number);
    expect(api.TEMPORAL_TLS_CERT_PATH).toBe(tls.cert);
    expect(api.TEMPORAL_TLS_KEY_PATH).toBe(tls.key);
  });

  it("has the sandbox send to the API's ingress from its own settings, with nobody registering it", async () => {
    const state = await call(`${running().sandbox}/sandbox/state`, { key: false });
    const target = {
      url: `${running().api}/webhooks/provider/${env.WEBHOOK_SECRET}`,
      partnerId: project.services.sandbox?.environment?.WEBHOOK_PARTNER_ID,
    };
    expect(state.body.targets).toEqual({ deposit: target, withdraw: target, liveness: target });
  });

  it('onboards a person to approved, completes a deposit and a payout through the API', async () => {
    const person = { externalId: 'user-2', cpf: CPF, email: 'bia@example.com', name: 'Bia Lima' };
    // Onboarding: KYC, the liveness link, the person's liveness check (the sandbox stands in for
    // their phone), approved by the provider's notification.
    const started = await api('/v1/onboardings', { cpf: CPF, plan: 'plan_basic', event: 'onboarding' });
    expect([200, 201], JSON.stringify(started.body)).toContain(started.status);
    const link = await waitUntil(
      () => api(`/v1/onboardings/${CPF}/liveness-link`, {}),
      (r) => r.status === 200,
      {
        timeoutMs: 60_000,
        intervalMs: 500,
        onTimeout: (l) => new Error(`liveness link: ${l.status} ${JSON.stringify(l.body)}`),
      },
    );
    expect(link.body.url).toMatch(/^http/);
    const done = await sandbox('/sandbox/liveness/complete', { document: CPF });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    await untilStatus(`/v1/onboardings/${CPF}`, 'approved');

    // The README's first deposit: R$ 150,00, paid in the sandbox.
    const txid = `${Date.now()}${randomBytes(3).readUIntBE(0, 3)}`;
    const qr = await api('/v1/deposits', { txid, amountCentavos: 15000, client: person });
    expect(qr.status, JSON.stringify(qr.body)).toBe(201);
    expect(qr.body.payload).toBeTruthy();
    const paid = await sandbox(`/sandbox/deposits/${txid}/pay`);
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    await untilStatus(`/v1/deposits/${txid}`, 'completed');

    // A payout of R$ 250,50 to the person's own CPF key, settled by the receiving bank.
    const wid = `compose-${randomBytes(4).toString('hex')}`;
    const asked = await api('/v1/withdrawals', {
      transactionId: wid,
      amountCentavos: 25050,
      pixKey: CPF,
      pixType: 'CPF',
      client: person,
    });
    expect(asked.status, JSON.stringify(asked.body)).toBe(202);
    await untilStatus(`/v1/withdrawals/${wid}`, 'processing');
    const settled = await sandbox(`/sandbox/withdrawals/${wid}/settle`);
    expect(settled.status, JSON.stringify(settled.body)).toBe(200);
    await untilStatus(`/v1/withdrawals/${wid}`, 'completed');

    // The provider's notifications reached the API: each point delivered, none given up.
    const state = (await call(`${running().sandbox}/sandbox/state`, { key: false })).body;
    const delivered = new Set(
      (state.notifications as Array<{ point: string; status: string }>)
        .filter((n) => n.status === 'delivered')
        .map((n) => n.point),
    );
    expect([...delivered].sort()).toEqual(['deposit', 'liveness', 'withdraw']);
    expect(state.counters.notificationsGaveUp).toBe(0);
  }, 180_000);
});
