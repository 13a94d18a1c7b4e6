import { describe, expect, it } from 'vitest';
import {
  actingBrand,
  BRAND_HEADER,
  BRAND_ID_FORM,
  DEFAULT_BRAND,
  unknownBrand,
} from '../../api-keys/acting-brand';
import { BRAND_ID_PATTERN, DEFAULT_BRAND_ID } from '../../contracts/brand';
import type { Problem } from '../../http/problem';

// Which brand a request acts for, from its key's brand and the Pixflow-Brand header: the rules
// every door applies (test/api/api-key-brands.test.ts holds the API to them over HTTP).

const refusalOf = (r: ReturnType<typeof actingBrand>): Problem => {
  if (!('refusal' in r)) throw new Error(`expected a refusal, got ${JSON.stringify(r)}`);
  return r.refusal;
};

const namesTheHeader = (p: Problem) => {
  expect(p.detail).toMatch(/^Pixflow-Brand: /);
  expect(p.extra.invalid_params).toEqual([{ name: 'header.Pixflow-Brand', reason: expect.any(String) }]);
};

describe('the brand a request acts for', () => {
  it('is a brand key’s own brand, with no header or with its own brand named', () => {
    expect(actingBrand('bet-rio', undefined)).toEqual({ brand: 'bet-rio' });
    expect(actingBrand('bet-rio', 'bet-rio')).toEqual({ brand: 'bet-rio' });
    expect(actingBrand('bet-rio', ' bet-rio ')).toEqual({ brand: 'bet-rio' });
  });

  it('refuses a brand key naming another brand with 403 naming the header, whether that brand exists or not', () => {
    for (const other of ['default', 'no-such-brand']) {
      const p = refusalOf(actingBrand('bet-rio', other));
      expect([p.status, p.slug]).toEqual([403, 'brand-not-allowed']);
      namesTheHeader(p);
      // It says which brand the key is for, never whether the other one exists.
      expect(p.detail).toContain('"bet-rio"');
      expect(p.detail).not.toContain(other);
    }
  });

  it('refuses a platform key that names no brand with 400 naming the header', () => {
    const p = refusalOf(actingBrand(null, undefined));
    expect([p.status, p.slug]).toEqual([400, 'brand-required']);
    namesTheHeader(p);
  });

  it('has a platform key’s named brand looked up before it acts for it', () => {
    expect(actingBrand(null, 'bet-rio')).toEqual({ lookUp: 'bet-rio' });
    const unknown = unknownBrand('bet-sp');
    expect([unknown.status, unknown.slug]).toEqual([400, 'unknown-brand']);
    namesTheHeader(unknown);
  });

  it('refuses a header that is no brand id with 400, for any key, before any lookup', () => {
    for (const header of ['', 'Bet-Rio', 'x', 'bet rio', 'bet-rio, default', 'a'.repeat(41), '1bet']) {
      for (const key of ['bet-rio', null]) {
        const p = refusalOf(actingBrand(key, header));
        expect([p.status, p.slug], `${key} ${JSON.stringify(header)}`).toEqual([400, 'validation-error']);
        namesTheHeader(p);
      }
    }
  });

  it('reads brand ids as the brands table does, and the default brand is the contracts’ one', () => {
    expect(BRAND_ID_FORM.source).toBe(BRAND_ID_PATTERN.source);
    expect(DEFAULT_BRAND).toBe(DEFAULT_BRAND_ID);
    expect(BRAND_HEADER).toBe('Pixflow-Brand');
  });
});
