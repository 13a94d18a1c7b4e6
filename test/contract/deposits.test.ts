import { parseStaticPix } from '@pix.js/qrcode';
import { isValidStaticQrCode } from '@pix.js/validator';
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { centavosToDecimal } from '../../common/money';
import { brCodeReference } from '../../sandbox/brcode';
import {
  BadRequestError,
  DuplicateTransactionError,
  depositCreateResultSchema,
  genericErrorSchema,
  inquiryRecordSchema,
  NotFoundError,
  notificationMessageSchema,
  valueToCentavos,
} from '../helpers/identity-payments-wire';
import { clientFor, control, payee, startProviderSandbox, startReceiver, waitFor } from './support';

type Sandbox = Awaited<ReturnType<typeof startProviderSandbox>>;
let sb: Sandbox;
let client: ReturnType<typeof clientFor>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let clock = Date.now();

beforeAll(async () => {
  sb = await startProviderSandbox({ now: () => clock, depositExpiryMs: 60_000 });
  client = clientFor(sb.url);
  receiver = await startReceiver();
  await control(sb.url, '/sandbox/notifications', {
    url: `${receiver.url}/deposit`,
    partnerId: 'p-1',
    points: ['deposit'],
  });
});
afterAll(async () => {
  await sb.close();
  await receiver.close();
});

/** CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF), written here so the check is independent of both libraries. */
function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

function assertValidBrCode(payload: string, cents: number) {
  expect(payload.startsWith('000201')).toBe(true);
  expect(payload.slice(-8, -4)).toBe('6304');
  expect(payload.slice(-4)).toBe(crc16(payload.slice(0, -4)));
  const amount = centavosToDecimal(cents);
  expect(payload).toContain(`54${String(amount.length).padStart(2, '0')}${amount}`);
  // @pix.js/validator's static schema caps `value` at 1..13 (it confuses the amount with its text length),
  // so for other amounts we require that `value` is the only issue it reports.
  try {
    expect(isValidStaticQrCode(payload, { throwError: true })).toBe(true);
    expect(cents >= 100 && cents <= 1300).toBe(true);
  } catch (err) {
    const issues = (err as { issues?: { path: (string | number)[] }[] }).issues;
    expect(issues, String(err)).toBeDefined();
    expect(issues!.filter((i) => i.path[0] !== 'value')).toEqual([]);
    expect(cents >= 100 && cents <= 1300).toBe(false);
  }
}

function decodeQr(dataUrl: string): string | undefined {
  expect(dataUrl).toMatch(/^data:image\/png;base64,/);
  const png = PNG.sync.read(Buffer.from(dataUrl.split(',')[1]!, 'base64'));
  return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data;
}

