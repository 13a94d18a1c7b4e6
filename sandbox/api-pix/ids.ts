import { randomInt } from 'node:crypto';

// The Central Bank's ids: an end-to-end id is `E` + the sending bank's 8-digit ISPB +
// yyyyMMddHHmm (UTC) + 11 alphanumerics; a return's rtrId has the same shape with `D`.

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function alphanumeric(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALNUM[randomInt(ALNUM.length)];
  return out;
}

function stamp(now: number): string {
  return new Date(now).toISOString().replace(/\D/g, '').slice(0, 12);
}

export const endToEndId = (ispb: string, now: number): string => `E${ispb}${stamp(now)}${alphanumeric(11)}`;
export const returnId = (ispb: string, now: number): string => `D${ispb}${stamp(now)}${alphanumeric(11)}`;

/** A valid CPF (its two check digits computed), for a third-party payer nobody named. */
export function randomCpf(): string {
  const base = Array.from({ length: 9 }, () => randomInt(10));
  if (base.every((d) => d === base[0])) base[0] = (base[0] ?? 0) === 9 ? 8 : (base[0] ?? 0) + 1;
  const check = (digits: number[]) => {
    const sum = digits.reduce((s, d, i) => s + d * (digits.length + 1 - i), 0);
    const r = (sum * 10) % 11;
    return r === 10 ? 0 : r;
  };
  const d1 = check(base);
  const d2 = check([...base, d1]);
  return [...base, d1, d2].join('');
}
