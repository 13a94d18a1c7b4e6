import { centavosToDecimal, decimalTextToCentavos } from '../../common/money';
import { ContractError } from '../errors';

// The provider's decimal `value` on the wire, from and to pixflow's integer centavos
// (common/money.ts), with no binary floating-point arithmetic.

/**
 * A JSON number as received (already a double) -> centavos. `String(value)` is the shortest text that
 * round-trips to the same double, i.e. the decimal the sender wrote (10.50 -> "10.5").
 * Returns null for negative values, more than 2 decimal places or exponent notation.
 */
export function valueToCentavos(value: number): number | null {
  if (!Number.isFinite(value)) return null;
  return decimalTextToCentavos(String(value));
}

export function valueToCentavosOrThrow(value: number, path: string): number {
  const c = valueToCentavos(value);
  if (c === null) {
    throw new ContractError(`provider ${path} ${value} is not an amount with at most 2 decimal places`, {
      path,
    });
  }
  return c;
}

/** The number the provider sees for `centavos` (parsed from its decimal text, no arithmetic). */
export function centavosToValue(centavos: number): number {
  return Number(centavosToDecimal(centavos));
}

const PLACEHOLDER = '"__pixflow_decimal_value__"';

/**
 * JSON.stringify(body) with `value` written as the exact decimal literal (e.g. `10.50`), so the text on
 * the wire is the decimal we built from integers, never a double's rendering.
 */
export function jsonWithDecimalValue<T extends object>(body: T, centavos: number): string {
  const text = JSON.stringify({ ...body, value: '__pixflow_decimal_value__' });
  return text.replace(PLACEHOLDER, centavosToDecimal(centavos));
}
