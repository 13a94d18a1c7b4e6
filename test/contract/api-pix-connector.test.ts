import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiPixConnector,
  type ApiPixOptions,
  createApiPixConnector,
  readPixNotifications,
  returnIdFor,
  toApiPixTxid,
} from '../../connectors/api-pix';
import { BadRequestError, ProviderUnavailableError, UnauthorizedError } from '../../connectors/errors';
import type { PixNotification } from '../../connectors/types';
import { type ApiPixForTest, startApiPixForTest } from '../helpers/api-pix';
import { waitUntil } from '../helpers/wait';

// The API Pix connector against the PSP's emulation over real HTTPS with mutual TLS: every
// operation pixflow asks answers in pixflow's types, the token is taken once, a return is asked
// once per id, and what goes wrong at the PSP reaches pixflow as the right error kind.

const HOLDER = { externalId: 'user-1', cpf: '73628883504', email: 'bia@example.com', name: 'Bia Lima' };
const OTHER_CPF = '63401825771';

let psp: ApiPixForTest;
const made: ApiPixConnector[] = [];
let n = 0;
const newTxid = () => `${Date.now()}${String(++n).padStart(3, '0')}`;

function optionsFor(overrides: Partial<ApiPixOptions> = {}): ApiPixOptions {
  return {
    baseUrl: psp.url,
    tokenUrl: psp.tokenUrl,
    clientId: psp.clientId,
    clientSecret: psp.clientSecret,
    cert: psp.tls.cert,
    key: psp.tls.key,
    ca: psp.tls.ca,
    pixKey: psp.pixKey,
    timeoutMs: 5_000,
    ...overrides,
  };
}

function connector(overrides: Partial<ApiPixOptions> = {}): ApiPixConnector {
  const c = createApiPixConnector(optionsFor(overrides));
  made.push(c);
  return c;
}

/** A charge of `amountCentavos` made and paid; answers its txid and the Pix's e2e id. */
async function paidDeposit(
  c: ApiPixConnector,
  amountCentavos: number,
  payer?: { cpf: string; nome: string },
) {
  const txid = newTxid();
  await c.createCharge({ txid, amountCentavos, payer: HOLDER });
  const pix = await psp.pay(toApiPixTxid(txid), payer ? { payer: 'third_party', ...payer } : {});
  return { txid, e2eId: pix.endToEndId as string };
}

beforeAll(async () => {
  psp = await startApiPixForTest({ returnSettleMs: 200 });
});
afterEach(async () => {
  await psp.faults({
    down: false,
    failNext: {},
    actThenFail: {},
    latency: { fixedMs: 0 },
    failReturnsNext: 0,
  });
});
afterAll(async () => {
  for (const c of made) c.close();
  await psp?.close();
});

