import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeApiPixPki } from '../../sandbox/api-pix/pki';
import { type ApiPixForTest, apiPixRequest, startApiPixForTest } from '../helpers/api-pix';
import { waitUntil } from '../helpers/wait';

// The API Pix emulation over real HTTPS with mutual TLS: what a PSP's client meets (handshake,
// OAuth, the spec's shapes and problems), the payer's side, returns, webhooks and faults.

const ERROR = 'https://pix.bcb.gov.br/api/v2/error/';
const HOLDER = { cpf: '12345678909', nome: 'Bia Lima' };
let txidSeq = 0;
const newTxid = () => `pixflowtest${Date.now()}${String(++txidSeq).padStart(6, '0')}`.slice(0, 35);
const cobBody = (over: Record<string, unknown> = {}, psp: ApiPixForTest = pix) => ({
  calendario: { expiracao: 1800 },
  devedor: HOLDER,
  valor: { original: '150.00' },
  chave: psp.pixKey,
  solicitacaoPagador: 'Depósito',
  ...over,
});

type WebhookPix = { endToEndId: string; devolucoes?: Record<string, unknown>[] } & Record<string, unknown>;

/** pixflow's webhook listener as the spec asks for it: HTTPS that requires the PSP's client certificate. */
interface Receiver {
  url: string;
  received: { body: { pix: WebhookPix[] }; clientCn: string }[];
  answer: () => number;
  close(): Promise<void>;
}

async function startReceiver(
  psp: ApiPixForTest,
  identity: { cert: string; key: string } = { cert: psp.webhook.serverCert, key: psp.webhook.serverKey },
): Promise<Receiver> {
  const receiver: Receiver = { url: '', received: [], answer: () => 200, close: async () => {} };
  const server = https.createServer(
    {
      cert: identity.cert,
      key: identity.key,
      ca: psp.webhook.clientCa,
      requestCert: true,
      rejectUnauthorized: true,
    },
    async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate();
      const status = receiver.answer();
      if (req.method === 'POST' && req.url === '/hooks/pix')
        receiver.received.push({
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
          clientCn: String(peer.subject?.CN ?? ''),
        });
      res.writeHead(status).end();
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return receiver;
}

let pix: ApiPixForTest;
let token: string;
const auth = () => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  pix = await startApiPixForTest({ returnSettleMs: 150 });
  token = await pix.token();
});
afterAll(async () => {
  await pix?.close();
});
beforeEach(async () => {
  await pix.reset();
  token = await pix.token();
});

async function createCob(over: Record<string, unknown> = {}) {
  const txid = newTxid();
  const answer = await pix.request(`/cob/${txid}`, { method: 'PUT', headers: auth(), body: cobBody(over) });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return { txid, cob: answer.body };
}

