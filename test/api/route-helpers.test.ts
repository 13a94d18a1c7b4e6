import { describe, expect, it } from 'vitest';
import { formatBrl, newTxid, requestHash } from '../../api/route-helpers';
import { canonicalJson } from '../../common/canonical-json';
import { txidSchema } from '../../contracts/shared-input';

describe('route helpers', () => {
  it('formats centavos as BRL by integer string arithmetic', () => {
    expect(formatBrl(15_000)).toBe('R$ 150,00');
    expect(formatBrl(5)).toBe('R$ 0,05');
    expect(formatBrl(123_456_789)).toBe('R$ 1.234.567,89');
    expect(formatBrl(100_000_000_00)).toBe('R$ 100.000.000,00');
  });

  it('hashes requests canonically: key order does not matter, values do', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, 2], c: 'x' } })).toBe('{"a":{"c":"x","d":[1,2]},"b":1}');
    const key = 'k'.repeat(16);
    expect(requestHash({ a: 1, b: 2 }, key)).toBe(requestHash({ b: 2, a: 1 }, key));
    expect(requestHash({ a: 1, b: 2 }, key)).not.toBe(requestHash({ a: 1, b: 3 }, key));
  });

  it('generates valid, distinct txids', () => {
    const a = newTxid();
    expect(txidSchema.safeParse(a).success).toBe(true);
    expect(a).toHaveLength(32);
    expect(newTxid()).not.toBe(a);
  });
});
