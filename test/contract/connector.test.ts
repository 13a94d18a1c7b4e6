import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadRequestError, DuplicateTransactionError, InvalidDocumentError } from '../../connectors/errors';
import { connectorFor } from '../helpers/sandbox-client';
import { control, startProviderSandbox } from './support';

// The identity-payments connector against the sandbox over HTTP, in both of the sandbox's
// dialects: every operation pixflow asks of it answers in pixflow's types, whichever side the
// provider takes of what its document leaves open, and the connector learns that side.

const CPF = '63401825771';
const payer = { externalId: 'ext-1', cpf: CPF, email: 'ana@example.com', name: 'Ana Souza' };

for (const dialect of ['doc', 'other'] as const) {
  describe(`the connector, sandbox in its ${dialect} dialect`, () => {
    let sandbox: Awaited<ReturnType<typeof startProviderSandbox>>;
    let n = 0;
    const id = () => `${dialect === 'doc' ? 1 : 2}${Date.now()}${++n}`;

    beforeAll(async () => {
      sandbox = await startProviderSandbox({ dialect: { default: dialect, points: {} } });
    });
    afterAll(async () => {
      await sandbox?.close();
    });

    it('reads KYC facts, and a refused document is the error kind, not a person', async () => {
      const connector = connectorFor(sandbox.url);
      const facts = await connector.kyc(CPF, 'plan_standard');
      expect(facts).toMatchObject({
        status: 'regular',
        under18: false,
        deceased: false,
        pep: false,
        restricted: false,
      });
      expect(facts.record).toHaveProperty('cpf', CPF);
      await expect(connector.kyc('12345678900', 'plan_basic')).rejects.toBeInstanceOf(InvalidDocumentError);
    });

    it('starts a liveness session, learning the id field and the auth form the provider takes', async () => {
      const connector = connectorFor(sandbox.url);
      const session = await connector.startLiveness(CPF, {
        correlationId: `corr-${id()}`,
        plan: 'plan_standard',
        event: 'signup',
        redirectUrl: '/done',
      });
      expect(session).toMatchObject({ type: 'onboarding', status: 'requested' });
      expect(session.url).toMatch(/^http/);
      const learnt = connector.learnt();
      expect(learnt.livenessIdField).toBe(dialect === 'doc' ? 'correlation_id' : 'correlationId');
      expect(learnt.authHeader.liveness).toBe(dialect === 'doc' ? 'bare' : 'bearer');
      expect(connector.tokenRequests).toBe(1);
    });

    it('creates a charge, and its inquiry proves the payment with the payer', async () => {
      const connector = connectorFor(sandbox.url);
      const txid = id();
      const charge = await connector.createCharge({
        txid,
        amountCentavos: 1_050,
        payer: { ...payer, bankAccount: { ispb: '00000000', branch: '1', number: '12345' } },
      });
      expect(charge).toMatchObject({ txid, amountCentavos: 1_050 });
      expect(charge.payload.toLowerCase()).toContain('br.gov.bcb.pix');
      expect(await connector.lookUpDeposit(txid)).toMatchObject({ state: 'pending' });
      expect(
        (await control(sandbox.url, `/sandbox/deposits/${txid}/pay`, { payerCpf: '52998224725' })).status,
      ).toBe(200);
      expect(await connector.lookUpDeposit(txid)).toMatchObject({
        state: 'paid',
        amountCentavos: 1_050,
        payerCpf: '52998224725',
      });
      expect(await connector.lookUpDeposit(`9${txid}`)).toEqual({ state: 'not_found' });
    });

    it('sends a payout once: a repeat is the error kind the dialect gives, and the receipt comes in the format it takes', async () => {
      const connector = connectorFor(sandbox.url);
      const transactionId = `wd-${id()}`;
      const payout = {
        transactionId,
        amountCentavos: 2_500,
        pixKey: 'ana@example.com',
        pixType: 'EMAIL' as const,
        payee: payer,
      };
      await connector.sendPayout(payout);
      const repeat = connector.sendPayout(payout);
      await expect(repeat).rejects.toBeInstanceOf(
        dialect === 'doc' ? DuplicateTransactionError : BadRequestError,
      );
      expect(await connector.lookUpPayout(transactionId)).toMatchObject({ state: 'processing' });
      expect((await control(sandbox.url, `/sandbox/withdrawals/${transactionId}/settle`)).status).toBe(200);
      expect(await connector.lookUpPayout(transactionId)).toMatchObject({ state: 'completed' });
      const receipt = await connector.payoutReceipt(transactionId);
      expect(receipt).toMatchObject({ state: 'completed', code: 4 });
      expect(
        Buffer.from(receipt.imageBase64 ?? '', 'base64')
          .subarray(1, 4)
          .toString(),
      ).toBe('PNG');
      expect(await connector.payoutReceipt('no-such-payout')).toMatchObject({ state: 'not_found', code: 0 });
      expect(connector.learnt().receiptFormat).toBe(dialect === 'doc' ? 'json' : 'form');
      expect(await connector.lookUpPayout('no-such-payout')).toEqual({ state: 'not_found' });
    });
  });
}