describe('deposits', () => {
  it.each([
    ['1', 1],
    ['42', 1250],
    ['1234567890123456789012345', 10_050],
    ['123456789012345678901234567890123', 123_456_789],
  ])(
    'txid %s: a real BR Code that an independent parser accepts and a QR that decodes to it',
    async (txid, cents) => {
      const created = await client.createDeposit({
        client: {
          ...payee,
          phone: '+5511987654321',
          birthday: '1990-01-02',
          bankispb: '00000000',
          bankbranch: '0001',
          bankaccount: '12345',
        },
        amountCentavos: cents,
        txid,
      });
      expect(depositCreateResultSchema.safeParse(created).success).toBe(true);
      expect(created).toMatchObject({
        status: 'processing',
        responseStatus: 201,
        e2eId: '',
        txid,
        amountCentavos: cents,
        merchant: 'sandbox-merchant',
      });
      expect(Date.parse(created.expiry) - clock).toBe(60_000);
      assertValidBrCode(created.pixPayload, cents);
      const parsed = parseStaticPix(created.pixPayload);
      expect(parsed.merchantAccountInfo.gui).toBe('br.gov.bcb.pix');
      expect(parsed.merchantAccountInfo.key).toMatch(/^[0-9a-f-]{36}$/);
      expect(parsed.additionalData?.txId).toBe(brCodeReference(txid));
      expect(valueToCentavos(parsed.value!)).toBe(cents);
      expect(parsed.merchantName).toBe('SANDBOX MERCHANT');
      expect(parsed.merchantCity).toBe('SAO PAULO');
      expect(parsed.countryCode).toBe('BR');
      expect(parsed.transactionCurrency).toBe('986');
      expect(decodeQr(created.pixImage ?? '')).toBe(created.pixPayload);
    },
  );

  it('is idempotent for an identical body and 409 for a different one', async () => {
    const input = { client: payee, amountCentavos: 500, txid: '777' };
    const a = await client.createDeposit(input);
    const b = await client.createDeposit(input);
    expect(b).toEqual(a);
    await expect(client.createDeposit({ ...input, amountCentavos: 501 })).rejects.toBeInstanceOf(
      DuplicateTransactionError,
    );
  });

  it('rejects bad txids and bad values with a 400 in the contract-like shape', async () => {
    for (const txid of ['12a', '1'.repeat(34), '']) {
      const res = await fetch(`${sb.url}/v2/deposit/create`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-api-key': 'Api-Key sandbox-api-key' },
        body: JSON.stringify({ merchant: 'sandbox-merchant', client: payee, value: 1, txid }),
      });
      expect(res.status).toBe(400);
      expect(genericErrorSchema.safeParse(await res.json()).success).toBe(true);
    }
    const res = await fetch(`${sb.url}/v2/deposit/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-api-key': 'Api-Key sandbox-api-key' },
      body: JSON.stringify({ merchant: 'sandbox-merchant', client: payee, value: 1.005, txid: '9' }),
    });
    expect(res.status).toBe(400);
    await expect(
      client.createDeposit({ client: payee, amountCentavos: 100, txid: '1'.repeat(34) }),
    ).rejects.toBeInstanceOf(BadRequestError);
    await expect(
      client.createDeposit({ merchant: 'other', client: payee, amountCentavos: 100, txid: '5' }),
    ).rejects.toBeInstanceOf(BadRequestError);
  });

  it('inquiry: processing, then completed with payer and payedAt after payment; 404 when unknown', async () => {
    receiver.clear();
    await client.createDeposit({ client: payee, amountCentavos: 2500, txid: '4242' });
    const before = await client.getDeposit('4242');
    expect(inquiryRecordSchema.safeParse(before).success).toBe(true);
    expect(before).toMatchObject({
      status: 'processing',
      payedAt: '',
      paidAt: '',
      e2eId: '',
      amountCentavos: 2500,
      type_transaction: 'deposit',
    });
    const paid = await control(sb.url, '/sandbox/deposits/4242/pay', {
      payerName: 'Bruno Payer',
      payerCpf: '53868402586',
    });
    expect(paid.status).toBe(200);
    const after = await client.getDeposit('4242');
    expect(after).toMatchObject({ status: 'completed', name_payer: 'Bruno Payer', cpf_payer: '53868402586' });
    expect(after.e2eId).toMatch(/^E\d{8}\d{12}[0-9A-Z]{11}$/);
    expect(after.paidAt).toBe(after.payedAt);
    expect((await control(sb.url, '/sandbox/deposits/4242/pay', {})).status).toBe(409);
    await expect(client.getDeposit('999999')).rejects.toBeInstanceOf(NotFoundError);

    await waitFor(() => receiver.received.filter((r) => r.body.id === '4242').length === 2);
    const msgs = receiver.received.filter((r) => r.body.id === '4242');
    for (const m of msgs) {
      expect(notificationMessageSchema.safeParse(m.body).success).toBe(true);
      expect(m.path).toBe('/deposit');
    }
    expect(msgs.map((m) => m.body)).toEqual([
      { id: '4242', type: 'deposit', action: 'requested', partner_id: 'p-1' },
      { id: '4242', type: 'deposit', action: 'updated', partner_id: 'p-1' },
    ]);
  });

  it("a payment from another CPF carries no payer name unless one is given: never the client's", async () => {
    await client.createDeposit({ client: payee, amountCentavos: 700, txid: '4343' });
    expect((await control(sb.url, '/sandbox/deposits/4343/pay', { payerCpf: '53868402586' })).status).toBe(
      200,
    );
    const other = await client.getDeposit('4343');
    expect(other.cpf_payer).toBe('53868402586');
    expect(other.name_payer ?? '').toBe('');
    await client.createDeposit({ client: payee, amountCentavos: 700, txid: '4344' });
    expect((await control(sb.url, '/sandbox/deposits/4344/pay', {})).status).toBe(200);
    expect(await client.getDeposit('4344')).toMatchObject({ name_payer: payee.name, cpf_payer: payee.cpf });
  });

  it('an unpaid deposit expires and can no longer be paid', async () => {
    await client.createDeposit({ client: payee, amountCentavos: 100, txid: '31337' });
    clock += 60_001;
    expect((await client.getDeposit('31337')).status).toBe('expired');
    expect((await control(sb.url, '/sandbox/deposits/31337/pay', {})).status).toBe(409);
  });

  it('auto mode pays deposits after N ms', async () => {
    await control(sb.url, '/sandbox/auto', { payDepositsAfterMs: 20 });
    await client.createDeposit({ client: payee, amountCentavos: 100, txid: '8080' });
    let status = '';
    await waitFor(() => {
      void client.getDeposit('8080').then((t) => {
        status = t.status ?? '';
      });
      return status === 'completed';
    });
    await control(sb.url, '/sandbox/auto', { payDepositsAfterMs: null });
    expect(status).toBe('completed');
  });
});
