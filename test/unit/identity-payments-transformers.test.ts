import { describe, expect, it } from 'vitest';
import { UnclassifiedAnswerError } from '../../connectors/errors';
import type { Transaction } from '../../connectors/identity-payments/client';
import {
  toDepositLookup,
  toKycFacts,
  toLivenessCallback,
  toLivenessSession,
  toPayoutAccepted,
  toPayoutLookup,
  toPayoutReceipt,
} from '../../connectors/identity-payments/transformers';
import { livenessAnswerSchema } from '../../connectors/identity-payments/wire/schemas';
import { normaliseWord, STATUS_WORDS, standingOf } from '../../connectors/status-words';

// The identity-payments connector's reading of its provider's answers: both sides of every point
// its document leaves open, and an UnclassifiedAnswerError (never a guess) for what no rule reads.

const tx = (over: Partial<Transaction>): Transaction => ({
  txid: '123',
  e2eId: 'E2E1',
  type_transaction: 'deposit',
  value: 10.5,
  status: 'completed',
  amountCentavos: 1050,
  paidAt: '',
  ...over,
});

describe('status words', () => {
  it('reads every word of the table in any letter case, with or without accents', () => {
    for (const [standing, words] of Object.entries(STATUS_WORDS)) {
      for (const w of words) {
        expect(standingOf(w)).toBe(standing);
        expect(standingOf(w.toUpperCase())).toBe(standing);
      }
    }
    expect(standingOf('Concluída')).toBe('settled');
    expect(standingOf('EM PROCESSAMENTO')).toBe('pending');
    expect(standingOf('Removida-pelo-PSP')).toBe('failed');
    expect(normaliseWord('  Não Pago ')).toBe('nao_pago');
  });

  it('knows no word it was not given', () => {
    for (const w of ['', '   ', 'nao_pago', 'weird', '4', null, undefined, 4])
      expect(standingOf(w)).toBeUndefined();
  });
});

