import { describe, expect, it } from 'vitest';
import { createApiPixConnector, readPixNotifications } from '../../connectors/api-pix';
import {
  toCobRequest,
  toDepositCharge,
  toDepositLookup,
  toPixReturn,
  toReceivedPix,
  toReturnRequestBody,
} from '../../connectors/api-pix/transformers';
import { toApiPixTxid } from '../../connectors/api-pix/txid';
import {
  type CobAnswer,
  cobAnswerSchema,
  cobRequestSchema,
  pixSchema,
  returnAnswerSchema,
  returnRequestSchema,
} from '../../connectors/api-pix/wire/schemas';
import { ContractError, UnclassifiedAnswerError } from '../../connectors/errors';

const txid = '1732000000123';
const apiTxid = toApiPixTxid(txid);
const e2eId = 'E12345678202611280312abcdef12345';

const payer = { externalId: 'user-2', cpf: '736.288.835-04', email: 'bia@example.com', name: 'Bia Lima' };

function cob(extra: Record<string, unknown> = {}): CobAnswer {
  return cobAnswerSchema.parse({
    calendario: { criacao: '2026-11-28T03:00:00.000Z', expiracao: 1800 },
    txid: apiTxid,
    revisao: 0,
    loc: { id: 7, location: 'pix.example.com/qr/v2/abc', tipoCob: 'cob' },
    location: 'pix.example.com/qr/v2/abc',
    status: 'ATIVA',
    devedor: { cpf: '73628883504', nome: 'Bia Lima' },
    valor: { original: '150.00' },
    chave: 'pix@example.com',
    pixCopiaECola: '00020101021226...6304ABCD',
    ...extra,
  });
}

const pix = (extra: Record<string, unknown> = {}) =>
  pixSchema.parse({
    endToEndId: e2eId,
    txid: apiTxid,
    valor: '150.00',
    horario: '2026-11-28T03:05:00.000Z',
    ...extra,
  });

const devolucao = (extra: Record<string, unknown> = {}) =>
  returnAnswerSchema.parse({
    id: `${txid}D1`,
    rtrId: 'D12345678202611280310abcde123456',
    valor: '150.00',
    horario: { solicitacao: '2026-11-28T03:10:00.000Z' },
    status: 'EM_PROCESSAMENTO',
    ...extra,
  });

describe('API Pix requests', () => {
  it('a charge goes to the account key with the person as debtor and the amount as decimal text', () => {
    const body = toCobRequest({ payer, amountCentavos: 15005, txid }, 'pix@example.com', 1800);
    expect(cobRequestSchema.parse(body)).toEqual({
      calendario: { expiracao: 1800 },
      devedor: { cpf: '73628883504', nome: 'Bia Lima' },
      valor: { original: '150.05' },
      chave: 'pix@example.com',
    });
  });

  it('a charge whose debtor is not a CPF is refused before it is sent', () => {
    const body = toCobRequest({ payer: { ...payer, cpf: '123' }, amountCentavos: 100, txid }, 'k', 60);
    expect(cobRequestSchema.safeParse(body).success).toBe(false);
  });

  it('a return asked by pixflow is ORIGINAL, in decimal text, with its description cut to 140', () => {
    const body = toReturnRequestBody({
      e2eId,
      returnId: `${txid}D1`,
      amountCentavos: 1,
      description: 'x'.repeat(200),
    });
    expect(returnRequestSchema.parse(body)).toEqual({
      valor: '0.01',
      natureza: 'ORIGINAL',
      descricao: 'x'.repeat(140),
    });
  });
});

