import { ContractError } from './errors';

// Money is integer centavos inside pixflow and the provider's decimal `value` only on the wire.
// Neither direction uses binary floating-point arithmetic: we build and read decimal strings.

/** 1050 -> "10.50". Throws RangeError for anything but a non-negative safe integer. */
export function centavosToDecimal(centavos: number): string {
  if (!Number.isSafeInteger(centavos) || centavos < 0) {
    throw new RangeError(`amount must be a non-negative integer number of centavos, got ${centavos}`);
  }
  const c = BigInt(centavos);
  return `${c / 100n}.${(c % 100n).toString().padStart(2, '0')}`;
}

/** "10.50" / "10.5" / "10" -> 1050, or null when the text is not a decimal with at most 2 places. */
export function decimalTextToCentavos(text: string): number | null {
  const m = /^(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  if (!m) return null;
  const whole = BigInt(m[1] ?? '0');
  const frac = BigInt((m[2] ?? '').padEnd(2, '0'));
  const total = whole * 100n + frac;
  if (total > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  return Number(total);
}

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

/**
 * 15000 -> "R$ 150,00", 123456789 -> "R$ 1.234.567,89", for people (the console, flow summaries).
 * Integer arithmetic only (no float drift); anything but a safe integer is a RangeError.
 */
export function formatBrl(centavos: number): string {
  if (!Number.isSafeInteger(centavos)) throw new RangeError(`not an integer amount of centavos: ${centavos}`);
  const c = BigInt(centavos);
  const abs = c < 0n ? -c : c;
  const whole = (abs / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  const cents = (abs % 100n).toString().padStart(2, '0');
  return `${c < 0n ? '-' : ''}R$ ${whole},${cents}`;
}
