/**
 * Distributions over steps (TensorBoard's histograms, drawn as a heatmap): for each kept step the
 * count of samples per bin of reward or of length, from the samples stored with the step's groups
 * (worker `stepDistributions`). Bins are shared by every run of a quantity so their heatmaps read
 * alike: whole numbers in bins of whole widths (one number each when they span few enough: a 0/1
 * reward has two bins), other values in equal bins over their range. A seed group's samples at a step are pooled. Pure: the view draws the cells.
 */
import type { StepDistribution } from '../../worker/protocol';
import { significant } from '../shared/format';

export type Quantity = 'rewards' | 'lengths';

export interface Bins {
  lo: number;
  width: number;
  /** One per bin, low to high: `3` for a whole-number bin, `0.25–0.5` for a range. */
  labels: string[];
}

/** Bins over every value of `values` (at most `maxBins`); null when there is none. */
export function binsFor(values: readonly number[], maxBins = 16): Bins | null {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return null;
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of finite) [lo, hi] = [Math.min(lo, v), Math.max(hi, v)];
  if (finite.every(Number.isInteger)) {
    // Whole numbers (lengths, 0/1 rewards): bins of whole widths, labelled by the numbers they hold.
    const width = Math.ceil((hi - lo + 1) / maxBins);
    const count = Math.ceil((hi - lo + 1) / width);
    const label = (a: number) => (width === 1 ? String(a) : `${a}–${a + width - 1}`);
    return { lo: lo - 0.5, width, labels: Array.from({ length: count }, (_, i) => label(lo + i * width)) };
  }
  const width = (hi - lo) / maxBins;
  return {
    lo,
    width,
    labels: Array.from(
      { length: maxBins },
      (_, i) => `${significant(lo + i * width, 3)}–${significant(lo + (i + 1) * width, 3)}`,
    ),
  };
}

/** The bin of `v` (the top edge falls in the last bin, values outside in the nearest). */
export function binOf(v: number, bins: Bins): number {
  const i = Math.floor((v - bins.lo) / bins.width + 1e-9);
  return Math.min(Math.max(i, 0), bins.labels.length - 1);
}

export interface Heatmap {
  /** The kept steps, ascending: the x categories. */
  steps: number[];
  /** [step index, bin index, count], only cells with samples. */
  cells: [number, number, number][];
  /** The largest count of a cell (the colour scale's top). */
  max: number;
  /** Samples per step, in `steps` order. */
  samples: number[];
}

export function heatmap(perStep: readonly { step: number; values: readonly number[] }[], bins: Bins): Heatmap {
  const cells: [number, number, number][] = [];
  let max = 0;
  perStep.forEach(({ values }, x) => {
    const counts = new Map<number, number>();
    for (const v of values) if (Number.isFinite(v)) counts.set(binOf(v, bins), (counts.get(binOf(v, bins)) ?? 0) + 1);
    for (const [y, n] of [...counts.entries()].sort(([a], [b]) => a - b)) {
      cells.push([x, y, n]);
      max = Math.max(max, n);
    }
  });
  return { steps: perStep.map((s) => s.step), cells, max, samples: perStep.map((s) => s.values.length) };
}

/** The members' samples of one quantity, pooled per step (a step any member kept), ascending. */
export function pooled(members: readonly StepDistribution[][], q: Quantity): { step: number; values: number[] }[] {
  const at = new Map<number, number[]>();
  for (const dists of members) for (const d of dists) at.set(d.step, [...(at.get(d.step) ?? []), ...d[q]]);
  return [...at.entries()].sort(([a], [b]) => a - b).map(([step, values]) => ({ step, values }));
}

/** The mean of each step's values, for the chart's text: `step 1: mean 0.25 (8 samples)`. */
export function describeSteps(perStep: readonly { step: number; values: readonly number[] }[]): string {
  const part = ({ step, values }: { step: number; values: readonly number[] }) =>
    `step ${step}: mean ${significant(values.reduce((a, b) => a + b, 0) / values.length, 3)} (${values.length} samples)`;
  const kept = perStep.filter((s) => s.values.length > 0);
  if (kept.length <= 4) return kept.map(part).join('; ');
  return `${kept.slice(0, 2).map(part).join('; ')}; …; ${kept.slice(-2).map(part).join('; ')}`;
}