describe('the API Pix connector against the PSP emulation', () => {
  it('creates a charge to the account key and reads it, on one token', async () => {
    const c = connector();
    const txid = newTxid();
    const before = Date.now();
    const charge = await c.createCharge({ txid, amountCentavos: 15_050, payer: HOLDER });
    expect(charge.txid).toBe(txid);
    expect(charge.amountCentavos).toBe(15_050);
    expect(charge.payload).toMatch(/^000201/);
    const expiresIn = Date.parse(charge.expiresAt) - before;
    expect(expiresIn).toBeGreaterThan(1_790_000);
    expect(expiresIn).toBeLessThan(1_810_000);

    expect(await c.lookUpDeposit(txid)).toEqual({ state: 'pending', providerStatus: 'ATIVA' });
    expect(await c.lookUpDeposit(newTxid())).toEqual({ state: 'not_found' });
    expect(c.tokenRequests).toBe(1);

    const state = await psp.state();
    const cob = state.cobs.find((x: { txid: string }) => x.txid === toApiPixTxid(txid));
    expect(cob).toMatchObject({ chave: psp.pixKey, valor: { original: '150.50' } });
    expect(cob.devedor).toMatchObject({ cpf: HOLDER.cpf, nome: HOLDER.name });
  });

  it('logs each call without the secret, the token, the key or the CPF', async () => {
    const lines: string[] = [];
    const logger = {
      debug: (obj: object, msg?: string) => lines.push(JSON.stringify({ obj, msg })),
      warn: (obj: object, msg?: string) => lines.push(JSON.stringify({ obj, msg })),
    };
    const calls: string[] = [];
    const c = connector({
      logger,
      onCall: (call) => calls.push(`${call.endpoint} ${call.status} ${call.outcome}`),
    });
    const txid = newTxid();
    await c.createCharge({ txid, amountCentavos: 100, payer: HOLDER });
    await c.lookUpDeposit(newTxid());
    expect(calls).toEqual(['token 200 ok', 'cob_put 201 ok', 'cob_get 404 error']);
    const tokens = [...psp.sandbox.state.tokens.keys()];
    expect(tokens.length).toBeGreaterThan(0);
    const logged = lines.join('\n');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const secret of [psp.clientSecret, 'PRIVATE KEY', HOLDER.cpf, ...tokens]) {
      expect(logged).not.toContain(secret);
    }
  });

  it('a charge asked again answers the same charge, even once it is paid', async () => {
    const c = connector();
    const txid = newTxid();
    const first = await c.createCharge({ txid, amountCentavos: 1_000, payer: HOLDER });
    expect(await c.createCharge({ txid, amountCentavos: 1_000, payer: HOLDER })).toEqual(first);
    await psp.pay(toApiPixTxid(txid));
    expect(await c.createCharge({ txid, amountCentavos: 1_000, payer: HOLDER })).toEqual(first);
  });

  it('a charge paid by its holder is paid, with the holder as payer', async () => {
    const c = connector();
    const { txid, e2eId } = await paidDeposit(c, 2_500);
    expect(e2eId).toMatch(/^E\d{8}\d{12}[a-zA-Z0-9]{11}$/);
    expect(await c.lookUpDeposit(txid)).toMatchObject({
      state: 'paid',
      e2eId,
      amountCentavos: 2_500,
      payerCpf: HOLDER.cpf,
      payerName: HOLDER.name,
      providerStatus: 'CONCLUIDA',
    });
  });

  it('a charge paid by a third party names that payer', async () => {
    const c = connector();
    const { txid, e2eId } = await paidDeposit(c, 2_500, { cpf: OTHER_CPF, nome: 'Outra Pessoa' });
    const lookup = await c.lookUpDeposit(txid);
    expect(lookup).toMatchObject({ state: 'paid', e2eId, payerCpf: OTHER_CPF, payerName: 'Outra Pessoa' });
  });

  it('a return asked twice under one id is one return, and it settles to returned', async () => {
    const c = connector();
    const { txid, e2eId } = await paidDeposit(c, 4_000);
    const returnId = returnIdFor(txid);
    const request = {
      e2eId,
      returnId,
      amountCentavos: 4_000,
      description: 'Devolução de depósito de terceiro',
    };
    const first = await c.requestReturn(request);
    expect(first).toMatchObject({ returnId, amountCentavos: 4_000, nature: 'original', state: 'processing' });
    expect(first.rtrId).toMatch(/^D[a-zA-Z0-9]{31}$/);
    const again = await c.requestReturn(request);
    expect(again.returnId).toBe(returnId);
    expect(again.rtrId).toBe(first.rtrId);
    // Asked again in other words: the PSP refuses the id as used, and the return it holds is answered.
    const reworded = await c.requestReturn({ ...request, description: 'Devolução' });
    expect(reworded.rtrId).toBe(first.rtrId);
    const refusedAmount = c.requestReturn({ ...request, amountCentavos: 3_999 });
    await expect(refusedAmount).rejects.toBeInstanceOf(BadRequestError);

    const settled = await waitUntil(
      () => c.lookUpReturn(e2eId, returnId),
      (r) => r.state !== 'processing',
      5_000,
    );
    expect(settled).toMatchObject({ state: 'returned', providerStatus: 'DEVOLVIDO', amountCentavos: 4_000 });
    expect(settled.state === 'returned' && settled.returnedAt).toBeTruthy();

    const received = await c.lookUpReceivedPix(e2eId);
    expect(received?.txid).toBe(txid);
    expect(received?.returns).toHaveLength(1);
    expect(await c.lookUpReturn(e2eId, returnIdFor(txid, 2))).toEqual({ state: 'not_found' });
  });

  it('a return the PSP could not make settles failed with its reason', async () => {
    const c = connector();
    const { txid, e2eId } = await paidDeposit(c, 1_200);
    await psp.faults({ failReturnsNext: 1 });
    await c.requestReturn({ e2eId, returnId: returnIdFor(txid), amountCentavos: 1_200 });
    const settled = await waitUntil(
      () => c.lookUpReturn(e2eId, returnIdFor(txid)),
      (r) => r.state !== 'processing',
      5_000,
    );
    expect(settled).toMatchObject({ state: 'failed', providerStatus: 'NAO_REALIZADO' });
    expect(settled.state === 'failed' && settled.reason).toBeTruthy();
  });

  it('a MED return started by the payer side shows in the received Pix', async () => {
    const c = connector();
    const { e2eId } = await paidDeposit(c, 9_000);
    await psp.med(e2eId, { natureza: 'MED_FRAUDE', valor: '30.00' });
    const received = await waitUntil(
      () => c.lookUpReceivedPix(e2eId),
      (p) => (p?.returns ?? []).some((r) => r.state === 'returned'),
      5_000,
    );
    expect(received?.amountCentavos).toBe(9_000);
    expect(received?.returns).toEqual([
      expect.objectContaining({ nature: 'med_fraud', amountCentavos: 3_000, state: 'returned' }),
    ]);
    expect(await c.lookUpReceivedPix('E00000000202611280000aaaaaaaaaaa')).toBeUndefined();
  });

  it('a return over what the Pix still holds is refused, naming the type and the field', async () => {
    const c = connector();
    const { txid, e2eId } = await paidDeposit(c, 1_000);
    const refused = c.requestReturn({ e2eId, returnId: returnIdFor(txid), amountCentavos: 1_001 });
    await expect(refused).rejects.toBeInstanceOf(BadRequestError);
    const err = (await refused.catch((e: unknown) => e)) as BadRequestError;
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('PixDevolucaoInvalida');
    expect((err.body as { type: string }).type).toBe(
      'https://pix.bcb.gov.br/api/v2/error/PixDevolucaoInvalida',
    );
  });

  it('a charge to a key that is not the account is a non-retryable refusal with the spec type', async () => {
    const c = connector({ pixKey: 'someone-else@example.com' });
    const err = (await c
      .createCharge({ txid: newTxid(), amountCentavos: 100, payer: HOLDER })
      .catch((e: unknown) => e)) as BadRequestError;
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.retryable).toBe(false);
    expect(err.status).toBe(400);
    expect(err.message).toContain('CobOperacaoInvalida');
    expect(err.fields.some((f) => f.includes('chave'))).toBe(true);
  });

  it('lists the Pix received in a window, every page', async () => {
    const c = connector();
    const from = new Date(Date.now() - 1_000).toISOString();
    const { txid, e2eId } = await paidDeposit(c, 700);
    const to = new Date(Date.now() + 1_000).toISOString();
    const received = await c.receivedPixBetween(from, to);
    expect(received).toContainEqual(expect.objectContaining({ e2eId, txid, amountCentavos: 700 }));
  });
});

