import { encode } from 'fast-png';
import QRCode from 'qrcode';

// A QR code as a PNG data URL. The sandbox draws its deposits' QR with it, and the API draws a
// deposit's QR from the payload the flow keeps: the image stays out of workflow history.

// Every deposit draws its QR twice (the sandbox as the provider, the API for its caller), on the
// path the caller waits on, so drawing is kept cheap:
// - the payload goes in as one byte-mode segment: the library's search for the optimal mix of
//   segments takes time and saves at most one QR version for a Pix payload;
// - the image is one bit per pixel (a QR has two colours), the modules painted as whole squares:
//   an eighth of the bytes of a grey image to deflate, and a PNG of about 1 KB in the answer.

/** Light modules around the code, as the QR standard asks (at least 2 keeps phone cameras happy). */
const MARGIN = 2;
/** The image is at least this wide: a whole number of pixels per module, so edges stay sharp. */
const MIN_WIDTH = 256;

export async function qrPng(text: string): Promise<Buffer> {
  const { modules } = QRCode.create([{ data: Buffer.from(text, 'utf8'), mode: 'byte' }], {
    errorCorrectionLevel: 'M',
  });
  const n = modules.size;
  const scale = Math.ceil(MIN_WIDTH / (n + 2 * MARGIN));
  const side = (n + 2 * MARGIN) * scale;
  const rowBytes = Math.ceil(side / 8);
  // Bit 1 is light: start all light, clear the dark modules' bits.
  const bits = new Uint8Array(rowBytes * side).fill(0xff);
  for (let row = 0; row < n; row++) {
    const top = (row + MARGIN) * scale;
    for (let col = 0; col < n; col++) {
      if (!modules.data[row * n + col]) continue;
      const left = (col + MARGIN) * scale;
      for (let y = top; y < top + scale; y++) {
        const line = y * rowBytes;
        for (let x = left; x < left + scale; x++) {
          const i = line + (x >> 3);
          bits[i] = (bits[i] as number) & ~(0x80 >> (x & 7));
        }
      }
    }
  }
  const png = encode(
    { width: side, height: side, data: bits, depth: 1, channels: 1 },
    { zlib: { level: 1 } },
  );
  return Buffer.from(png.buffer, png.byteOffset, png.byteLength);
}

export async function qrDataUrl(text: string): Promise<string> {
  return `data:image/png;base64,${(await qrPng(text)).toString('base64')}`;
}
