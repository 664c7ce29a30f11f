/**
 * Exact rational numbers for answer checking: parse the text of a final answer into a reduced
 * BigInt fraction `num/den` and compare two of them exactly, so `0.5`, `1/2` and `\frac{1}{2}`
 * agree, `0.1 + 0.2`-style rounding never matters, and 50-digit integers compare digit for digit.
 *
 * Not an expression evaluator: `1+1`, `2^3`, `\sqrt{4}`, units, `$…$` and percent signs are not
 * numbers here. Reference: docs/rl-core.md "Rewards" (`MathReward`: integers, decimals, `a/b` and
 * `\frac{a}{b}` compare exactly as rationals, arbitrary precision, not floating point).
 *
 * Grammar (the whole trimmed text must match; whitespace is allowed around every token):
 *   decimal  := sign? ( digits ( "." digits? )? | "." digits )    e.g. 7, -7, +7, 0.50, .5, 5.
 *   sign     := "+" | "-" | "−" (U+2212, the typographic minus)
 *   slash    := decimal "/" decimal                                e.g. 1/2, -3/4, 1.5/3
 *   latex    := sign? ( "\frac" | "\dfrac" | "\tfrac" ) ( "{" decimal "}" "{" decimal "}" | digit digit )
 *   rational := decimal | slash | latex
 * Not accepted (parse to `null`): thousands separators (`1,000`, `1 000`), exponents (`1e3`),
 * mixed numbers (`1 1/2`), chained fractions (`1/2/3`), a zero denominator (`1/0`,
 * `\frac{1}{0}`: division by zero is not a number), and any number with more than
 * `MAX_DIGITS` digits (bounds the BigInt work on hostile input).
 */

/** A fraction in lowest terms: `den > 0` and `gcd(|num|, den) = 1`; zero is `0/1`. */
export interface Rational {
  num: bigint;
  den: bigint;
}

/** Longest digit string (integer and fraction digits of one decimal) that is parsed. */
export const MAX_DIGITS = 1000;

const SIGN = '[+\\-\u2212]';
// Whitespace after a sign only, so no two `\s*` are adjacent (no quadratic backtracking).
const DECIMAL = `(?:${SIGN}\\s*)?(?:\\d+(?:\\.\\d*)?|\\.\\d+)`;
const DECIMAL_RE = new RegExp(`^(?:(${SIGN})\\s*)?(\\d*)(?:\\.(\\d*))?$`);
const SLASH_RE = new RegExp(`^(${DECIMAL})\\s*/\\s*(${DECIMAL})$`);
const LATEX_BRACED_RE = new RegExp(
  `^(${SIGN})?\\s*\\\\[dt]?frac\\s*\\{\\s*(${DECIMAL})\\s*\\}\\s*\\{\\s*(${DECIMAL})\\s*\\}$`,
);
// `\frac12` is LaTeX for `\frac{1}{2}`: an unbraced argument is a single token, here one digit.
const LATEX_SHORT_RE = new RegExp(`^(${SIGN})?\\s*\\\\[dt]?frac\\s*(\\d)\\s*(\\d)$`);

function abs(x: bigint): bigint {
  return x < 0n ? -x : x;
}

function gcd(a: bigint, b: bigint): bigint {
  a = abs(a);
  b = abs(b);
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/** `num/den` in lowest terms with a positive denominator; `null` when `den` is zero. */
export function makeRational(num: bigint, den: bigint): Rational | null {
  if (den === 0n) return null;
  if (den < 0n) {
    num = -num;
    den = -den;
  }
  const g = gcd(num, den);
  return g > 1n ? { num: num / g, den: den / g } : { num, den };
}

/** One signed decimal (`-0.50`, `.5`, `5.`) as an exact fraction; `null` if it is not one. */
function parseDecimal(text: string): Rational | null {
  const m = DECIMAL_RE.exec(text.trim());
  if (!m) return null;
  const [, sign, whole, frac = ''] = m;
  if (whole.length + frac.length === 0 || whole.length + frac.length > MAX_DIGITS) return null;
  const magnitude = BigInt((whole || '0') + frac);
  const num = sign === undefined || sign === '+' ? magnitude : -magnitude;
  return makeRational(num, 10n ** BigInt(frac.length));
}

/** `a / b` for two exact rationals; `null` when `b` is zero (division by zero is not a number). */
function divide(a: Rational, b: Rational): Rational | null {
  return makeRational(a.num * b.den, a.den * b.num);
}

function negateIf(sign: string | undefined, r: Rational | null): Rational | null {
  return r !== null && sign !== undefined && sign !== '+' ? { num: -r.num, den: r.den } : r;
}

/**
 * The exact value of `text` (see the module grammar), reduced, or `null` if `text` is not a
 * number. Never throws, whatever the input.
 */
export function parseRational(text: string): Rational | null {
  const t = text.trim();
  if (t.length === 0) return null;
  const decimal = parseDecimal(t);
  if (decimal) return decimal;
  let m = SLASH_RE.exec(t);
  if (m) {
    const [a, b] = [parseDecimal(m[1]), parseDecimal(m[2])];
    return a && b ? divide(a, b) : null;
  }
  m = LATEX_BRACED_RE.exec(t) ?? LATEX_SHORT_RE.exec(t);
  if (m) {
    const [a, b] = [parseDecimal(m[2]), parseDecimal(m[3])];
    return a && b ? negateIf(m[1], divide(a, b)) : null;
  }
  return null;
}

/** Exact equality of two rationals (cross-multiplied, so unreduced inputs compare correctly too). */
export function rationalEquals(a: Rational, b: Rational): boolean {
  return a.num * b.den === b.num * a.den;
}

/** `"-3"` for integers, `"1/2"` otherwise; for details and logs. */
export function formatRational(r: Rational): string {
  return r.den === 1n ? r.num.toString() : `${r.num}/${r.den}`;
}
