import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cpfHash } from '../../common/pii';
import { onboardingWorkflowId } from '../../contracts/onboarding';
import { type ApiEnv, CODEC_TOKEN, freshCpf, PII_KEY, peopleAt, startApiEnv } from '../api/support';
import { newPerson, onboard, ownCpfKey } from '../helpers/people';
import { waitUntil } from '../helpers/wait';

// Personal data never reaches Temporal in plain text: the raw history, read with a client that
// has NO codec, holds no CPF, name or e-mail; the UI-facing codec endpoint opens it for an
// authorised caller only.

const name = 'Maria Fernanda Oliveira';
const email = 'maria.fernanda.oliveira@example.com';
let env: ApiEnv;
let raw: Client;
let rawConnection: Connection;
const cpf = freshCpf();
const ids: string[] = [];

beforeAll(async () => {
  env = await startApiEnv({ pollScheduleMs: [500] });
  rawConnection = await Connection.connect({ address: inject('temporalAddress') });
  raw = new Client({ connection: rawConnection }); // no data converter: sees what the server stores
  const client = newPerson(cpf, { externalId: 'u-1', email, name });

  // Onboarded to approved (KYC, liveness, the operator's review) before money moves for them.
  await onboard(await peopleAt(env), client, { plan: 'plan_full', event: 'signup' });
  ids.push(onboardingWorkflowId(cpfHash(cpf, PII_KEY)));

  const deposit = await env.call('POST', '/v1/deposits', { body: { client, amountCentavos: 15_000 } });
  expect(deposit.status).toBe(201);
  const { txid } = (await deposit.json()) as { txid: string };
  await env.sandboxControl(`/sandbox/deposits/${txid}/pay`, { payerName: name, payerCpf: cpf });
  ids.push(`deposit-${txid}`);

  // To the person's own CPF key: the key is personal data in the payout's history too.
  const withdrawal = await env.call('POST', '/v1/withdrawals', {
    body: { client, ...ownCpfKey(client), amountCentavos: 2_500 },
  });
  expect(withdrawal.status).toBe(202);
  const { transactionId } = (await withdrawal.json()) as { transactionId: string };
  ids.push(`withdrawal-${transactionId}`);

  // Let every flow get past its first activities, so inputs, results and signals are in history.
  await env.temporal.workflow.getHandle(`deposit-${txid}`).result();
  for (const id of ids) {
    await waitUntil(
      async () => (await env.temporal.workflow.getHandle(id).fetchHistory()).events!.length,
      (events) => events >= 10,
      {
        timeoutMs: 30_000,
        intervalMs: 200,
        onTimeout: (events) => new Error(`${id}: its history never grew past ${events} events`),
      },
    );
  }
}, 120_000);

afterAll(async () => {
  await rawConnection?.close();
  await env?.close();
});

async function rawHistoryBytes(workflowId: string): Promise<string> {
  const history = await raw.workflow.getHandle(workflowId).fetchHistory();
  return Buffer.from(temporal.api.history.v1.History.encode(history).finish()).toString('latin1');
}

describe('personal data in Temporal', () => {
  it('no CPF, name or e-mail appears in plain text in any flow history', async () => {
    for (const id of ids) {
      const bytes = await rawHistoryBytes(id);
      expect(bytes, id).toContain('binary/encrypted');
      for (const secret of [cpf, name, email, 'Maria', 'oliveira@'])
        expect(bytes, `${id}: ${secret}`).not.toContain(secret);
    }
  });

  it('the same history read through the codec does hold the data (the check above can fail)', async () => {
    const history = await env.temporal.workflow.getHandle(ids[1]!).fetchHistory();
    const started = history.events![0]!.workflowExecutionStartedEventAttributes!;
    const [opened] = await env.temporal.options.loadedDataConverter.payloadCodecs[0]!.decode(
      started.input!.payloads!,
    );
    expect(Buffer.from(opened!.data!).toString()).toContain(cpf);
  });
});

describe('codec endpoint for the Temporal UI', () => {
  async function encryptedInput() {
    const history = await raw.workflow.getHandle(ids[1]!).fetchHistory();
    const p = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    return {
      metadata: Object.fromEntries(
        Object.entries(p.metadata!).map(([k, v]) => [k, Buffer.from(v!).toString('base64')]),
      ),
      data: Buffer.from(p.data!).toString('base64'),
    };
  }

  const decode = (payload: unknown, headers: Record<string, string>) =>
    fetch(`${env.url}/codec/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ payloads: [payload] }),
    });

  it('decodes for an authorised call', async () => {
    const res = await decode(await encryptedInput(), { authorization: `Bearer ${CODEC_TOKEN}` });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      payloads: Array<{ data: string; metadata: Record<string, string> }>;
    };
    const json = Buffer.from(body.payloads[0]!.data, 'base64').toString();
    expect(JSON.parse(json)).toMatchObject({ client: { cpf, name, email } });
    expect(Buffer.from(body.payloads[0]!.metadata.encoding!, 'base64').toString()).toBe('json/plain');
  });

  it('refuses a call without a token or with a wrong one, revealing nothing', async () => {
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer wrong-token' },
      { authorization: CODEC_TOKEN },
    ];
    for (const headers of attempts) {
      const res = await decode(await encryptedInput(), headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(await res.text()).not.toContain(cpf);
    }
  });

  it('answers the UI origin CORS preflight, and no other origin', async () => {
    const ok = await fetch(`${env.url}/codec/decode`, {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:8233', 'access-control-request-method': 'POST' },
    });
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    const other = await fetch(`${env.url}/codec/decode`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('encode round-trips through decode', async () => {
    const auth = { authorization: `Bearer ${CODEC_TOKEN}` };
    const plain = {
      metadata: { encoding: Buffer.from('json/plain').toString('base64') },
      data: Buffer.from('"x"').toString('base64'),
    };
    const enc = await fetch(`${env.url}/codec/encode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify({ payloads: [plain] }),
    });
    const sealed = ((await enc.json()) as { payloads: unknown[] }).payloads[0];
    const dec = await decode(sealed, auth);
    expect(((await dec.json()) as { payloads: unknown[] }).payloads[0]).toEqual(plain);
  });
});