describe('mutual TLS', () => {
  it('makes the test PKI once: keys 0600, files kept on a second call', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'api-pix-pki-test-'));
    try {
      const first = makeApiPixPki(dir);
      for (const files of [first.pspCa, first.pspServer, first.merchantClient, first.pixflowIngress])
        expect(statSync(files.key).mode & 0o777).toBe(0o600);
      const made = statSync(first.merchantClient.cert).mtimeMs;
      const again = makeApiPixPki(dir);
      expect(statSync(again.merchantClient.cert).mtimeMs).toBe(made);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses the handshake to a caller without a client certificate', async () => {
    const refused = pix.sandbox.state.counters.handshakesRefused;
    await expect(
      apiPixRequest(`${pix.url}/oauth/token`, { method: 'POST', tls: { ca: pix.tls.ca } }),
    ).rejects.toMatchObject({ code: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED' });
    await waitUntil(
      () => pix.sandbox.state.counters.handshakesRefused,
      (n) => n === refused + 1,
    );
  });

  it('refuses the handshake to a client certificate of another CA', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'api-pix-rogue-'));
    try {
      const rogue = makeApiPixPki(dir);
      const refused = pix.sandbox.state.counters.handshakesRefused;
      const requestsBefore = { ...pix.sandbox.state.counters.requests };
      await expect(
        apiPixRequest(`${pix.url}/oauth/token`, {
          method: 'POST',
          tls: {
            cert: readFileSync(rogue.merchantClient.cert, 'utf8'),
            key: readFileSync(rogue.merchantClient.key, 'utf8'),
            ca: pix.tls.ca,
          },
        }),
      ).rejects.toThrow();
      // The PSP refused it in the handshake: no HTTP request reached it.
      await waitUntil(
        () => pix.sandbox.state.counters.handshakesRefused,
        (n) => n === refused + 1,
      );
      expect(pix.sandbox.state.counters.requests).toEqual(requestsBefore);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('OAuth', () => {
  it('issues a Bearer token for HTTP Basic client credentials, with the scopes asked', async () => {
    const answer = await pix.request('/oauth/token', {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${pix.clientId}:${pix.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials&scope=cob.read%20pix.read',
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ token_type: 'Bearer', scope: 'cob.read pix.read' });
    expect(answer.body.expires_in).toBeGreaterThan(0);
    expect(answer.body.access_token).toEqual(expect.any(String));
  });

  it('refuses wrong client credentials (401 invalid_client)', async () => {
    const answer = await pix.request('/oauth/token', {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${pix.clientId}:wrong`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    });
    expect(answer.status).toBe(401);
    expect(answer.body.error).toBe('invalid_client');
  });

  it('answers 401 problem+json without a token and with a bad one', async () => {
    for (const headers of [{}, { authorization: 'Bearer not-a-token' }] as Record<string, string>[]) {
      const answer = await pix.request(`/cob/${newTxid()}`, { headers });
      expect(answer.status).toBe(401);
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(answer.body).toMatchObject({ status: 401, title: 'Unauthorized' });
      expect(answer.headers['www-authenticate']).toMatch(/^Bearer/);
    }
  });

  it('refuses a token presented over another client certificate than the one it was issued to', async () => {
    // Another certificate of the PSP's CA (its webhook client's): the handshake passes, the token does not.
    const answer = await apiPixRequest(`${pix.url}/cob/${newTxid()}`, {
      headers: auth(),
      tls: {
        cert: readFileSync(pix.pki.pspWebhookClient.cert, 'utf8'),
        key: readFileSync(pix.pki.pspWebhookClient.key, 'utf8'),
        ca: pix.tls.ca,
      },
    });
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toMatch(/invalid_token/);
    expect((await pix.request(`/cob/${newTxid()}`, { headers: auth() })).status).toBe(404);
  });

  it('answers 403 AcessoNegado to a token without the scope', async () => {
    const readOnly = await pix.token('cob.read');
    const answer = await pix.request(`/cob/${newTxid()}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${readOnly}` },
      body: cobBody(),
    });
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ type: `${ERROR}AcessoNegado`, status: 403 });
  });
});

describe('cob', () => {
  it('creates a cob, reads it, answers the same request again, refuses another body for its txid', async () => {
    const { txid, cob } = await createCob();
    expect(cob).toMatchObject({
      txid,
      revisao: 0,
      status: 'ATIVA',
      calendario: { expiracao: 1800 },
      devedor: HOLDER,
      valor: { original: '150.00' },
      chave: pix.pixKey,
      loc: { tipoCob: 'cob' },
    });
    expect(cob.pixCopiaECola).toMatch(/^000201/);
    expect(cob.pixCopiaECola).toContain(cob.location);

    const read = await pix.request(`/cob/${txid}`, { headers: auth() });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(cob);

    const again = await pix.request(`/cob/${txid}`, { method: 'PUT', headers: auth(), body: cobBody() });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(cob);

    const other = await pix.request(`/cob/${txid}`, {
      method: 'PUT',
      headers: auth(),
      body: cobBody({ valor: { original: '151.00' } }),
    });
    expect(other.status).toBe(400);
    expect(other.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(other.body).toMatchObject({ type: `${ERROR}CobOperacaoInvalida`, status: 400 });
    expect(other.body.violacoes[0].propriedade).toBe('txid');
  });

  it('names the field at fault: a bad amount, a key not of this account, a bad txid', async () => {
    const bad = await pix.request(`/cob/${newTxid()}`, {
      method: 'PUT',
      headers: auth(),
      body: cobBody({ valor: { original: '150' } }),
    });
    expect(bad.status).toBe(400);
    expect(bad.body.type).toBe(`${ERROR}CobOperacaoInvalida`);
    expect(bad.body.violacoes.map((v: { propriedade: string }) => v.propriedade)).toEqual([
      'cob.valor.original',
    ]);

    const key = await pix.request(`/cob/${newTxid()}`, {
      method: 'PUT',
      headers: auth(),
      body: cobBody({ chave: 'someone-else@example.com' }),
    });
    expect(key.status).toBe(400);
    expect(key.body.violacoes[0].propriedade).toBe('cob.chave');

    const txid = await pix.request('/cob/short', { method: 'PUT', headers: auth(), body: cobBody() });
    expect(txid.status).toBe(400);
    expect(txid.body.violacoes[0].propriedade).toBe('txid');
  });

  it('answers CobNaoEncontrado for an unknown txid', async () => {
    const answer = await pix.request(`/cob/${newTxid()}`, { headers: auth() });
    expect(answer.status).toBe(404);
    expect(answer.body.type).toBe(`${ERROR}CobNaoEncontrado`);
  });
});

describe('paying a cob', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver(pix);
  });
  afterAll(async () => {
    await receiver?.close();
  });
  beforeEach(async () => {
    receiver.received.length = 0;
    receiver.answer = () => 200;
    const hook = await pix.request(`/webhook/${encodeURIComponent(pix.pixKey)}`, {
      method: 'PUT',
      headers: auth(),
      body: { webhookUrl: receiver.url },
    });
    expect(hook.status).toBe(200);
  });

  it('the holder pays: the cob is CONCLUIDA with its Pix, and the webhook posts it over mutual TLS', async () => {
    const { txid } = await createCob();
    const paid = await pix.pay(txid, { payer: 'holder' });
    expect(paid.endToEndId).toMatch(/^E\d{8}\d{12}[a-zA-Z0-9]{11}$/);
    expect(paid).toMatchObject({ txid, valor: '150.00', chave: pix.pixKey, pagador: HOLDER });

    const cob = await pix.request(`/cob/${txid}`, { headers: auth() });
    expect(cob.body.status).toBe('CONCLUIDA');
    expect(cob.body.pix).toEqual([paid]);

    const got = await waitUntil(
      () => receiver.received,
      (r) => r.length > 0,
    );
    expect(got[0]?.body).toEqual({ pix: [paid] });
    expect(got[0]?.clientCn).toBe('Sandbox PSP webhooks');
    const again = await pix.request(`/cob/${txid}`, { method: 'PUT', headers: auth(), body: cobBody() });
    expect(again.status).toBe(200);
  });

  it('a third party pays with another CPF and name', async () => {
    const { txid } = await createCob();
    const paid = await pix.pay(txid, { payer: 'third_party', cpf: '98765432100', nome: 'Outra Pessoa' });
    expect(paid.pagador).toEqual({ cpf: '98765432100', nome: 'Outra Pessoa' });
    const unnamed = await pix.pay((await createCob()).txid, { payer: 'third_party' });
    expect(unnamed.pagador.cpf).toMatch(/^\d{11}$/);
    expect(unnamed.pagador.cpf).not.toBe(HOLDER.cpf);
    const read = await pix.request(`/pix/${paid.endToEndId}`, { headers: auth() });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(paid);
    await expect(pix.pay(txid)).rejects.toThrow(/409/);
  });
});

describe('returns (devolução) and MED', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver(pix);
  });
  afterAll(async () => {
    await receiver?.close();
  });
  beforeEach(async () => {
    receiver.received.length = 0;
    receiver.answer = () => 200;
    await pix.request(`/webhook/${encodeURIComponent(pix.pixKey)}`, {
      method: 'PUT',
      headers: auth(),
      body: { webhookUrl: receiver.url },
    });
  });

  async function paidPix() {
    const { txid } = await createCob();
    const paid = await pix.pay(txid, { payer: 'third_party' });
    await waitUntil(
      () => receiver.received.length,
      (n) => n > 0,
    );
    receiver.received.length = 0;
    return paid.endToEndId as string;
  }
  const putReturn = (e2eId: string, id: string, body: unknown) =>
    pix.request(`/pix/${e2eId}/devolucao/${id}`, { method: 'PUT', headers: auth(), body });

  it('asks a return once per id, bounds its value, settles it DEVOLVIDO and webhooks the Pix', async () => {
    const e2eId = await paidPix();
    const first = await putReturn(e2eId, 'ret1', { valor: '100.00', descricao: 'Depósito de terceiro' });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      id: 'ret1',
      valor: '100.00',
      natureza: 'ORIGINAL',
      status: 'EM_PROCESSAMENTO',
      horario: { solicitacao: expect.any(String) },
    });
    expect(first.body.rtrId).toMatch(/^D\d{8}\d{12}[a-zA-Z0-9]{11}$/);

    const again = await putReturn(e2eId, 'ret1', { valor: '100.00', descricao: 'Depósito de terceiro' });
    expect(again.status).toBe(201);
    expect(again.body.rtrId).toBe(first.body.rtrId);
    const otherBody = await putReturn(e2eId, 'ret1', { valor: '10.00' });
    expect(otherBody.status).toBe(400);
    expect(otherBody.body.violacoes[0].propriedade).toBe('id');

    const tooMuch = await putReturn(e2eId, 'ret2', { valor: '50.01' });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(tooMuch.body).toMatchObject({ type: `${ERROR}PixDevolucaoInvalida`, status: 400 });
    expect(tooMuch.body.violacoes[0].propriedade).toBe('devolucao.valor');

    const settled = await waitUntil(
      () => pix.request(`/pix/${e2eId}/devolucao/ret1`, { headers: auth() }),
      (a) => a.body.status !== 'EM_PROCESSAMENTO',
    );
    expect(settled.body).toMatchObject({ status: 'DEVOLVIDO', horario: { liquidacao: expect.any(String) } });
    const hook = await waitUntil(
      () => receiver.received,
      (r) => r.length > 0,
    );
    expect(hook[0]?.body.pix[0]).toMatchObject({
      endToEndId: e2eId,
      devolucoes: [expect.objectContaining({ id: 'ret1', status: 'DEVOLVIDO' })],
    });
    expect(((await pix.state()).returns as unknown[]).length).toBe(1);
  });

  it('ends a return NAO_REALIZADO with its motivo when failReturnsNext says so, and frees its value', async () => {
    const e2eId = await paidPix();
    await pix.faults({ failReturnsNext: 1, failReturnsReason: 'Conta encerrada' });
    expect((await putReturn(e2eId, 'fails1', { valor: '150.00' })).status).toBe(201);
    const failed = await waitUntil(
      () => pix.request(`/pix/${e2eId}/devolucao/fails1`, { headers: auth() }),
      (a) => a.body.status !== 'EM_PROCESSAMENTO',
    );
    expect(failed.body).toMatchObject({ status: 'NAO_REALIZADO', motivo: 'Conta encerrada' });
    expect(failed.body.horario.liquidacao).toBeUndefined();
    const hook = await waitUntil(
      () => receiver.received,
      (r) => r.length > 0,
    );
    expect(hook[0]?.body.pix[0]?.devolucoes?.[0]).toMatchObject({ id: 'fails1', status: 'NAO_REALIZADO' });
    // A refused return holds nothing back: the whole value can be asked again.
    expect((await putReturn(e2eId, 'fails2', { valor: '150.00' })).status).toBe(201);
  });

  it('answers the spec problems for an unknown Pix or return', async () => {
    const unknown = 'E99999020202611280000abcdefghijk';
    const noPix = await pix.request(`/pix/${unknown}`, { headers: auth() });
    expect(noPix.status).toBe(404);
    expect(noPix.body.type).toBe(`${ERROR}PixNaoEncontrado`);
    const noReturn = await pix.request(`/pix/${unknown}/devolucao/x1`, { headers: auth() });
    expect(noReturn.status).toBe(404);
    expect(noReturn.body.type).toBe(`${ERROR}PixDevolucaoNaoEncontrada`);
  });

  it('a MED return the payer started shows in GET /pix/{e2eid} and is webhooked when final', async () => {
    const e2eId = await paidPix();
    const med = await pix.med(e2eId, { natureza: 'MED_FRAUDE', valor: '40.00' });
    expect(med).toMatchObject({ natureza: 'MED_FRAUDE', valor: '40.00', status: 'EM_PROCESSAMENTO' });
    const read = await waitUntil(
      () => pix.request(`/pix/${e2eId}`, { headers: auth() }),
      (a) => a.body.devolucoes?.[0]?.status === 'DEVOLVIDO',
    );
    expect(read.body.devolucoes).toEqual([
      expect.objectContaining({ id: med.id, rtrId: med.rtrId, natureza: 'MED_FRAUDE', valor: '40.00' }),
    ]);
    const hook = await waitUntil(
      () => receiver.received,
      (r) => r.length > 0,
    );
    expect(hook[0]?.body.pix[0]?.devolucoes?.[0]).toMatchObject({
      id: med.id,
      natureza: 'MED_FRAUDE',
      status: 'DEVOLVIDO',
    });
    // What is left can still be returned, and no more.
    expect((await putReturn(e2eId, 'rest', { valor: '110.01' })).status).toBe(400);
    expect((await putReturn(e2eId, 'rest', { valor: '110.00' })).status).toBe(201);
  });

  it('lists received Pix between two instants, by txid and payer CPF', async () => {
    const e2eId = await paidPix();
    const from = new Date(Date.now() - 60_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    const paid = (await pix.request(`/pix/${e2eId}`, { headers: auth() })).body;
    const list = await pix.request(
      `/pix?inicio=${from}&fim=${to}&cpf=${paid.pagador.cpf}&paginacao.itensPorPagina=10`,
      { headers: auth() },
    );
    expect(list.status).toBe(200);
    expect(list.body.pix).toEqual([paid]);
    expect(list.body.parametros.paginacao).toEqual({
      paginaAtual: 0,
      itensPorPagina: 10,
      quantidadeDePaginas: 1,
      quantidadeTotalDeItens: 1,
    });
    const backwards = await pix.request(`/pix?inicio=${to}&fim=${from}`, { headers: auth() });
    expect(backwards.status).toBe(400);
    expect(backwards.body.type).toBe(`${ERROR}PixConsultaInvalida`);
    expect(backwards.body.violacoes[0].propriedade).toBe('fim');
  });
});

describe('webhook configuration', () => {
  it('sets, reads and removes the webhook of one of the account keys, refusing others', async () => {
    const key = encodeURIComponent(pix.pixKey);
    const url = 'https://127.0.0.1:1/hooks';
    expect(
      (await pix.request(`/webhook/${key}`, { method: 'PUT', headers: auth(), body: { webhookUrl: url } }))
        .status,
    ).toBe(200);
    const read = await pix.request(`/webhook/${key}`, { headers: auth() });
    expect(read.body).toMatchObject({ webhookUrl: url, chave: pix.pixKey, criacao: expect.any(String) });
    expect((await pix.request(`/webhook/${key}`, { method: 'DELETE', headers: auth() })).status).toBe(204);
    const gone = await pix.request(`/webhook/${key}`, { headers: auth() });
    expect(gone.status).toBe(404);
    expect(gone.body.type).toBe(`${ERROR}WebhookNaoEncontrado`);

    const other = await pix.request('/webhook/someone-else', {
      method: 'PUT',
      headers: auth(),
      body: { webhookUrl: url },
    });
    expect(other.status).toBe(400);
    expect(other.body).toMatchObject({ type: `${ERROR}WebhookOperacaoInvalida` });
    expect(other.body.violacoes[0].propriedade).toBe('chave');
    const plain = await pix.request(`/webhook/${key}`, {
      method: 'PUT',
      headers: auth(),
      body: { webhookUrl: 'http://127.0.0.1:1/hooks' },
    });
    expect(plain.status).toBe(400);
    expect(plain.body.violacoes[0].propriedade).toBe('webhook.webhookUrl');
  });
});

describe('faults', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver(pix);
  });
  afterAll(async () => {
    await receiver?.close();
  });
  beforeEach(async () => {
    receiver.received.length = 0;
    receiver.answer = () => 200;
    await pix.request(`/webhook/${encodeURIComponent(pix.pixKey)}`, {
      method: 'PUT',
      headers: auth(),
      body: { webhookUrl: receiver.url },
    });
  });

  it('down: every call, the token too, is a 503 ServicoIndisponivel with Retry-After', async () => {
    await pix.faults({ down: true, retryAfterSeconds: 7 });
    const cob = await pix.request(`/cob/${newTxid()}`, { headers: auth() });
    expect(cob.status).toBe(503);
    expect(cob.headers['retry-after']).toBe('7');
    expect(cob.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(cob.body).toMatchObject({ type: `${ERROR}ServicoIndisponivel`, status: 503 });
    await expect(pix.token()).rejects.toThrow(/503/);
    await pix.faults({ down: false });
    expect((await pix.request(`/cob/${newTxid()}`, { headers: auth() })).status).toBe(404);
  });

  it('failNext: the next calls answer 503 without acting', async () => {
    await pix.faults({ failNext: { putCob: 1 } });
    const txid = newTxid();
    const failed = await pix.request(`/cob/${txid}`, { method: 'PUT', headers: auth(), body: cobBody() });
    expect(failed.status).toBe(503);
    expect((await pix.request(`/cob/${txid}`, { headers: auth() })).status).toBe(404);
    expect(
      (await pix.request(`/cob/${txid}`, { method: 'PUT', headers: auth(), body: cobBody() })).status,
    ).toBe(201);
  });

  it('actThenFail error: the cob is made, then the answer is a 500', async () => {
    await pix.faults({ actThenFail: { putCob: { mode: 'error', count: 1 } } });
    const txid = newTxid();
    const failed = await pix.request(`/cob/${txid}`, { method: 'PUT', headers: auth(), body: cobBody() });
    expect(failed.status).toBe(500);
    expect(failed.body.type).toBe(`${ERROR}ErroInternoDoServidor`);
    const read = await pix.request(`/cob/${txid}`, { headers: auth() });
    expect(read.status).toBe(200);
    expect(read.body.status).toBe('ATIVA');
  });

  it('actThenFail hang: the return is asked and the caller never hears back', async () => {
    const { txid } = await createCob();
    const e2eId = (await pix.pay(txid)).endToEndId;
    await pix.faults({ actThenFail: { putDevolucao: { mode: 'hang', count: 1 } } });
    await expect(
      pix.request(`/pix/${e2eId}/devolucao/hang1`, {
        method: 'PUT',
        headers: auth(),
        body: { valor: '1.00' },
        timeoutMs: 500,
      }),
    ).rejects.toThrow(/timed out/);
    expect((await pix.request(`/pix/${e2eId}/devolucao/hang1`, { headers: auth() })).status).toBe(200);
  });

  it('webhooks: dropNext loses a post, duplicate sends it twice, a failing receiver is retried', async () => {
    await pix.faults({ webhooks: { dropNext: 1 } });
    await pix.pay((await createCob()).txid);
    const dropped = await pix.state();
    expect(dropped.deliveries.map((d: { status: string }) => d.status)).toEqual(['dropped']);

    await pix.faults({ webhooks: { duplicate: 1 } });
    const twice = await pix.pay((await createCob()).txid);
    await waitUntil(
      () => receiver.received.length,
      (n) => n === 2,
    );
    expect(receiver.received.map((r) => r.body.pix[0]?.endToEndId)).toEqual([
      twice.endToEndId,
      twice.endToEndId,
    ]);

    await pix.faults({ webhooks: { duplicate: 0 } });
    receiver.received.length = 0;
    let calls = 0;
    receiver.answer = () => (++calls <= 2 ? 503 : 200);
    const retried = await pix.pay((await createCob()).txid);
    await waitUntil(
      () => receiver.received.length,
      (n) => n === 3,
    );
    const state = await pix.state();
    const last = state.deliveries.find(
      (d: { body: { pix: { endToEndId: string }[] } }) => d.body.pix[0]?.endToEndId === retried.endToEndId,
    );
    expect(last).toMatchObject({ status: 'delivered', attempts: 3, answers: [503, 503, 200] });
  });
});

describe('the PSP as a webhook client', () => {
  it("posts only to a listener whose certificate pixflow's CA signed", async () => {
    // A listener with a certificate of another CA (the PSP's own): the PSP does not trust it.
    const impostor = await startReceiver(pix, {
      cert: readFileSync(pix.pki.pspServer.cert, 'utf8'),
      key: readFileSync(pix.pki.pspServer.key, 'utf8'),
    });
    try {
      await pix.request(`/webhook/${encodeURIComponent(pix.pixKey)}`, {
        method: 'PUT',
        headers: auth(),
        body: { webhookUrl: impostor.url },
      });
      await pix.pay((await createCob()).txid);
      const state = await waitUntil(
        () => pix.state(),
        (s) => s.deliveries[0]?.status === 'gave_up',
      );
      expect(state.deliveries[0].answers).toHaveLength(4);
      for (const answer of state.deliveries[0].answers) expect(answer).toMatch(/certificate/i);
      expect(impostor.received).toEqual([]);
    } finally {
      await impostor.close();
    }
  });
});

describe('expiry', () => {
  it('a cob past its expiracao stays ATIVA but can no longer be paid', async () => {
    const { txid, cob } = await createCob({ calendario: { expiracao: 1 } });
    const expiresAt = Date.parse(cob.calendario.criacao) + 1000;
    await waitUntil(
      () => Date.now(),
      (now) => now > expiresAt,
    );
    await expect(pix.pay(txid)).rejects.toThrow(/409.*expired/);
    expect((await pix.request(`/cob/${txid}`, { headers: auth() })).body.status).toBe('ATIVA');
  });
});
