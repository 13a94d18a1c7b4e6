import { renderAsync } from '@resvg/resvg-js';
import { escapeHtml } from '../common/html';
import { maskCpf } from '../common/mask';
import { formatBrl } from '../common/money';

// The proof-of-payment image of a settled payout, laid out like a bank's "comprovante": an SVG
// drawn here and rendered to PNG by resvg. The fonts ship with the package (DejaVu from npm):
// a fresh server may have no system fonts at all, and text drawn without a font is left out.

export interface ReceiptParty {
  name: string;
  /** CPF (11 digits) or CNPJ (14 digits); printed masked. */
  document: string;
}

export interface ReceiptFields {
  amountCentavos: number;
  /** ISO 8601 instant the payout completed. */
  paidAt: string;
  payer: ReceiptParty;
  payee: ReceiptParty;
  e2eId: string;
  transactionId: string;
}

const fontFile = (name: string) => require.resolve(`dejavu-fonts-ttf/ttf/${name}`);
const FONT_FILES = ['DejaVuSans.ttf', 'DejaVuSans-Bold.ttf', 'DejaVuSansMono.ttf'].map(fontFile);
const SANS = 'DejaVu Sans';
const MONO = 'DejaVu Sans Mono';

/** ***.456.789-** for a CPF, **.345.678/0001-** for a CNPJ, as receipts print them. */
export function maskDocument(document: string): string {
  const d = document.replace(/\D/g, '');
  if (d.length === 14) return `**.${d.slice(2, 5)}.${d.slice(5, 8)}/${d.slice(8, 12)}-**`;
  return maskCpf(d);
}

const brasilia = new Intl.DateTimeFormat('pt-BR', {
  timeZone: 'America/Sao_Paulo',
  day: '2-digit',
  month: '2-digit',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});

/** "23/11/2026 às 09:18:01": the instant on the wall clock of Brasília, where Pix runs. */
export function formatBrasiliaTime(iso: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) throw new RangeError(`not an ISO 8601 time: ${iso}`);
  const p = Object.fromEntries(brasilia.formatToParts(at).map((x) => [x.type, x.value]));
  return `${p.day}/${p.month}/${p.year} às ${p.hour}:${p.minute}:${p.second}`;
}

const WIDTH = 520;
const MARGIN = 32;
/** Characters of a name that fit beside its label; longer names end in "…". */
const NAME_CHARS = 34;
/** Monospace characters that fit across the receipt at the id font size. */
const ID_CHARS = 40;

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const chunks = (text: string, size: number) => text.match(new RegExp(`.{1,${size}}`, 'gs')) ?? [''];

interface Text {
  x: number;
  y: number;
  text: string;
  size: number;
  weight?: 'bold';
  fill?: string;
  family?: string;
  anchor?: 'end';
}

const textEl = (t: Text) =>
  `<text x="${t.x}" y="${t.y}" font-family="${t.family ?? SANS}" font-size="${t.size}"` +
  `${t.weight ? ` font-weight="${t.weight}"` : ''}${t.anchor ? ` text-anchor="${t.anchor}"` : ''}` +
  ` fill="${t.fill ?? '#1f2933'}">${escapeHtml(t.text)}</text>`;

/** The receipt as SVG source (every value escaped). */
export function receiptSvg(f: ReceiptFields): string {
  const parts: string[] = [];
  const label = '#616e7c';
  const right = WIDTH - MARGIN;
  let y = 0;
  const rule = () => {
    y += 18;
    parts.push(`<line x1="${MARGIN}" y1="${y}" x2="${right}" y2="${y}" stroke="#d9e2ec" stroke-width="1"/>`);
  };
  const heading = (text: string) => {
    y += 34;
    parts.push(textEl({ x: MARGIN, y, text, size: 15, weight: 'bold' }));
  };
  const row = (name: string, value: string) => {
    y += 26;
    parts.push(textEl({ x: MARGIN, y, text: name, size: 13, fill: label }));
    parts.push(textEl({ x: right, y, text: value, size: 14, anchor: 'end' }));
  };
  const idBlock = (name: string, value: string) => {
    y += 26;
    parts.push(textEl({ x: MARGIN, y, text: name, size: 13, fill: label }));
    for (const line of chunks(value, ID_CHARS)) {
      y += 20;
      parts.push(textEl({ x: MARGIN, y, text: line, size: 14, family: MONO }));
    }
  };

  parts.push(`<rect x="0" y="0" width="${WIDTH}" height="64" fill="#0b6e4f"/>`);
  parts.push(
    textEl({
      x: MARGIN,
      y: 40,
      text: 'Comprovante de transferência Pix',
      size: 20,
      weight: 'bold',
      fill: '#fff',
    }),
  );
  y = 104;
  parts.push(textEl({ x: MARGIN, y, text: 'Valor', size: 13, fill: label }));
  y += 38;
  parts.push(textEl({ x: MARGIN, y, text: formatBrl(f.amountCentavos), size: 32, weight: 'bold' }));
  y += 28;
  parts.push(
    textEl({ x: MARGIN, y, text: `${formatBrasiliaTime(f.paidAt)} (horário de Brasília)`, size: 14 }),
  );
  rule();
  heading('Origem');
  row('Nome', clip(f.payer.name, NAME_CHARS));
  row(f.payer.document.replace(/\D/g, '').length === 14 ? 'CNPJ' : 'CPF', maskDocument(f.payer.document));
  rule();
  heading('Destino');
  row('Nome', clip(f.payee.name, NAME_CHARS));
  row(f.payee.document.replace(/\D/g, '').length === 14 ? 'CNPJ' : 'CPF', maskDocument(f.payee.document));
  rule();
  idBlock('ID da transação', f.transactionId);
  idBlock('ID fim a fim (E2E)', f.e2eId);
  rule();
  y += 26;
  parts.push(
    textEl({
      x: MARGIN,
      y,
      text: 'Provedor sandbox: comprovante de teste, sem valor legal.',
      size: 12,
      fill: label,
    }),
  );
  const height = y + MARGIN;

  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}">` +
    `<rect width="100%" height="100%" fill="#fff"/>${parts.join('')}</svg>`
  );
}

/** The receipt as PNG bytes; rendered off the event loop (resvg's own thread pool). */
export async function receiptPng(f: ReceiptFields): Promise<Buffer> {
  const image = await renderAsync(receiptSvg(f), {
    font: { fontFiles: FONT_FILES, loadSystemFonts: false, defaultFontFamily: SANS },
    background: '#fff',
  });
  return image.asPng();
}
