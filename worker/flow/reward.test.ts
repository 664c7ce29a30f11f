import { describe, expect, it } from 'vitest';
import { distanceToTarget, FLOW_DISCS, FLOW_RING, flowReward, validateFlowReward } from './reward';

describe('shape rewards', () => {
  it('ring: 1 inside the annulus, exp(−(d/scale)²) outside, 0/1 with smooth = 0', () => {
    const pts = [0.8, 0, 0, -0.9, 0.6, 0, 0, 1.2, 0, 0];
    const { rewards, inside } = flowReward(pts, FLOW_RING);
    expect(Array.from(inside)).toEqual([1, 1, 0, 0, 0]);
    expect(rewards[0]).toBe(1);
    expect(rewards[2]).toBeCloseTo(Math.exp(-((0.15 / 0.15) ** 2)), 12); // 0.75 − 0.6
    expect(rewards[3]).toBeCloseTo(Math.exp(-((0.3 / 0.15) ** 2)), 12); // 1.2 − 0.9
    expect(rewards[4]).toBeCloseTo(Math.exp(-25), 12);
    expect(Array.from(flowReward(pts, { ...FLOW_RING, smooth: 0 }).rewards)).toEqual([1, 1, 0, 0, 0]);
  });

  it('discs: the distance to the nearest disc', () => {
    const t = FLOW_DISCS.target;
    expect(distanceToTarget(t, 0, 0.7)).toBe(0);
    expect(distanceToTarget(t, 0, 0)).toBeCloseTo(0.5, 12);
    expect(distanceToTarget(t, 0, 1.2)).toBeCloseTo(0.3, 12);
  });

  it('a non-finite point is outside with reward 0', () => {
    const { rewards, inside } = flowReward([NaN, 0, Infinity, 0.8], FLOW_RING);
    expect(Array.from(rewards)).toEqual([0, 0]);
    expect(Array.from(inside)).toEqual([0, 0]);
  });

  it('names the bad field', () => {
    expect(validateFlowReward(FLOW_RING)).toEqual([]);
    expect(
      validateFlowReward({ target: { kind: 'ring', center: [0, 0], inner: 0.5, outer: 0.4 }, smooth: -1 }),
    ).toEqual([
      'reward.smooth = -1: expected a finite number ≥ 0',
      'reward.target: inner = 0.5, outer = 0.4: expected 0 ≤ inner < outer',
    ]);
    expect(validateFlowReward({ target: { kind: 'discs', discs: [] }, smooth: 0 })).toEqual([
      'reward.target.discs: expected at least one disc',
    ]);
  });
});
