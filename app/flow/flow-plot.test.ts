import { describe, expect, it } from 'vitest';
import type { FlowCloud, FlowField } from '../../worker/protocol';
import {
  OUTLINE_NAME,
  TRAIL_NAME,
  buildFlowOption,
  cloudSummary,
  describeCloud,
  fieldPixels,
  pointSeries,
  pointText,
  targetOutline,
  trailSteps,
} from './flow-plot';

/** 2 groups × 2: rewards 1, 0.5 | 0.2, 1; the first group trained, the second not. */
const cloud: FlowCloud = {
  step: 3,
  points: Float32Array.from([0.8, 0, 0.1, 0.2, -0.3, -0.4, 0, 0.85]),
  rewards: Float32Array.from([1, 0.5, 0.25, 1]),
  advantages: Float32Array.from([0.5, -0.5, 0, 0]),
  group: 2,
};
const ring: FlowField['target'] = { kind: 'ring', center: [0.1, -0.2], inner: 0.75, outer: 0.9 };
const field: FlowField = { box: 1.25, size: 2, values: Float32Array.from([0, 1, 0.5, 2]), target: ring };

describe('cloudSummary and describeCloud', () => {
  it('counts points, inside (reward 1), trained (advantage ≠ 0) and the mean reward: hand values', () => {
    const s = cloudSummary(cloud);
    expect(s).toEqual({ step: 3, n: 4, groups: 2, group: 2, meanReward: 2.75 / 4, inside: 2, trained: 2 });
    expect(describeCloud(s)).toBe(
      'Sample cloud of step 3: 4 points, mean reward 0.688, 50% inside the target (2 of 4)',
    );
  });

  it('rejects a cloud whose arrays disagree in length', () => {
    expect(() => cloudSummary({ ...cloud, advantages: new Float32Array(3) })).toThrow(
      /8 coordinates, 4 rewards and 3 advantages/,
    );
  });
});

describe('targetOutline', () => {
  it('draws a ring as two closed circles of its radii around its centre', () => {
    const lines = targetOutline(ring, 8);
    expect(lines).toHaveLength(2);
    lines.forEach((line, k) => {
      expect(line).toHaveLength(9);
      expect(line.at(-1)).toEqual(line[0]); // closed
      for (const [x, y] of line) expect(Math.hypot(x - 0.1, y + 0.2)).toBeCloseTo([0.75, 0.9][k], 12);
    });
    expect(lines[0][2][0]).toBeCloseTo(0.1, 12); // a quarter turn: straight above the centre
    expect(lines[0][2][1]).toBeCloseTo(-0.2 + 0.75, 12);
  });

  it('draws one circle per disc', () => {
    const discs: FlowField['target'] = {
      kind: 'discs',
      discs: [
        { center: [0, 0.7], radius: 0.2 },
        { center: [-0.6, -0.35], radius: 0.1 },
      ],
    };
    const lines = targetOutline(discs, 12);
    expect(lines).toHaveLength(2);
    for (const [x, y] of lines[1]) expect(Math.hypot(x + 0.6, y + 0.35)).toBeCloseTo(0.1, 12);
    expect(() => targetOutline(discs, 2)).toThrow(/segments = 2/);
  });
});

describe('trailSteps', () => {
  it('takes the up to n stored steps before the one shown, oldest first', () => {
    const steps = [1, 2, 3, 4, 5, 6, 7, 8];
    expect(trailSteps(steps, 8)).toEqual([3, 4, 5, 6, 7]);
    expect(trailSteps(steps, 3)).toEqual([1, 2]);
    expect(trailSteps(steps, 1)).toEqual([]);
    expect(trailSteps(steps, 6, 2)).toEqual([4, 5]);
  });

  it('is empty for a step that is not stored or none', () => {
    expect(trailSteps([1, 2, 3], 9)).toEqual([]);
    expect(trailSteps([1, 2, 3], null)).toEqual([]);
  });
});

describe('fieldPixels', () => {
  it('puts the field row at y = −box at the bottom of the image and clamps to [0, 1]', () => {
    const px = fieldPixels(field);
    expect(px).toHaveLength(2 * 2 * 4);
    const pixel = (row: number, col: number) => Array.from(px.slice(4 * (row * 2 + col), 4 * (row * 2 + col) + 4));
    expect(pixel(1, 0)).toEqual([250, 250, 250, 255]); // field (0, 0) = 0: bottom left, light
    expect(pixel(1, 1)).toEqual([110, 231, 150, 255]); // field (0, 1) = 1: bottom right, green
    expect(pixel(0, 1)).toEqual(pixel(1, 1)); // 2 clamps to 1
    expect(pixel(0, 0)).toEqual([180, 241, 200, 255]); // 0.5: halfway
    expect(() => fieldPixels({ ...field, size: 3 })).toThrow(/4 values; expected size² = 9/);
  });
});

describe('pointSeries and the option', () => {
  it('splits points by advantage sign, each datum keeping its index', () => {
    const [pos, neg, zero] = pointSeries(cloud, 'advantage');
    expect(pos.data).toEqual([[cloud.points[0], cloud.points[1], 0]]);
    expect(neg.data.map((p) => p[2])).toEqual([1]);
    expect(zero.data.map((p) => p[2])).toEqual([2, 3]);
    expect(new Set([pos.symbol, neg.symbol, zero.symbol]).size).toBe(3); // not colour alone
  });

  it('splits points by group (group-major)', () => {
    const groups = pointSeries(cloud, 'group');
    expect(groups.map((g) => g.name)).toEqual(['group 1', 'group 2']);
    expect(groups[1].data.map((p) => p[2])).toEqual([2, 3]);
    expect(pointText(cloud, 3)).toBe('group 2, sample 2: (0.00, 0.85), reward 1.000, advantage 0.000');
  });

  it('layers trail, points and outline over equal, fixed axes', () => {
    const o = buildFlowOption({ cloud, field, trail: [cloud, cloud], colorBy: 'advantage', image: null });
    expect([o.xAxis.min, o.xAxis.max, o.yAxis.min, o.yAxis.max]).toEqual([-1.25, 1.25, -1.25, 1.25]);
    const names = o.series.map((s) => s.name);
    expect(names).toEqual([
      TRAIL_NAME,
      'advantage > 0',
      'advantage < 0',
      'not trained (advantage 0)',
      OUTLINE_NAME,
      OUTLINE_NAME,
    ]);
    const trail = o.series[0] as { data: { itemStyle: { opacity: number } }[] };
    expect(trail.data).toHaveLength(8);
    expect(trail.data[0].itemStyle.opacity).toBeLessThan(trail.data[7].itemStyle.opacity); // older is fainter
    expect(o.legend.data).toEqual([...names.slice(1, 4), TRAIL_NAME, OUTLINE_NAME]);
    expect(
      buildFlowOption({ cloud, field, trail: [], colorBy: 'group', image: null }).series.map((s) => s.name),
    ).toEqual(['group 1', 'group 2', OUTLINE_NAME, OUTLINE_NAME]);
  });
});