describe('mutual TLS', () => {
  it('a connector is never made without its client certificate', () => {
    const { cert: _cert, ...withoutCert } = optionsFor();
    expect(() => createApiPixConnector(withoutCert as ApiPixOptions)).toThrow(/option cert/);
  });

  it('the PSP refuses a client certificate of another CA before any answer', async () => {
    const c = connector({
      cert: readFileSync(psp.pki.pixflowIngress.cert, 'utf8'),
      key: readFileSync(psp.pki.pixflowIngress.key, 'utf8'),
    });
    const err = (await c.lookUpDeposit(newTxid()).catch((e: unknown) => e)) as ProviderUnavailableError;
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect(err.message).toMatch(/connection failed/);
    expect(c.tokenRequests).toBe(1);
  });

  it('without the PSP CA only the public roots are trusted, which a test CA is not', async () => {
    const { ca: _ca, ...withoutCa } = optionsFor();
    const c = createApiPixConnector(withoutCa);
    made.push(c);
    const err = (await c.lookUpDeposit(newTxid()).catch((e: unknown) => e)) as ProviderUnavailableError;
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect(err.message).toMatch(/connection failed/);
  });

  it('pixflow refuses a PSP whose server certificate its CA did not sign', async () => {
    const c = connector({ ca: psp.webhook.serverCa });
    const err = (await c.lookUpDeposit(newTxid()).catch((e: unknown) => e)) as ProviderUnavailableError;
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect(err.message).toMatch(/connection failed/);
  });
});

