import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BadRequestError,
  DuplicateTransactionError,
  inquiryRecordSchema,
  NotFoundError,
  notificationMessageSchema,
  receiptResultSchema,
  withdrawCreateResultSchema,
} from '../helpers/identity-payments-wire';
import {
  clientFor,
  control,
  payee,
  sandboxState,
  startProviderSandbox,
  startReceiver,
  waitFor,
} from './support';

type Sandbox = Awaited<ReturnType<typeof startProviderSandbox>>;
let sb: Sandbox;
let client: ReturnType<typeof clientFor>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  sb = await startProviderSandbox();
  client = clientFor(sb.url);
  receiver = await startReceiver();
  await control(sb.url, '/sandbox/notifications', {
    url: `${receiver.url}/withdraw`,
    partnerId: 'p-2',
    points: ['withdraw'],
  });
});
afterAll(async () => {
  await sb.close();
  await receiver.close();
});

const keys = [
  ['CPF', '63401825771'],
  ['EMAIL', 'ana@example.com'],
  ['PHONE', '+5511987654321'],
  ['EVP', '7d9f0335-8dcc-4054-9bf9-0dbd61d36906'],
  ['ACCOUNT', '63401825771;00000000;0001;1234567;CACC'],
] as const;

describe('withdrawals', () => {
  it.each(keys)('creates a payout to a %s key', async (pixType, pixKey) => {
    const transactionId = `w-${pixType}`;
    const created = await client.createWithdrawal({
      client: payee,
      pixKey,
      pixType,
      amountCentavos: 12_345,
      transactionId,
    });
    expect(withdrawCreateResultSchema.safeParse(created).success).toBe(true);
    expect(created).toMatchObject({
      transactionId,
      status: 'processing',
      amountCentavos: 12_345,
      responseStatus: 201,
    });
    const tx = await client.getWithdrawal(transactionId);
    expect(inquiryRecordSchema.safeParse(tx).success).toBe(true);
    expect(tx).toMatchObject({
      txid: transactionId,
      type_transaction: 'withdraw',
      status: 'processing',
      paidAt: '',
    });
  });

  it('refuses an invalid key for its type with 400', async () => {
    await expect(
      client.createWithdrawal({
        client: payee,
        pixKey: '63401825772',
        pixType: 'CPF',
        amountCentavos: 100,
        transactionId: 'bad-key',
      }),
    ).rejects.toBeInstanceOf(BadRequestError);
    await expect(client.getWithdrawal('bad-key')).rejects.toBeInstanceOf(NotFoundError);
  });

  it.each([
    ['empty', ';60701190;0001;1234567;CACC'],
    ['malformed', '!!garbage!!;60701190;0001;1234567;CACC'],
    ['150-character', `${'a'.repeat(150)};60701190;0001;1234567;CACC`],
  ])('refuses a composite key whose key part is %s with 400', async (kind, pixKey) => {
    const transactionId = `bad-composite-${kind}`;
    await expect(
      client.createWithdrawal({
        client: payee,
        pixKey,
        pixType: 'ACCOUNT',
        amountCentavos: 100,
        transactionId,
      }),
    ).rejects.toBeInstanceOf(BadRequestError);
    await expect(client.getWithdrawal(transactionId)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('rejects a repeated transactionId with 409 and never pays twice', async () => {
    const input = {
      client: payee,
      pixKey: 'ana@example.com',
      pixType: 'EMAIL' as const,
      amountCentavos: 100,
      transactionId: 'dup-1',
    };
    await client.createWithdrawal(input);
    await expect(client.createWithdrawal(input)).rejects.toBeInstanceOf(DuplicateTransactionError);
    const state = await sandboxState(sb.url);
    expect(state.counters.payouts['dup-1']).toBe(1);
    expect(state.counters.duplicateWithdrawalsRejected).toBe(1);
  });

  it('settles: completed inquiry, updated notification, receipt code 4 with a PNG after the lag', async () => {
    receiver.clear();
    await control(sb.url, '/sandbox/faults', { receiptLagCalls: 2 });
    await client.createWithdrawal({
      client: payee,
      pixKey: '+5511987654321',
      pixType: 'PHONE',
      amountCentavos: 990,
      transactionId: 'ok-1',
    });
    const processing = await client.getReceipt('ok-1');
    expect(processing).toMatchObject({ status: 3, invoice: '', datetimepayed: '' });
    expect((await control(sb.url, '/sandbox/withdrawals/ok-1/settle')).status).toBe(200);
    const tx = await client.getWithdrawal('ok-1');
    expect(tx.status).toBe('completed');
    expect(tx.paidAt).not.toBe('');
    await waitFor(() => receiver.received.length === 1);
    expect(notificationMessageSchema.parse(receiver.received[0]!.body)).toEqual({
      id: 'ok-1',
      type: 'withdraw',
      action: 'updated',
      partner_id: 'p-2',
    });
    expect(receiver.received[0]!.path).toBe('/withdraw');

    for (let i = 0; i < 2; i++)
      expect(await client.getReceipt('ok-1')).toMatchObject({ status: 4, invoice: '' });
    const receipt = await client.getReceipt('ok-1');
    expect(receiptResultSchema.safeParse(receipt).success).toBe(true);
    expect(receipt.status).toBe(4);
    const png = PNG.sync.read(Buffer.from(receipt.invoice ?? '', 'base64'));
    expect(png.width).toBeGreaterThan(0);
    expect(receipt.datetimepayed).toBe(tx.paidAt);
    await control(sb.url, '/sandbox/faults', { receiptLagCalls: 0 });
  });

  it('fails with a reason: failed inquiry, receipt code 2, updated notification', async () => {
    receiver.clear();
    await client.createWithdrawal({
      client: payee,
      pixKey: '7d9f0335-8dcc-4054-9bf9-0dbd61d36906',
      amountCentavos: 1,
      transactionId: 'ko-1',
    });
    await control(sb.url, '/sandbox/withdrawals/ko-1/fail', { reason: 'account closed' });
    expect(await client.getWithdrawal('ko-1')).toMatchObject({
      status: 'failed',
      reason: 'account closed',
      paidAt: '',
    });
    expect(await client.getReceipt('ko-1')).toMatchObject({ status: 2, invoice: '' });
    await waitFor(() => receiver.received.length === 1);
    expect(receiver.received[0]!.body).toMatchObject({ id: 'ko-1', action: 'updated' });
    expect((await control(sb.url, '/sandbox/withdrawals/ko-1/settle')).status).toBe(409);
  });

  // JSON, as the dialect's `doc` side wants it (test/sandbox/dialect.test.ts: `receipt.content-type`).
  it('receipt of an unknown transaction is status 0 with an empty invoice; a form-encoded body is a 415', async () => {
    const send = (contentType: string, body: string) =>
      fetch(`${sb.url}/receipts/merchant/cash-out/generate`, {
        method: 'POST',
        headers: { 'content-type': contentType, 'x-service-api-key': 'Api-Key sandbox-api-key' },
        body,
      });
    const res = await send(
      'application/json',
      JSON.stringify({ merchant: 'sandbox-merchant', transactionId: 'nope' }),
    );
    expect(res.status).toBe(200);
    const body = receiptResultSchema.parse(await res.json());
    expect(body).toMatchObject({ transactionId: 'nope', status: 0, invoice: '' });
    expect(
      (await send('application/x-www-form-urlencoded', 'merchant=sandbox-merchant&transactionId=nope'))
        .status,
    ).toBe(415);
  });

  it('auto mode settles withdrawals after N ms', async () => {
    await control(sb.url, '/sandbox/auto', { settleWithdrawalsAfterMs: 10 });
    await client.createWithdrawal({
      client: payee,
      pixKey: '63401825771',
      pixType: 'CPF',
      amountCentavos: 100,
      transactionId: 'auto-1',
    });
    let status = '';
    await waitFor(() => {
      void client.getWithdrawal('auto-1').then((t) => {
        status = t.status ?? '';
      });
      return status === 'completed';
    });
    await control(sb.url, '/sandbox/auto', { settleWithdrawalsAfterMs: null });
    expect(status).toBe('completed');
  });
});
