// Money is integer centavos inside pixflow. Neither direction uses binary floating-point
// arithmetic: amounts become decimal text, and decimal text becomes centavos, by integers.

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