describe('a deposit inquiry', () => {
  it('is paid under every spelling of completed, and the payer comes as digits', () => {
    for (const status of ['completed', 'COMPLETED', 'paid', 'approved', 'CONCLUIDA']) {
      const lookup = toDepositLookup(tx({ status, cpf_payer: '634.018.257-71', name_payer: 'Ana' }));
      expect(lookup).toMatchObject({
        state: 'paid',
        payerCpf: '63401825771',
        payerName: 'Ana',
        amountCentavos: 1050,
      });
    }
  });

  it('reads "", null and absent payer fields alike, as absent', () => {
    for (const empty of ['', null, undefined]) {
      const lookup = toDepositLookup(tx({ cpf_payer: empty, name_payer: empty, e2eId: empty }));
      expect(lookup).toEqual({ state: 'paid', e2eId: '', amountCentavos: 1050, providerStatus: 'completed' });
    }
  });

  it('is pending for a pending or a failed word, and unclassified for a word no table knows', () => {
    expect(toDepositLookup(tx({ status: 'ATIVA' }))).toEqual({ state: 'pending', providerStatus: 'ATIVA' });
    expect(toDepositLookup(tx({ status: 'expired' })).state).toBe('pending');
    for (const status of ['nao_sei', '', null, undefined]) {
      const err = (() => {
        try {
          toDepositLookup(tx({ status }));
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(UnclassifiedAnswerError);
      expect(err).toMatchObject({ op: 'deposit_inquiry', field: 'status', retryable: true });
    }
  });
});

describe('a payout', () => {
  it('completes, fails or stays processing by its inquiry word', () => {
    expect(toPayoutLookup(tx({ status: 'CONCLUIDA', paidAt: '2026-01-01T00:00:00Z' }))).toMatchObject({
      state: 'completed',
      paidAt: '2026-01-01T00:00:00Z',
    });
    expect(toPayoutLookup(tx({ status: 'REJEITADA', reason: null }))).toMatchObject({ state: 'failed' });
    expect(toPayoutLookup(tx({ status: 'processing', e2eId: null }))).toEqual({
      state: 'processing',
      providerStatus: 'processing',
    });
    expect(() => toPayoutLookup(tx({ status: 'limbo' }))).toThrow(UnclassifiedAnswerError);
  });

  it("takes a create answer whatever its body's forms, and one that says it failed is unclassified", () => {
    expect(toPayoutAccepted({ e2eId: null, value: '10.50' })).toEqual({});
    expect(toPayoutAccepted({ e2eId: 'E2E9', responseStatus: 201 })).toEqual({ e2eId: 'E2E9' });
    expect(toPayoutAccepted({ responseStatus: '201' })).toEqual({});
    expect(() => toPayoutAccepted({ responseStatus: 400 })).toThrow(UnclassifiedAnswerError);
  });

  it("reads the receipt's code as a number or text, and says so when it is none of the document's", () => {
    expect(toPayoutReceipt({ status: 4, invoice: 'data:image/png;base64,AAAA', datetimepayed: 't' })).toEqual(
      {
        state: 'completed',
        code: 4,
        imageBase64: 'AAAA',
        paidAt: 't',
      },
    );
    expect(toPayoutReceipt({ status: '4', invoice: null, datetimepayed: null })).toEqual({
      state: 'completed',
      code: 4,
    });
    expect(toPayoutReceipt({ status: '2' })).toEqual({ state: 'failed', code: 2 });
    expect(toPayoutReceipt({ status: 0, invoice: '' })).toEqual({ state: 'not_found', code: 0 });
    for (const status of [null, undefined, ''])
      expect(toPayoutReceipt({ status })).toEqual({ state: 'requested' });
    expect(toPayoutReceipt({ status: 7 })).toEqual({ state: 'unreadable', value: 7 });
    expect(toPayoutReceipt({ status: 'ok' })).toEqual({ state: 'unreadable', value: 'ok' });
  });
});

describe('identity', () => {
  it('reads KYC status words in either case and flags as booleans or text; a missing age flag decides nothing', () => {
    const facts = toKycFacts({ status: 'REGULAR', is_under_18: 'false', date_death: null, is_pep: 'true' });
    expect(facts).toMatchObject({
      status: 'regular',
      under18: false,
      deceased: false,
      pep: true,
      restricted: false,
    });
    expect(toKycFacts({ status: null, is_under_18: false }).status).toBeNull();
    expect(toKycFacts({ status: 'CONSTA_LISTA_RESTRITIVA', is_under_18: false }).restricted).toBe(true);
    expect(() => toKycFacts({ status: 'regular' })).toThrow(UnclassifiedAnswerError);
  });

  it('starts a liveness check from an answer with only its id, status and link (no kyc object, no callbacks)', () => {
    const lean = {
      transaction_id: 't',
      status_verification: 'requested',
      action: { url: 'https://l/x', type: 'onboarding' },
    };
    expect(toLivenessSession(livenessAnswerSchema.parse(lean))).toMatchObject({
      transactionId: 't',
      status: 'requested',
    });
    expect(livenessAnswerSchema.safeParse({ ...lean, action: { type: 'onboarding' } }).success).toBe(false);
  });

  it('reads liveness statuses in any case, and an unknown one is progress that decides nothing', () => {
    const session = {
      correlation_id: 'c',
      transaction_id: 't',
      status_onboarding: 'requested',
      status_verification: 'REQUESTED',
      event: 'e',
      action: { url: 'https://l/x', qrcode: null, type: 'onboarding' as const },
      url_callback: { sent: [] },
      datetime: 'now',
      kyc: {} as never,
    };
    expect(toLivenessSession(session)).toEqual({
      transactionId: 't',
      url: 'https://l/x',
      qrcode: 'https://l/x',
      type: 'onboarding',
      status: 'requested',
    });
    expect(() => toLivenessSession({ ...session, status_verification: 'odd' })).toThrow(
      UnclassifiedAnswerError,
    );
    const cb = {
      transaction_id: 't',
      correlation_id: 'c',
      document: '63401825771',
      status_onboarding: null,
      action_type: 'onboarding' as const,
      event: 'e',
      datetime: 'now',
      partner_id: 'p',
    };
    expect(toLivenessCallback({ ...cb, status_verification: 'Manual_Approved' })).toMatchObject({
      status: 'manual_approved',
      step: '',
    });
    expect(toLivenessCallback({ ...cb, status_verification: 'aprovado_talvez' })).toMatchObject({
      status: 'processing',
      unclassifiedStatus: 'aprovado_talvez',
    });
  });
});
