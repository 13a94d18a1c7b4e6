import { describe, expect, it } from 'vitest';
import { parseCodecKeys } from '../../common/codec';
import { openSecret, sealSecret } from '../../common/secret-box';

const k1 = Buffer.alloc(32, 1).toString('base64');
const k2 = Buffer.alloc(32, 2).toString('base64');

describe('sealed secrets', () => {
  it('seal with the active key, open with any configured one, never show the secret', () => {
    const old = parseCodecKeys(`k1:${k1}`, 'k1');
    const sealed = sealSecret(old, 'whsec_c2VjcmV0');
    expect(sealed).toMatch(/^k1\./);
    expect(sealed).not.toContain('c2VjcmV0');
    expect(sealSecret(old, 'whsec_c2VjcmV0')).not.toBe(sealed);
    const rotated = parseCodecKeys(`k2:${k2},k1:${k1}`, 'k2');
    expect(openSecret(rotated, sealed)).toBe('whsec_c2VjcmV0');
    expect(sealSecret(rotated, 'x')).toMatch(/^k2\./);
  });

  it('refuse an unknown key and a tampered seal', () => {
    const keys = parseCodecKeys(`k1:${k1}`, 'k1');
    const sealed = sealSecret(keys, 'whsec_abc');
    expect(() => openSecret(parseCodecKeys(`k2:${k2}`, 'k2'), sealed)).toThrow(/not configured/);
    const tampered = `${sealed.slice(0, -2)}${sealed.endsWith('A') ? 'B' : 'A'}A`;
    expect(() => openSecret(keys, tampered)).toThrow();
  });
});
