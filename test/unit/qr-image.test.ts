import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { qrDataUrl, qrPng } from '../../common/qr-image';
import { buildBrCode } from '../../sandbox/brcode';

// The QR images the API and the sandbox draw: a reader gets back exactly the text drawn, from
// a PNG any decoder opens, at least 256 pixels wide with whole pixels per module.

function read(png: Buffer) {
  const image = PNG.sync.read(png);
  return { image, text: jsQR(new Uint8ClampedArray(image.data), image.width, image.height)?.data };
}

describe('qr image', () => {
  it.each([
    ['a Pix BR Code', buildBrCode({ txid: 'a'.repeat(25), amountCentavos: 123_45, merchantName: 'Loja' })],
    ['a short text', 'pixflow'],
    ['a liveness link', `https://liveness.example.com/session/${'x'.repeat(120)}?lang=pt-BR`],
    ['accented text', 'São Paulo — Conceição'],
  ])('draws %s that reads back as drawn', async (_what, text) => {
    const { image, text: got } = read(await qrPng(text));
    expect(got).toBe(text);
    expect(image.width).toBe(image.height);
    expect(image.width).toBeGreaterThanOrEqual(256);
    // Black and white only: every pixel is one or the other.
    const grey = new Set<number>();
    for (let i = 0; i < image.data.length; i += 4) grey.add(image.data[i] as number);
    expect([...grey].sort((a, b) => a - b)).toEqual([0, 255]);
  });

  it('keeps a light margin around the code', async () => {
    const { image } = read(await qrPng('margin'));
    const row0 = image.data.subarray(0, image.width * 4);
    expect(row0.every((v) => v === 255)).toBe(true);
  });

  it('gives the same PNG as a data URL', async () => {
    const text = 'same image';
    const url = await qrDataUrl(text);
    expect(url).toBe(`data:image/png;base64,${(await qrPng(text)).toString('base64')}`);
  });
});