describe('API Pix answers in pixflow words', () => {
  it('a created charge: its BR Code, pixflow txid and expiry = creation + expiracao', () => {
    expect(toDepositCharge(cob(), txid)).toEqual({
      txid,
      payload: '00020101021226...6304ABCD',
      expiresAt: '2026-11-28T03:30:00.000Z',
      amountCentavos: 15000,
    });
  });

  it('a created charge without its BR Code breaks the contract', () => {
    expect(() => toDepositCharge(cob({ pixCopiaECola: undefined }), txid)).toThrow(ContractError);
  });

  it('ATIVA is pending; removed charges are pending with their word (never a payment)', () => {
    expect(toDepositLookup(cob())).toEqual({ state: 'pending', providerStatus: 'ATIVA' });
    for (const status of ['REMOVIDA_PELO_USUARIO_RECEBEDOR', 'REMOVIDA_PELO_PSP']) {
      expect(toDepositLookup(cob({ status }))).toEqual({ state: 'pending', providerStatus: status });
    }
  });

  it('CONCLUIDA with its Pix is paid: e2e id, amount, time, and the payer when the PSP names one', () => {
    const paid = cob({
      status: 'CONCLUIDA',
      pix: [pix({ pagador: { cpf: '12345678909', nome: 'Outra Pessoa' } })],
    });
    expect(toDepositLookup(paid)).toEqual({
      state: 'paid',
      e2eId,
      amountCentavos: 15000,
      paidAt: '2026-11-28T03:05:00.000Z',
      payerName: 'Outra Pessoa',
      payerCpf: '12345678909',
      providerStatus: 'CONCLUIDA',
    });
    const anonymous = toDepositLookup(cob({ status: 'CONCLUIDA', pix: [pix()] }));
    expect(anonymous).not.toHaveProperty('payerCpf');
  });

  it('CONCLUIDA without its Pix, or a status the spec does not name, is unclassified', () => {
    expect(() => toDepositLookup(cob({ status: 'CONCLUIDA' }))).toThrow(UnclassifiedAnswerError);
    expect(() => toDepositLookup(cob({ status: 'PAGA' }))).toThrow(UnclassifiedAnswerError);
  });

  it('every nature and status of a return', () => {
    const natures = {
      ORIGINAL: 'original',
      RETIRADA: 'withdrawal',
      MED_OPERACIONAL: 'med_operational',
      MED_FRAUDE: 'med_fraud',
      MED_PIX_AUTOMATICO: 'med_automatic',
    } as const;
    for (const [natureza, nature] of Object.entries(natures)) {
      expect(toPixReturn(devolucao({ natureza })).nature).toBe(nature);
    }
    expect(toPixReturn(devolucao()).nature).toBe('original');
    const states = {
      EM_PROCESSAMENTO: 'processing',
      DEVOLVIDO: 'returned',
      NAO_REALIZADO: 'failed',
    } as const;
    for (const [status, state] of Object.entries(states)) {
      expect(toPixReturn(devolucao({ status })).state).toBe(state);
    }
    expect(() => toPixReturn(devolucao({ status: 'CANCELADO' }))).toThrow(UnclassifiedAnswerError);
    expect(() => toPixReturn(devolucao({ natureza: 'OUTRA' }))).toThrow(UnclassifiedAnswerError);
  });

  it('a settled and a failed return keep their times, rtrId and reason', () => {
    expect(
      toPixReturn(
        devolucao({
          status: 'DEVOLVIDO',
          horario: { solicitacao: '2026-11-28T03:10:00.000Z', liquidacao: '2026-11-28T03:10:01.000Z' },
        }),
      ),
    ).toEqual({
      returnId: `${txid}D1`,
      rtrId: 'D12345678202611280310abcde123456',
      amountCentavos: 15000,
      nature: 'original',
      state: 'returned',
      requestedAt: '2026-11-28T03:10:00.000Z',
      returnedAt: '2026-11-28T03:10:01.000Z',
      providerStatus: 'DEVOLVIDO',
    });
    expect(toPixReturn(devolucao({ status: 'NAO_REALIZADO', motivo: 'Conta encerrada' })).reason).toBe(
      'Conta encerrada',
    );
  });

  it('a received Pix: pixflow txid mapped back, its returns, another system txid left out', () => {
    const received = toReceivedPix(
      pix({ devolucoes: [devolucao({ natureza: 'MED_FRAUDE', valor: '50.00' })] }),
    );
    expect(received).toMatchObject({
      e2eId,
      txid,
      amountCentavos: 15000,
      paidAt: '2026-11-28T03:05:00.000Z',
    });
    expect(received.returns).toEqual([
      expect.objectContaining({ nature: 'med_fraud', amountCentavos: 5000 }),
    ]);
    expect(toReceivedPix(pix({ txid: '655dfdb1a4514b8fbb58254b958913fb' }))).not.toHaveProperty('txid');
  });
});

