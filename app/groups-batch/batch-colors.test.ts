import { describe, expect, it } from 'vitest';
import type { BatchRecord } from '../../worker/protocol';
import { describeCell } from './batch-cell';
import { colorOf, legendOf, scaleFor } from './batch-colors';

describe('the diverging scale', () => {
  const scale = scaleFor('advantage', Float32Array.from([-2, 0, 0.5, 1.5]));

  it('is symmetric around 0 with 0 exactly white', () => {
    expect(scale).toEqual({ kind: 'diverging', max: 2 });
    expect(colorOf(scale, 0)).toBe('#ffffff');
    expect(colorOf(scale, -0)).toBe('#ffffff');
    expect(colorOf({ kind: 'diverging', max: 0 }, 0)).toBe('#ffffff'); // an all-zero layer is all white
  });

  it('runs from white to red for positive and to blue for negative values, clamped at ±max', () => {
    expect(colorOf(scale, 2)).toBe('#b91c1c');
    expect(colorOf(scale, 5)).toBe('#b91c1c');
    expect(colorOf(scale, -2)).toBe('#1d4ed8');
    const half = colorOf(scale, 1);
    expect(half).toBe('#dc8d8d'); // halfway from #ffffff to #b91c1c, rounded down
    expect(colorOf(scale, 1e-6)).toBe('#fefefe'); // a tiny non-zero value is not white
    expect(colorOf(scale, -1e-6)).toBe('#fefefe');
    expect(legendOf(scale)).toBe('blue = −2.00, white = 0, red = +2.00');
  });
});

describe('sequential layers say what their values are', () => {
  it('versions, staleness and IS weights each in their own words', () => {
    const values = Float32Array.from([-1, 0, 1, 2]);
    expect(legendOf(scaleFor('version', values))).toBe('light = version 0, dark = version 2; grey = not sampled');
    expect(legendOf(scaleFor('staleness', values))).toBe(
      'light = 0 versions behind, dark = 2 versions behind; grey = not sampled',
    );
    expect(legendOf(scaleFor('isWeight', Float32Array.from([0.5, 1.25])))).toMatch(/dark = IS weight 1\.25/);
  });
});

describe('describeCell', () => {
  // One row of width 4: <bos> (prompt), "7" and <eos> (sampled), then padding.
  const n = 4;
  const b: BatchRecord = {
    rows: 1,
    width: n,
    rowsNeeded: 1,
    efficiency: 0.75,
    tokens: ['<bos>', '7', '<eos>', ''],
    sessionIds: Int32Array.from([3, 3, 3, 0]),
    layers: {
      segments: Float32Array.from([1, 1, 1, 0]),
      responseMask: Float32Array.from([0, 1, 1, 0]),
      advantage: Float32Array.from([0, 1.5, 1.5, 0]),
      mismatch: Float32Array.from([0, -0.0123, 0, 0]),
      dlogp: Float32Array.from([0, -0.25, -0.25, 0]),
      version: Float32Array.from([-1, 0, 0, -1]),
    },
  };

  it('speaks in words: response mask yes/no, a signed advantage, padding', () => {
    expect(describeCell(b, 0)).toBe(
      'row 0, column 0: "<bos>" · session 3, chain 1 · response mask: no (the loss skips it) · not sampled (prompt)',
    );
    expect(describeCell(b, 1)).toBe(
      'row 0, column 1: "7" · session 3, chain 1 · response mask: yes (the loss reads it) · advantage ' +
        '+1.500 · old − behavior log-prob −0.0123 · dlogp −0.25 · sampled by policy version 0',
    );
    expect(describeCell(b, 3)).toBe('row 0, column 3: padding');
    const ahead = { ...b, layers: { ...b.layers, staleness: Float32Array.from([-1, 2, 2, -1]) } };
    expect(describeCell(ahead, 1)).toMatch(/sampled by policy version 0, 2 behind the weights it trained on$/);
    expect(describeCell(ahead, 0)).toMatch(/not sampled \(prompt\)$/);
    expect(describeCell(b, 1)).not.toMatch(/responseMask|\b[01]\b;/);
  });
});
