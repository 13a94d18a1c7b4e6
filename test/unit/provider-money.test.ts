import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { centavosToDecimal, decimalTextToCentavos } from '../../common/money';
import {
  centavosToValue,
  jsonWithDecimalValue,
  valueToCentavos,
} from '../../connectors/identity-payments/money';

describe('money at the provider boundary', () => {
  it('builds the decimal from integers', () => {
    expect(centavosToDecimal(0)).toBe('0.00');
    expect(centavosToDecimal(5)).toBe('0.05');
    expect(centavosToDecimal(1050)).toBe('10.50');
    expect(centavosToDecimal(123456789)).toBe('1234567.89');
    expect(() => centavosToDecimal(1.5)).toThrow(RangeError);
    expect(() => centavosToDecimal(-1)).toThrow(RangeError);
  });

  it('reads values with at most two decimals and refuses the rest', () => {
    expect(valueToCentavos(10.5)).toBe(1050);
    expect(valueToCentavos(0.1 + 0.2)).toBeNull();
    expect(valueToCentavos(1.005)).toBeNull();
    expect(valueToCentavos(-1)).toBeNull();
    expect(decimalTextToCentavos('7')).toBe(700);
    expect(decimalTextToCentavos('7.1')).toBe(710);
  });

  it('round-trips every amount through the JSON number the provider sees', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000_000_00 }), (c) => {
        const wire = jsonWithDecimalValue({ txid: '1' }, c);
        const parsed = JSON.parse(wire) as { value: number };
        expect(valueToCentavos(parsed.value)).toBe(c);
        expect(centavosToValue(c)).toBe(parsed.value);
      }),
    );
  });

  it('writes the exact decimal literal on the wire', () => {
    expect(jsonWithDecimalValue({ a: 1 }, 1050)).toBe('{"a":1,"value":10.50}');
  });
});
