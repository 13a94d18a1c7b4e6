import { PNG } from 'pngjs';
import QRCode from 'qrcode';

// A QR code as a PNG data URL. The sandbox draws its deposits' QR with it, and the API draws a
// deposit's QR from the payload the flow keeps: the image stays out of workflow history.

// Every deposit draws its QR twice (the sandbox as the provider, the API for its caller), on the
// path the caller waits on, so drawing is kept cheap:
// - the payload goes in as one byte-mode segment: the library's search for the optimal mix of
//   segments takes time and saves at most one QR version for a Pix payload;
// - the modules are painted as whole squares into one byte per pixel, and written as an 8-bit
//   grey PNG with no row filter and the fastest deflate (a QR's rows are repeats or runs of one
//   colour): the library's renderer samples every pixel into RGBA, four times the bytes to pack.

/** Light modules around the code, as the QR standard asks (at least 2 keeps phone cameras happy). */
const MARGIN = 2;
/** The image is at least this wide: a whole number of pixels per module, so edges stay sharp. */
const MIN_WIDTH = 256;
const DARK = 0;
const LIGHT = 255;

export async function qrPng(text: string): Promise<Buffer> {
  const { modules } = QRCode.create([{ data: Buffer.from(text, 'utf8'), mode: 'byte' }], {
    errorCorrectionLevel: 'M',
  });
  const n = modules.size;
  const scale = Math.ceil(MIN_WIDTH / (n + 2 * MARGIN));
  const side = (n + 2 * MARGIN) * scale;
  const pixels = Buffer.alloc(side * side, LIGHT);
  for (let row = 0; row < n; row++) {
    const top = (row + MARGIN) * scale;
    for (let col = 0; col < n; col++) {
      if (!modules.data[row * n + col]) continue;
      const left = (col + MARGIN) * scale;
      for (let y = top; y < top + scale; y++) pixels.fill(DARK, y * side + left, y * side + left + scale);
    }
  }
  const png = new PNG({ width: side, height: side });
  png.data = pixels;
  return PNG.sync.write(png, {
    colorType: 0,
    inputColorType: 0,
    inputHasAlpha: false,
    filterType: 0,
    deflateLevel: 1,
    deflateStrategy: 0,
  });
}

export async function qrDataUrl(text: string): Promise<string> {
  return `data:image/png;base64,${(await qrPng(text)).toString('base64')}`;
}
