/**
 * `expectClose(actual, expected, {atol, rtol, label})`: fails with the max difference, the first
 * bad index and a few (actual, expected) pairs. An element passes when
 * |a − e| ≤ atol + rtol·|e|; NaN never passes, equal infinities do.
 */
export interface CloseOptions {
  atol: number;
  rtol: number;
  label: string;
}

export interface CloseReport {
  ok: boolean;
  maxAbsDiff: number;
  firstBad: number;
  message: string;
}

export function compareClose(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  { atol, rtol, label }: CloseOptions,
): CloseReport {
  if (actual.length !== expected.length) {
    return {
      ok: false,
      maxAbsDiff: Infinity,
      firstBad: -1,
      message: `${label}: length ${actual.length} != expected ${expected.length}`,
    };
  }
  let maxAbsDiff = 0;
  let firstBad = -1;
  let bad = 0;
  for (let i = 0; i < actual.length; i++) {
    const a = actual[i];
    const e = expected[i];
    const d = a === e ? 0 : Math.abs(a - e);
    if (a !== e && !(d <= atol + rtol * Math.abs(e))) {
      bad++;
      if (firstBad < 0) firstBad = i;
    }
    if (!(d <= maxAbsDiff)) maxAbsDiff = Number.isNaN(d) ? NaN : Math.max(maxAbsDiff, d);
  }
  if (bad === 0)
    return { ok: true, maxAbsDiff, firstBad, message: `${label}: ok (max |diff| ${maxAbsDiff.toExponential(2)})` };
  const pairs: string[] = [];
  for (let i = firstBad; i < actual.length && pairs.length < 4; i++) {
    const d = Math.abs(actual[i] - expected[i]);
    if (actual[i] !== expected[i] && !(d <= atol + rtol * Math.abs(expected[i])))
      pairs.push(`[${i}] ${actual[i]} vs ${expected[i]}`);
  }
  return {
    ok: false,
    maxAbsDiff,
    firstBad,
    message: `${label}: ${bad}/${actual.length} elements outside atol=${atol} rtol=${rtol}; max |diff| ${maxAbsDiff}; first bad index ${firstBad}; ${pairs.join(', ')}`,
  };
}

export function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>, opts: CloseOptions): void {
  const r = compareClose(actual, expected, opts);
  if (!r.ok) throw new Error(r.message);
}
