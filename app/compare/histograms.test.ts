import { describe, expect, it } from 'vitest';
import { binOf, binsFor, describeSteps, heatmap, pooled } from './histograms';

describe('binsFor', () => {
  it('gives whole numbers a bin each when few (a 0/1 reward: two bins)', () => {
    expect(binsFor([0, 1, 1, 0])).toEqual({ lo: -0.5, width: 1, labels: ['0', '1'] });
  });
  it('groups many whole numbers into bins of whole widths', () => {
    const bins = binsFor([14, 20, 45], 16)!;
    expect(bins.width).toBe(2);
    expect(bins.labels[0]).toBe('14–15');
    expect(bins.labels.at(-1)).toBe('44–45');
    expect([14, 15, 16, 45].map((v) => binOf(v, bins))).toEqual([0, 0, 1, 15]);
  });
  it('splits any other range into equal bins, the top edge in the last one', () => {
    const bins = binsFor([0, 0.25, 1], 4)!;
    expect(bins.labels).toEqual(['0–0.25', '0.25–0.5', '0.5–0.75', '0.75–1']);
    expect([0, 0.25, 0.7, 1].map((v) => binOf(v, bins))).toEqual([0, 1, 2, 3]);
    expect(binsFor([])).toBeNull();
  });
});

describe('heatmap and pooled', () => {
  it('counts samples per step and bin, leaving empty cells out', () => {
    const bins = binsFor([0, 1])!;
    const map = heatmap(
      [
        { step: 3, values: [0, 0, 1] },
        { step: 5, values: [1, 1] },
      ],
      bins,
    );
    expect(map).toEqual({
      steps: [3, 5],
      cells: [
        [0, 0, 2],
        [0, 1, 1],
        [1, 1, 2],
      ],
      max: 2,
      samples: [3, 2],
    });
  });
  it('pools a seed group’s samples per step', () => {
    const a = [{ step: 1, rewards: [0, 1], lengths: [3, 4] }];
    const b = [
      { step: 1, rewards: [1], lengths: [5] },
      { step: 2, rewards: [0], lengths: [6] },
    ];
    expect(pooled([a, b], 'rewards')).toEqual([
      { step: 1, values: [0, 1, 1] },
      { step: 2, values: [0] },
    ]);
    expect(describeSteps(pooled([a, b], 'lengths'))).toBe('step 1: mean 4 (3 samples); step 2: mean 6 (1 samples)');
  });
});
