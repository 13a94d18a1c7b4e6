import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  VERIFIER_LANGUAGES,
  type VerifierLanguage,
  verifierCommand,
  verifierIsCurrent,
} from '../../scripts/setup-verifiers';
import { type ApiEnv, eventually, freshCpf, startApiEnv } from '../api/support';

// The event verification examples in clients/verify/ (Python, Go, Java, each on its ecosystem's
// Standard Webhooks library), as `npm run setup` built them, run on real deliveries: the real API
// and its events relay sign and post events to a receiver here, which keeps each request's
// headers and raw body; each verifier must accept those and refuse a changed body, a timestamp
// outside the 5-minute tolerance and a secret that no longer signs.

interface Delivery {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
}

interface Verdict {
  code: number | null;
  stdout: string;
  stderr: string;
}

const TOLERANCE_S = 5 * 60;
let e: ApiEnv;
let server: http.Server;
const deliveries: Delivery[] = [];
let endpointId: string;
/** The endpoint's secrets in the order they were made: the first, then one per rotation. */
const secrets: string[] = [];
/** One delivery per secret era: signed by secrets[0]; by [1] and [0]; by [2] and [1]. */
const era: Delivery[] = [];

const delivery = (i: number) => era[i] as Delivery;
const secret = (i: number) => secrets[i] as string;

/** Runs one verifier as a receiver would: the secret and headers in its environment, the raw body on stdin. */
function verify(lang: VerifierLanguage, key: string, d: Delivery): Promise<Verdict> {
  const { command, args } = verifierCommand(lang);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: {
        PATH: process.env.PATH,
        PIXFLOW_WEBHOOK_SECRET: key,
        WEBHOOK_ID: d.id,
        WEBHOOK_TIMESTAMP: d.timestamp,
        WEBHOOK_SIGNATURE: d.signature,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    // A verifier that refuses before reading (no secret) may close its stdin first: the body it
    // never read is not this test's failure, its exit code and message are.
    child.stdin.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') reject(err);
    });
    child.stdin.end(d.body);
  });
}

/** A Standard Webhooks signature made here, independently of pixflow and of every library. */
function signAt(whsec: string, d: Delivery, timestamp: number): Delivery {
  const key = Buffer.from(whsec.replace(/^whsec_/, ''), 'base64');
  const mac = createHmac('sha256', key).update(`${d.id}.${timestamp}.${d.body}`).digest('base64');
  return { ...d, timestamp: String(timestamp), signature: `v1,${mac}` };
}

/** Starts an onboarding (its first event, awaiting_liveness, is cheap) and waits for its delivery. */
async function nextDelivery(): Promise<Delivery> {
  const before = deliveries.length;
  const res = await e.call('POST', '/v1/onboardings', {
    body: { cpf: freshCpf(), plan: 'plan_basic', event: 'signup' },
  });
  expect(res.status).toBe(201);
  await eventually(
    () => deliveries.length,
    (n) => n > before,
  );
  return deliveries[before] as Delivery;
}

async function rotate(): Promise<void> {
  const res = await e.call('POST', `/v1/webhook-endpoints/${endpointId}/rotate-secret`);
  expect(res.status).toBe(200);
  secrets.push(((await res.json()) as { secret: string }).secret);
}

beforeAll(async () => {
  for (const lang of VERIFIER_LANGUAGES) {
    expect(
      verifierIsCurrent(lang),
      `the ${lang} verifier is not built from these sources: npm run setup`,
    ).toBe(true);
  }
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({
        id: String(req.headers['webhook-id']),
        timestamp: String(req.headers['webhook-timestamp']),
        signature: String(req.headers['webhook-signature']),
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  e = await startApiEnv({}, { env: { WEBHOOK_ALLOW_LOOPBACK: 'true' }, eventsRelay: {} });
  const res = await e.call('POST', '/v1/webhook-endpoints', {
    body: {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/pixflow`,
      events: ['onboarding.awaiting_liveness'],
    },
  });
  expect(res.status).toBe(201);
  const created = (await res.json()) as { id: string; secret: string };
  endpointId = created.id;
  secrets.push(created.secret);
  era.push(await nextDelivery());
  await rotate();
  era.push(await nextDelivery());
  await rotate();
  era.push(await nextDelivery());
}, 120_000);

afterAll(async () => {
  await e?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

it('the deliveries are real ones: one signature, then two during each rotation overlap', () => {
  expect(era.map((d) => d.signature.split(' ').length)).toEqual([1, 2, 2]);
  for (const d of era) {
    expect(d.id).toMatch(/^evt_/);
    expect(JSON.parse(d.body)).toMatchObject({ type: 'onboarding.awaiting_liveness' });
    expect(Math.abs(Number(d.timestamp) - Date.now() / 1000)).toBeLessThan(60);
  }
});

describe.each(VERIFIER_LANGUAGES)('the %s verifier', (lang) => {
  const refuses = async (key: string, d: Delivery, reason: RegExp) => {
    const v = await verify(lang, key, d);
    expect(v, `${lang} accepted it`).toMatchObject({ code: 1, stdout: '' });
    expect(v.stderr).toMatch(/^invalid event: /);
    expect(v.stderr).toMatch(reason);
  };
  const accepts = async (key: string, d: Delivery) => {
    const v = await verify(lang, key, d);
    expect(v, `${lang} refused it`).toMatchObject({ code: 0, stderr: '' });
    expect(v.stdout).toMatch(new RegExp(`^verified ${d.id}\\b`));
  };

  it('accepts a delivery as pixflow sent it', async () => {
    await accepts(secret(0), delivery(0));
  });

  it('refuses the body changed (its type made approved)', async () => {
    const d = delivery(0);
    const body = d.body.replace('onboarding.awaiting_liveness', 'onboarding.approved');
    expect(body).not.toBe(d.body);
    await refuses(secret(0), { ...d, body }, /no matching signature/i);
  });

  it('refuses the real headers with the timestamp moved back past the tolerance', async () => {
    const d = delivery(0);
    await refuses(secret(0), { ...d, timestamp: String(Number(d.timestamp) - TOLERANCE_S - 60) }, /too old/i);
  });

  it('refuses a correctly signed event older (or newer) than 5 minutes: the tolerance itself', async () => {
    const key = secret(0);
    const now = Math.floor(Date.now() / 1000);
    // Signed here the same way: inside the tolerance it verifies, so only the age can refuse it.
    await accepts(key, signAt(key, delivery(0), now - TOLERANCE_S + 60));
    await refuses(key, signAt(key, delivery(0), now - TOLERANCE_S - 60), /too old/i);
    await refuses(key, signAt(key, delivery(0), now + TOLERANCE_S + 60), /too new/i);
  });

  it('after a rotation, both the new and the overlapping secret verify', async () => {
    await accepts(secret(1), delivery(1));
    await accepts(secret(0), delivery(1));
  });

  it('refuses a delivery with a secret that no longer signs', async () => {
    const d = delivery(2);
    await accepts(secret(2), d);
    await accepts(secret(1), d);
    await refuses(secret(0), d, /no matching signature/i);
  });

  it('says how to call it when the secret is missing', async () => {
    const v = await verify(lang, '', delivery(0));
    expect(v.code).toBe(2);
    expect(v.stderr).toMatch(/PIXFLOW_WEBHOOK_SECRET/);
  });
});