describe('what goes wrong at the PSP', () => {
  it('a 503 is retryable PROVIDER_UNAVAILABLE, and the next call works', async () => {
    const c = connector();
    const txid = newTxid();
    await c.createCharge({ txid, amountCentavos: 100, payer: HOLDER });
    await psp.faults({ failNext: { getCob: 1 } });
    const err = (await c.lookUpDeposit(txid).catch((e: unknown) => e)) as ProviderUnavailableError;
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect(err.retryable).toBe(true);
    expect(err.message).toContain('ServicoIndisponivel');
    expect(await c.lookUpDeposit(txid)).toMatchObject({ state: 'pending' });
  });

  it('the PSP down answers retryable errors, the token included', async () => {
    const c = connector();
    await psp.faults({ down: true });
    const err = (await c.lookUpDeposit(newTxid()).catch((e: unknown) => e)) as ProviderUnavailableError;
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect(err.retryable).toBe(true);
  });

  it('no answer within the timeout is retryable PROVIDER_UNAVAILABLE; the charge made is answered next time', async () => {
    const c = connector({ timeoutMs: 500 });
    const txid = newTxid();
    await c.lookUpDeposit(txid); // the token, before the fault
    await psp.faults({ actThenFail: { putCob: { mode: 'timeout', count: 1, delayMs: 2_000 } } });
    const err = (await c
      .createCharge({ txid, amountCentavos: 300, payer: HOLDER })
      .catch((e: unknown) => e)) as ProviderUnavailableError;
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/no answer within 500 ms/);
    const charge = await c.createCharge({ txid, amountCentavos: 300, payer: HOLDER });
    expect(charge).toMatchObject({ txid, amountCentavos: 300 });
  });

  it('a token the PSP no longer takes is replaced once, and the call made again', async () => {
    const c = connector();
    const txid = newTxid();
    await c.createCharge({ txid, amountCentavos: 100, payer: HOLDER });
    expect(c.tokenRequests).toBe(1);
    const revoked = await psp.request('/sandbox/tokens/revoke', { method: 'POST', body: {} });
    expect(revoked.status).toBe(200);
    expect(await c.lookUpDeposit(txid)).toMatchObject({ state: 'pending' });
    expect(c.tokenRequests).toBe(2);
    expect(await c.lookUpDeposit(txid)).toMatchObject({ state: 'pending' });
    expect(c.tokenRequests).toBe(2);
  });

  it('bad client credentials are UNAUTHORIZED and say what to fix', async () => {
    const c = connector({ clientSecret: 'not-the-secret' });
    const err = (await c.lookUpDeposit(newTxid()).catch((e: unknown) => e)) as UnauthorizedError;
    expect(err).toBeInstanceOf(UnauthorizedError);
    expect(err.message).toMatch(/client credentials/);
    expect(err.message).not.toContain('not-the-secret');
  });
});

describe('the Pix webhook', () => {
  let listener: https.Server;
  let hookUrl: string;
  const notices: PixNotification[][] = [];

  beforeAll(async () => {
    listener = https.createServer(
      {
        cert: psp.webhook.serverCert,
        key: psp.webhook.serverKey,
        ca: psp.webhook.clientCa,
        requestCert: true,
        rejectUnauthorized: true,
      },
      (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          if (req.url?.endsWith('/pix'))
            notices.push(readPixNotifications(JSON.parse(Buffer.concat(chunks).toString())));
          res.writeHead(200).end();
        });
      },
    );
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    hookUrl = `https://127.0.0.1:${(listener.address() as AddressInfo).port}/webhooks/api-pix`;
  });
  afterAll(async () => {
    await new Promise((resolve) => listener?.close(resolve));
  });

  it('is registered for the account key, read back and removed', async () => {
    const c = connector();
    await c.registerWebhook(hookUrl);
    expect(await c.webhookUrl()).toBe(hookUrl);
    await c.removeWebhook();
    expect(await c.webhookUrl()).toBeUndefined();
    await c.registerWebhook(hookUrl);
  });

  it('a payment and its settled return reach pixflow as notices with pixflow txid', async () => {
    const c = connector();
    await c.registerWebhook(hookUrl);
    const { txid, e2eId } = await paidDeposit(c, 5_500);
    const paid = await waitUntil(
      () => notices.flat().find((x) => x.e2eId === e2eId),
      (x) => x !== undefined,
      5_000,
    );
    expect(paid).toMatchObject({ e2eId, txid, amountCentavos: 5_500 });

    await c.requestReturn({ e2eId, returnId: returnIdFor(txid), amountCentavos: 5_500 });
    const returned = await waitUntil(
      () => notices.flat().find((x) => x.e2eId === e2eId && x.returns.some((r) => r.state === 'returned')),
      (x) => x !== undefined,
      5_000,
    );
    expect(returned?.returns).toEqual([
      expect.objectContaining({ returnId: returnIdFor(txid), nature: 'original', state: 'returned' }),
    ]);
  });
});
