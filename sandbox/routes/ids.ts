import { randomBytes } from 'node:crypto';

/** A Pix end-to-end id: E + 8-digit ISPB + yyyyMMddHHmm + 11 alphanumerics (32 characters). */
export function e2eId(now: number): string {
  const d = new Date(now).toISOString().replace(/\D/g, '').slice(0, 12);
  const rand = randomBytes(8).toString('hex').toUpperCase().slice(0, 11);
  return `E00000000${d}${rand}`;
}
