import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  formatBrasiliaTime,
  maskDocument,
  type ReceiptFields,
  receiptPng,
  receiptSvg,
} from '../../sandbox/receipt-image';
import { clientFor, control, payee, startProviderSandbox } from './support';

// The receipt image of a settled payout: a comprovante a person can read (its SVG source holds
// every field), rendered to a real PNG with the fonts that ship with the package.

const fields: ReceiptFields = {
  amountCentavos: 123_456,
  paidAt: '2026-11-23T12:18:01.000Z',
  payer: { name: 'Sandbox Merchant', document: '11222333000181' },
  payee: { name: 'Ana Costa', document: '63401825771' },
  e2eId: 'E00000000202611231218ABCDEF01234',
  transactionId: 'w-receipt-1',
};

const isDark = (png: PNG, x: number, y: number) => {
  const i = (png.width * y + x) * 4;
  const [r, g, b] = [png.data[i]!, png.data[i + 1]!, png.data[i + 2]!];
  return 0.299 * r + 0.587 * g + 0.114 * b < 128;
};
const rowHasInk = (png: PNG, y: number) => {
  for (let x = 0; x < png.width; x++) if (isDark(png, x, y)) return true;
  return false;
};
/** Runs of rows with dark pixels, separated by blank rows: one per line of text (or the header band). */
function inkBands(png: PNG): { from: number; to: number }[] {
  const bands: { from: number; to: number }[] = [];
  for (let y = 0; y < png.height; y++) {
    if (!rowHasInk(png, y)) continue;
    const last = bands.at(-1);
    if (last && last.to === y - 1) last.to = y;
    else bands.push({ from: y, to: y });
  }
  return bands;
}
const rowsThatDiffer = (a: PNG, b: PNG) => {
  const rows: number[] = [];
  for (let y = 0; y < Math.min(a.height, b.height); y++) {
    const start = y * a.width * 4;
    if (!a.data.subarray(start, start + a.width * 4).equals(b.data.subarray(start, start + b.width * 4))) {
      rows.push(y);
    }
  }
  return rows;
};

describe('the receipt as SVG', () => {
  it('holds every field a comprovante shows, with masked documents and the time in Brasília', () => {
    const svg = receiptSvg(fields);
    for (const text of [
      'Comprovante de transferência Pix',
      'R$ 1.234,56',
      '23/11/2026 às 09:18:01',
      'Sandbox Merchant',
      '**.222.333/0001-**',
      'Ana Costa',
      '***.018.257-**',
      'E00000000202611231218ABCDEF01234',
      'w-receipt-1',
    ]) {
      expect(svg).toContain(text);
    }
    expect(svg).not.toContain('63401825771');
    expect(svg).not.toContain('11222333000181');
  });

  it('escapes names, shortens long ones and wraps long transaction ids', () => {
    const svg = receiptSvg({
      ...fields,
      payee: { name: `<b>Ana & "Bia"</b> ${'x'.repeat(60)}`, document: '63401825771' },
      transactionId: 'a'.repeat(64),
    });
    expect(svg).toContain('&lt;b&gt;Ana &amp; &quot;Bia&quot;&lt;/b&gt;');
    expect(svg).not.toContain('<b>');
    expect(svg).toContain('…');
    expect(svg).not.toContain('a'.repeat(41));
    expect(svg).toContain(`>${'a'.repeat(40)}<`);
    expect(svg).toContain(`>${'a'.repeat(24)}<`);
  });

  it('masks CPFs and CNPJs as receipts print them; shows the Brasília wall clock', () => {
    expect(maskDocument('63401825771')).toBe('***.018.257-**');
    expect(maskDocument('11.222.333/0001-81')).toBe('**.222.333/0001-**');
    expect(formatBrasiliaTime('2026-01-01T02:30:00Z')).toBe('31/12/2025 às 23:30:00');
    expect(() => formatBrasiliaTime('yesterday')).toThrow(RangeError);
  });
});

describe('the receipt as PNG', () => {
  it('is a portrait image whose text is really drawn, line by line', async () => {
    const png = PNG.sync.read(await receiptPng(fields));
    expect(png.width).toBe(520);
    expect(png.height).toBeGreaterThan(png.width);
    expect(png.height).toBeLessThan(1200);
    // The header band, then one band per line of text: the amount, the date, two parties, two ids...
    const bands = inkBands(png);
    expect(bands.length).toBeGreaterThanOrEqual(14);
    // Lines of text, not blocks: no band after the header is taller than the amount's large type.
    for (const b of bands.slice(1)) expect(b.to - b.from).toBeLessThan(40);
  });

  it('differs between two amounts exactly where the amount is written', async () => {
    const a = PNG.sync.read(await receiptPng(fields));
    const b = PNG.sync.read(await receiptPng({ ...fields, amountCentavos: 987_654 }));
    expect(b.height).toBe(a.height);
    const rows = rowsThatDiffer(a, b);
    expect(rows.length).toBeGreaterThan(10);
    const amountBand = inkBands(a)[2]!; // the header, "Valor", then the amount
    for (const y of rows) expect(y >= amountBand.from && y <= amountBand.to).toBe(true);
  });
});

describe('POST /receipts/merchant/cash-out/generate', () => {
  let sb: Awaited<ReturnType<typeof startProviderSandbox>>;
  let client: ReturnType<typeof clientFor>;
  beforeAll(async () => {
    sb = await startProviderSandbox();
    client = clientFor(sb.url);
  });
  afterAll(() => sb.close());

  it('answers a settled payout with its comprovante, the same image on every call', async () => {
    await client.createWithdrawal({
      client: payee,
      pixKey: 'ana@example.com',
      pixType: 'EMAIL',
      amountCentavos: 123_456,
      transactionId: 'w-receipt-http',
    });
    expect((await control(sb.url, '/sandbox/withdrawals/w-receipt-http/settle')).status).toBe(200);
    const receipt = await client.getReceipt('w-receipt-http');
    expect(receipt.status).toBe(4);
    const bytes = Buffer.from(receipt.invoice ?? '', 'base64');
    const png = PNG.sync.read(bytes);
    expect(png.width).toBe(520);
    expect(inkBands(png).length).toBeGreaterThanOrEqual(14);
    const tx = await client.getWithdrawal('w-receipt-http');
    const expected = await receiptPng({
      amountCentavos: 123_456,
      paidAt: receipt.datetimepayed ?? '',
      payer: { name: 'Sandbox Merchant', document: '11222333000181' },
      payee: { name: payee.name, document: payee.cpf },
      e2eId: tx.e2eId ?? '',
      transactionId: 'w-receipt-http',
    });
    expect(bytes.equals(expected)).toBe(true);
    expect((await client.getReceipt('w-receipt-http')).invoice).toBe(receipt.invoice);
  });
});
