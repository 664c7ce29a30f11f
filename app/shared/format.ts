/**
 * Number formatting for charts and metric labels: never a negative zero ("-0.0000" from a loss of
 * -3e-7 reads as a sign that is not there) and a dash for a value that is not a number. Plain
 * functions, no Intl: the same text on every machine.
 */

/** `v.toFixed(digits)`, except that a value rounding to zero prints without a sign and a non-finite one as '–'. */
export function fixed(v: number, digits: number): string {
  if (!Number.isFinite(v)) return '–';
  const s = v.toFixed(digits);
  return Number(s) === 0 ? s.replace(/^-/, '') : s;
}

/**
 * `digits` significant digits, an exponent for tiny or huge values (a KL of 2e-5 keeps its
 * digits instead of printing 0.0000), trailing zeros dropped, never '-0'; '–' when not finite.
 */
export function significant(v: number, digits = 4): string {
  if (!Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (a < 1e-3 || a >= 1e6) return Number(v.toPrecision(digits)).toExponential();
  const decimals = Math.max(0, digits - 1 - Math.floor(Math.log10(a)));
  return String(Number(fixed(v, Math.min(decimals, 20))));
}

/** The minus sign (U+2212): unlike a hyphen it is not read as a dash, and it lines up with the plus. */
const MINUS = '\u2212';

/**
 * A number for a table a person reads: `digits` significant digits (never fewer integer digits:
 * 12346, not 1.23e4) in plain decimals from 1e-4 up to 1e6 (−0.000621, not -6.212e-4), an exponent
 * outside (−6.21e−5), trailing zeros dropped, a true minus sign, never a negative zero; '–' when
 * not finite.
 */
export function readable(v: number, digits = 3): string {
  if (!Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a === 0) return '0';
  const s =
    a < 1e-4 || a >= 1e6
      ? Number(v.toPrecision(digits)).toExponential().replace('e+', 'e')
      : String(Number(fixed(v, Math.min(20, Math.max(0, digits - 1 - Math.floor(Math.log10(a)))))));
  return s.replaceAll('-', MINUS);
}

/** A range as words, both ends at the same precision: `−0.00199 to −0.000621` (a dash would collide with the signs). */
export function rangeText(lo: number, hi: number, digits = 3): string {
  return `${readable(lo, digits)} to ${readable(hi, digits)}`;
}
