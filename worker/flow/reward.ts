/**
 * "Land inside this shape": the visible reward of the 2-D Flow-GRPO workbench. A target region
 * (an annulus, or a union of discs) in the plane; a point's distance d to the region is 0 inside.
 * The hard reward is 1 inside and 0 outside; the smooth one, exp(−(d/scale)²), equals it inside
 * and decays outside, so a group that misses the shape still has reward variance to learn from.
 * Points are unbounded; the targets and the base distributions lie in [−1, 1]², and a view of
 * `FLOW_VIEW_BOX` shows them with a margin. Not an advantage (the RL core's GRPO estimator is).
 */
import type { FlowField } from '../contract/records';

/** Half-width of the square a view should show: [−1.25, 1.25]². */
export const FLOW_VIEW_BOX = 1.25;

/** The annulus inner ≤ |p − center| ≤ outer, or the union of discs |p − center| ≤ radius (worker/contract/records.ts `FlowField`'s target). */
export type FlowTarget = FlowField['target'];

export interface FlowRewardOptions {
  target: FlowTarget;
  /** Length scale of the smooth reward exp(−(d/smooth)²); 0 gives the hard 0/1 reward. */
  smooth: number;
}

/**
 * The default: the annulus 0.75 ≤ |p| ≤ 0.9, smooth over 0.15. The pretrained base (pretrain.ts
 * 'blobs', modes at radius 0.57) starts near reward 0.3 with few points inside.
 */
export const FLOW_RING: FlowRewardOptions = {
  target: { kind: 'ring', center: [0, 0], inner: 0.75, outer: 0.9 },
  smooth: 0.15,
};

/** Three discs of radius 0.2 on a circle of radius 0.7 (at 90°, 210° and 330°), smooth over 0.15. */
export const FLOW_DISCS: FlowRewardOptions = {
  target: {
    kind: 'discs',
    discs: [90, 210, 330].map((deg) => ({
      center: [0.7 * Math.cos((deg * Math.PI) / 180), 0.7 * Math.sin((deg * Math.PI) / 180)] as [number, number],
      radius: 0.2,
    })),
  },
  smooth: 0.15,
};

/** Problems with reward options, one message per bad field (empty: valid). */
export function validateFlowReward(o: FlowRewardOptions): string[] {
  const problems: string[] = [];
  if (!(o.smooth >= 0) || !Number.isFinite(o.smooth))
    problems.push(`reward.smooth = ${o.smooth}: expected a finite number ≥ 0`);
  const t = o.target;
  if (t.kind === 'ring') {
    if (!(t.inner >= 0 && t.outer > t.inner && Number.isFinite(t.outer)))
      problems.push(`reward.target: inner = ${t.inner}, outer = ${t.outer}: expected 0 ≤ inner < outer`);
  } else if (t.kind === 'discs') {
    if (t.discs.length === 0) problems.push('reward.target.discs: expected at least one disc');
    t.discs.forEach((d, i) => {
      if (!(d.radius > 0) || !Number.isFinite(d.radius))
        problems.push(`reward.target.discs[${i}].radius = ${d.radius}: expected a finite number > 0`);
    });
  } else
    problems.push(`reward.target.kind = ${JSON.stringify((t as { kind: unknown }).kind)}: expected "ring" or "discs"`);
  return problems;
}

/** Distance from (x, y) to the target region (0 inside; Infinity for a non-finite point). */
export function distanceToTarget(t: FlowTarget, x: number, y: number): number {
  if (!Number.isFinite(x) || !Number.isFinite(y)) return Infinity;
  if (t.kind === 'ring') {
    const r = Math.hypot(x - t.center[0], y - t.center[1]);
    return r < t.inner ? t.inner - r : r > t.outer ? r - t.outer : 0;
  }
  let best = Infinity;
  for (const d of t.discs) best = Math.min(best, Math.max(0, Math.hypot(x - d.center[0], y - d.center[1]) - d.radius));
  return best;
}

export interface FlowRewards {
  /** Per point, the reward the objective trains on (smooth or hard). */
  rewards: Float64Array;
  /** Per point, 1 inside the target and 0 outside (the hard reward, whatever `smooth` is). */
  inside: Float64Array;
}

/** Scores N 2-D points (N, 2). */
export function flowReward(points: ArrayLike<number>, o: FlowRewardOptions): FlowRewards {
  if (points.length % 2 !== 0) throw new Error(`flowReward: ${points.length} coordinates, expected (N, 2)`);
  const n = points.length / 2;
  const rewards = new Float64Array(n);
  const inside = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const d = distanceToTarget(o.target, points[2 * i], points[2 * i + 1]);
    inside[i] = d === 0 ? 1 : 0;
    rewards[i] = o.smooth > 0 ? Math.exp(-((d / o.smooth) ** 2)) : inside[i];
  }
  return { rewards, inside };
}

/** The reward over the square ±box on a size × size grid of cell centres (row 0 at y = −box), with its target: what a view draws under the points. */
export function rewardGrid(o: FlowRewardOptions, box: number, size: number): FlowField {
  const points = new Float32Array(size * size * 2);
  for (let r = 0; r < size; r++) {
    for (let c = 0; c < size; c++) {
      points[2 * (r * size + c)] = -box + ((c + 0.5) * 2 * box) / size;
      points[2 * (r * size + c) + 1] = -box + ((r + 0.5) * 2 * box) / size;
    }
  }
  return { box, size, values: Float32Array.from(flowReward(points, o).rewards), target: o.target };
}