describe('readPixNotifications', () => {
  it('reads every Pix of the callback, returns included', () => {
    const body = {
      pix: [
        { endToEndId: e2eId, txid: apiTxid, valor: '150.00', horario: '2026-11-28T03:05:00Z' },
        {
          endToEndId: 'E87654321202611280312dfghi123456',
          txid: apiTxid,
          valor: '10.00',
          horario: '2026-11-28T03:05:00Z',
          devolucoes: [
            { id: 'm1', rtrId: 'D1', valor: '10.00', natureza: 'MED_FRAUDE', status: 'DEVOLVIDO' },
          ],
        },
      ],
    };
    expect(readPixNotifications(body)).toEqual([
      { e2eId, txid, amountCentavos: 15000, returns: [] },
      {
        e2eId: 'E87654321202611280312dfghi123456',
        txid,
        amountCentavos: 1000,
        returns: [expect.objectContaining({ returnId: 'm1', nature: 'med_fraud', state: 'returned' })],
      },
    ]);
  });

  it('reads the lone devolução object of the spec example as one return', () => {
    const [n] = readPixNotifications({
      pix: [
        {
          endToEndId: e2eId,
          valor: '110.00',
          horario: '2020-09-09T20:15:00.358Z',
          devolucoes: {
            id: '123ABC',
            rtrId: 'D12345678202009091221abcdf098765',
            valor: '10.00',
            status: 'EM_PROCESSAMENTO',
          },
        },
      ],
    });
    expect(n?.returns).toHaveLength(1);
    expect(n).not.toHaveProperty('txid');
  });

  it('leaves out a return whose words are unknown, keeping the notice', () => {
    const [n] = readPixNotifications({
      pix: [
        {
          endToEndId: e2eId,
          valor: '1.00',
          horario: 'x',
          devolucoes: [{ id: '1', valor: '1.00', status: 'NOVO' }],
        },
      ],
    });
    expect(n?.returns).toEqual([]);
  });

  it('throws naming the field on a body that is not the spec shape', () => {
    expect(() => readPixNotifications({ pix: [{ endToEndId: e2eId, horario: 'x' }] })).toThrow(
      /pix\.0\.valor/,
    );
    expect(() => readPixNotifications({ cobs: [] })).toThrow(/pix/);
    expect(() => readPixNotifications('nope')).toThrow(TypeError);
  });
});

describe('createApiPixConnector options', () => {
  const pem = (label: string) => `-----BEGIN ${label}-----\nAAAA\n-----END ${label}-----\n`;
  const base = {
    baseUrl: 'https://127.0.0.1:1/api/v2',
    clientId: 'id',
    clientSecret: 'very-secret',
    cert: pem('CERTIFICATE'),
    key: pem('PRIVATE KEY'),
    ca: pem('CERTIFICATE'),
    pixKey: 'pix@example.com',
  };

  it('names itself api-pix unless told, and declares collect and return', () => {
    const connector = createApiPixConnector(base);
    expect(connector.name).toBe('api-pix');
    expect(connector.capabilities).toEqual(['collect', 'return']);
    expect(createApiPixConnector({ ...base, name: 'api-pix-b' }).name).toBe('api-pix-b');
  });

  it('refuses to be made without its client certificate, naming the option and not the secret', () => {
    expect(() => createApiPixConnector({ ...base, cert: '' })).toThrow(/option cert/);
    expect(() => createApiPixConnector({ ...base, baseUrl: 'http://127.0.0.1/api' })).toThrow(
      /option baseUrl/,
    );
    const thrown = (() => {
      try {
        createApiPixConnector({ ...base, key: 'very-secret-key' });
      } catch (err) {
        return err as Error;
      }
      return undefined;
    })();
    expect(thrown?.message).toMatch(/option key/);
    expect(thrown?.message).not.toContain('very-secret');
  });
});
