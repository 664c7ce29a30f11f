import { describe, expect, it } from 'vitest';
import { gae, gdpoAdvantages, grpoAdvantages, reinforcePlusPlusBaseline, rlooAdvantages } from './advantages/index';
import { pack, type PackedBatch, type PackResult } from './pack';
import type { Call, Session } from './types';

const call = (promptIds: number[], sampledIds: number[], version = 0, lp = -0.1): Call => ({
  promptIds,
  sampledIds,
  behaviorLogProbs: sampledIds.map((_, i) => lp - i / 10),
  rawLogProbs: sampledIds.map((_, i) => lp - 0.01 - i / 10),
  finishReason: 'stop',
  version,
});
const base = { task: 't', group: 'g', sample: 0, attempt: 0 } as const;

// s0: two calls that merge into one chain [1 2 3 4 5 6] (sampled at 2, 3 and 5).
// s1: two calls that do not merge: [7 8 9] and [7 8 10 11] (call 1's prompt differs at 10).
// s2: truncated; s3: an infrastructure failure.
const sessions: Session[] = [
  {
    ...base,
    sample: 0,
    status: 'completed',
    reward: 1,
    calls: [call([1, 2], [3, 4], 0), call([1, 2, 3, 4, 5], [6], 1, -0.3)],
  },
  {
    ...base,
    sample: 1,
    status: 'completed',
    reward: 0.25,
    calls: [call([7], [8, 9], 1, -0.4), call([7, 8, 10], [11], 2, -0.6)],
  },
  {
    ...base,
    sample: 2,
    status: 'truncated',
    termination: 'max_response_length',
    reward: 0.5,
    calls: [call([1], [2, 2])],
  },
  { ...base, task: 'u', status: 'failed', termination: 'sandbox_error', reward: null, calls: [call([5], [6])] },
];

function ok(r: PackResult): PackedBatch {
  if (!r.ok) throw new Error(`expected a packed batch, got a refusal: ${r.message}`);
  return r;
}
const rowOf = (a: ArrayLike<number>, r: number, w: number) => Array.from(a).slice(r * w, (r + 1) * w);

describe('pack: a hand-built batch', () => {
  const b = ok(pack(sessions, 8));
  const a = 0.375 / (Math.sqrt(2 * 0.375 ** 2) + 1e-6); // GRPO over rewards [1, 0.25], verl

  it('merges strictly and places first-fit decreasing (6 → row 0; 4 → row 1; 3 → row 1)', () => {
    expect(b.rows).toBe(2);
    expect(b.chains.map((c) => [c.session, c.firstCall, c.calls, c.length, c.row, c.offset, c.segment])).toEqual([
      [0, 0, 2, 6, 0, 0, 1],
      [1, 1, 1, 4, 1, 0, 1],
      [1, 0, 1, 3, 1, 4, 2],
    ]);
    expect(rowOf(b.inputIds, 0, 8)).toEqual([1, 2, 3, 4, 5, 6, 0, 0]);
    expect(rowOf(b.inputIds, 1, 8)).toEqual([7, 8, 10, 11, 7, 8, 9, 0]);
    expect(Array.from(b.segmentIds)).toEqual([1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 2, 2, 2, 0]);
    expect(Array.from(b.positions)).toEqual([0, 1, 2, 3, 4, 5, 0, 0, 0, 1, 2, 3, 0, 1, 2, 0]);
    expect(Array.from(b.sessionIds)).toEqual([1, 1, 1, 1, 1, 1, 0, 0, 2, 2, 2, 2, 2, 2, 2, 0]);
  });

  it('marks sampled ids: mask, log-probs, versions and call indices', () => {
    expect(Array.from(b.responseMask)).toEqual([0, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0]);
    expect(Array.from(b.callIndex)).toEqual([-1, -1, 0, 0, -1, 1, -1, -1, -1, -1, -1, 1, -1, 0, 0, -1]);
    expect(Array.from(b.versions)).toEqual([-1, -1, 0, 0, -1, 1, -1, -1, -1, -1, -1, 2, -1, 1, 1, -1]);
    expect(rowOf(b.behaviorLogProbs, 0, 8)).toEqual([0, 0, -0.1, -0.2, 0, -0.3, 0, 0]);
    expect(b.oldLogProbs![5]).toBeCloseTo(-0.31, 15);
    expect(b.oldLogProbs![13]).toBeCloseTo(-0.41, 15);
    expect(b.support).toBeNull();
  });

  it('spreads each session advantage over its chain tokens and computes the weights', () => {
    for (let t = 0; t < 6; t++) expect(b.advantages[t]).toBeCloseTo(a, 12);
    for (let t = 8; t < 15; t++) expect(b.advantages[t]).toBeCloseTo(-a, 12);
    expect(b.advantages[6]).toBe(0);
    expect(b.sessionAdvantages[2]).toBe(0);
    expect(Array.from(b.sessionWeights).filter((w) => w > 0)).toEqual(new Array(6).fill(1 / 3)); // 3 tokens each
    expect(b.tokenRewards[5]).toBe(1); // s0's last sampled id
    expect(b.tokenRewards[11]).toBe(0.25); // s1's last call is in row 1, col 3
    expect(Array.from(b.tokenRewards).filter((r) => r !== 0).length).toBe(2);
  });

  it('counts sessions and reports efficiency', () => {
    expect(b.realTokens).toBe(13);
    expect(b.efficiency).toBe(13 / 16);
    expect(b.rowsNeeded).toBe(2);
    expect(b.counts).toEqual({
      total: 4,
      trained: 2,
      byStatus: { completed: 2, truncated: 1, cancelled: 0, failed: 1 },
      byTermination: { max_response_length: 1, sandbox_error: 1 },
    });
    expect(b.metrics['sessions/infrastructure_failures']).toBe(1);
    expect(b.metrics['batch/packing_efficiency']).toBe(13 / 16);
    expect(b.metrics['reward/mean']).toBe(0.625);
  });
});

describe('pack: options', () => {
  it('pads to a fixed row count, and refuses when rows do not suffice', () => {
    const b = ok(pack(sessions, 8, { rows: 3 }));
    expect(b.inputIds.length).toBe(24);
    expect(b.efficiency).toBe(13 / 24);
    expect(rowOf(b.segmentIds, 2, 8)).toEqual(new Array(8).fill(0));
    const r = pack(sessions, 8, { rows: 1 });
    expect(r).toMatchObject({ ok: false, reason: 'rows', rowsNeeded: 2 });
  });

  it('refuses a chain longer than the width, naming the session and its calls', () => {
    const r = pack(sessions, 5);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.reason).toBe('width');
    expect(r.message).toMatch(
      /session 0 \(task "t", group "g", sample 0, attempt 0\), calls 0–1: a chain of 6 ids does not fit in width 5/,
    );
    expect(r.rowsNeeded).toBe(3); // one row for the too-long chain, two for s1's chains (4 + 3 > 5)
  });

  it('truncation "score" trains truncated sessions and they join the group', () => {
    const b = ok(pack(sessions, 8, { truncation: 'score' }));
    expect(b.counts.trained).toBe(3);
    const g = grpoAdvantages([1, 0.25, 0.5], ['x', 'x', 'x']).advantages;
    expect(Array.from(b.sessionAdvantages.slice(0, 3))).toEqual(Array.from(g));
  });

  it('include "all" places sessions that do not train, with zero mask and advantage', () => {
    const b = ok(pack(sessions, 8, { include: 'all' }));
    expect(b.chains.map((c) => c.session).sort()).toEqual([0, 1, 1, 2, 3]);
    for (let t = 0; t < b.inputIds.length; t++)
      if (b.sessionIds[t] >= 3) {
        expect(b.responseMask[t]).toBe(0);
        expect(b.advantages[t]).toBe(0);
      }
    expect(b.counts.trained).toBe(2);
  });

  it('compat reaches the estimator, and other estimators match their functions', () => {
    const trl = ok(pack(sessions, 8, { advantage: { compat: 'trl' } }));
    expect(trl.sessionAdvantages[0]).toBeCloseTo(0.375 / (Math.sqrt(2 * 0.375 ** 2) + 1e-4), 12);
    const rloo = ok(pack(sessions, 8, { estimator: 'rloo' }));
    expect(Array.from(rloo.sessionAdvantages.slice(0, 2))).toEqual(
      Array.from(rlooAdvantages([1, 0.25], [0, 0]).advantages),
    );
    const rpp = ok(pack(sessions, 8, { estimator: 'reinforce++-baseline' }));
    const ref = reinforcePlusPlusBaseline([1, 0.25], [0, 0], [3, 3]).advantages;
    expect(rpp.sessionAdvantages[0]).toBeCloseTo(ref[0], 14);
    const none = ok(pack(sessions, 8, { estimator: 'none' }));
    expect(none.advantages.every((x) => x === 0)).toBe(true);
    const given = ok(pack(sessions, 8, { estimator: { given: [0.5, -2, 9, 9] } }));
    expect(given.advantages[0]).toBe(0.5);
    expect(given.advantages[8]).toBe(-2);
  });

  it("gdpo reads the trained sessions' components (not the reward) and whitens over their sampled ids", () => {
    const parts = [
      { boxed: 1, correct: 1 },
      { boxed: 1, correct: 0 },
      { boxed: 0, correct: 0 },
    ];
    const withParts = sessions.map((s, i) => (i < 3 ? { ...s, components: parts[i] } : s));
    const weights = { correct: 2, boxed: 1 };
    const g = ok(pack(withParts, 8, { estimator: 'gdpo', advantage: { weights } }));
    // Trained: sessions 0 and 1 (2 is truncated and masked, 3 failed), 3 sampled ids each.
    const ref = gdpoAdvantages({ boxed: [1, 1], correct: [1, 0] }, [0, 0], [3, 3], { weights }).advantages;
    expect(Array.from(g.sessionAdvantages.slice(0, 2))).toEqual(Array.from(ref));
    expect(g.advantageDetails?.estimator).toBe('gdpo');
    expect(() => pack(withParts, 8, { estimator: 'gdpo', advantage: { weights: { parsed: 1 } } })).toThrow(
      /component "parsed".*\["boxed","correct"\]/,
    );
  });

  it('zero-std groups: counted, and masked only with maskZeroAdvantage', () => {
    const same = sessions.slice(0, 2).map((s) => ({ ...s, reward: 1 }));
    const kept = ok(pack(same, 8));
    expect(kept.metrics['reward/frac_reward_zero_std']).toBe(1);
    expect(kept.metrics['batch/trainable_tokens']).toBe(6);
    const masked = ok(pack(same, 8, { maskZeroAdvantage: true }));
    expect(masked.metrics['batch/trainable_tokens']).toBe(0);
    expect(masked.chains.length).toBe(3); // still placed
    expect(masked.sessionWeights.every((w) => w === 0)).toBe(true);
    expect(masked.metrics['sessions/not_packed']).toBe(0);
  });

  it("estimator 'none' (OTB's advantages come later): maskZeroAdvantage masks all-equal groups of two or more, not a lone member", () => {
    const mixed = [
      { ...sessions[0], reward: 1 },
      { ...sessions[1], reward: 1 },
      { ...sessions[0], group: 'y', reward: 1 },
      { ...sessions[1], group: 'y', reward: 0 },
      { ...sessions[1], group: 'z', reward: 1 },
    ];
    const p = ok(pack(mixed, 8, { estimator: 'none', maskZeroAdvantage: true, include: 'carried' }));
    expect(new Set(p.chains.map((c) => c.session))).toEqual(new Set([2, 3, 4]));
    expect(p.counts.trained).toBe(3);
    expect(Array.from(p.advantages).every((a) => a === 0)).toBe(true);
    expect(ok(pack(mixed, 8, { estimator: 'none' })).counts.trained).toBe(5);
  });

  it('include "carried" leaves out the sessions masked for a zero advantage, counted, and packs the same trained ids', () => {
    // Group x (sessions 0, 1) all-equal, group y (2, 3) varied: only y's sessions carry mass.
    const mixed = [
      { ...sessions[0], reward: 1 },
      { ...sessions[1], reward: 1 },
      { ...sessions[0], group: 'y', reward: 1 },
      { ...sessions[1], group: 'y', reward: 0 },
    ];
    const all = ok(pack(mixed, 8, { maskZeroAdvantage: true }));
    const carried = ok(pack(mixed, 8, { maskZeroAdvantage: true, include: 'carried' }));
    expect(new Set(carried.chains.map((c) => c.session))).toEqual(new Set([2, 3]));
    expect(carried.metrics['sessions/not_packed']).toBe(2);
    expect(carried.rowsNeeded).toBeLessThan(all.rowsNeeded);
    expect(carried.metrics['batch/trainable_tokens']).toBe(all.metrics['batch/trainable_tokens']);
    expect(carried.counts.trained).toBe(all.counts.trained);
    // The masked ids of the full packing are exactly what "carried" leaves out.
    const massIds = (b: typeof all) =>
      Array.from(b.inputIds)
        .filter((_, t) => b.responseMask[t] > 0)
        .sort();
    expect(massIds(carried)).toEqual(massIds(all));
  });

  it('records the sampler support as CSR per id', () => {
    const s: Session = {
      ...base,
      status: 'completed',
      reward: 1,
      calls: [{ ...call([1], [2, 3]), support: [[2, 5], [3]] }],
    };
    const b = ok(pack([s], 4));
    const { offsets, ids } = b.support!;
    expect(Array.from(offsets)).toEqual([0, 0, 2, 3, 3]);
    expect(Array.from(ids)).toEqual([2, 5, 3]);
  });

  it('oldLogProbs is null without raw log-probs, and a mixed batch is refused naming the call', () => {
    const noRaw = sessions.slice(0, 2).map((s) => ({ ...s, calls: s.calls.map(({ rawLogProbs: _, ...c }) => c) }));
    expect(ok(pack(noRaw, 8)).oldLogProbs).toBeNull();
    const mixed = [sessions[0], noRaw[1]];
    expect(() => pack(mixed, 8)).toThrow(/session 1 \(task "t".*\), call 0: rawLogProbs is missing/);
  });

  it('refuses malformed sessions and options', () => {
    const bad = [{ ...sessions[0], calls: [call([1, 2], [3, -4])] }];
    expect(() => pack(bad, 8)).toThrow(/session 0 .*call 0, index 1: sampledIds\[1\] = -4/);
    expect(() => pack(sessions, 0)).toThrow(/width = 0/);
    expect(() => pack(sessions, 8, { rows: 1.5 })).toThrow(/rows = 1.5/);
    expect(() => pack(sessions, 8, { estimator: 'ppo' as never })).toThrow(/estimator = "ppo"/);
  });

  it('an empty batch packs to nothing', () => {
    const b = ok(pack([], 8));
    expect(b.rows).toBe(0);
    expect(b.efficiency).toBe(0);
  });
});

describe('pack + gae: per-session GAE continues across rows in call order', () => {
  it('s1 runs call 0 (row 1, cols 5–6) before call 1 (row 1, col 3)', () => {
    const b = ok(pack(sessions, 8, { estimator: 'none' }));
    const values = Float64Array.from(b.inputIds, (id) => id / 10);
    const out = gae(
      {
        rewards: b.tokenRewards,
        values,
        mask: b.responseMask,
        rows: b.rows,
        width: 8,
        sessionIds: b.sessionIds,
        callIndex: b.callIndex,
      },
      { whiten: false },
    );
    // γ = λ = 1: advantage = the session's reward − value, on every trainable token.
    for (let t = 0; t < 16; t++)
      if (b.responseMask[t]) {
        const reward = b.sessionIds[t] === 1 ? 1 : 0.25;
        expect(out.advantages[t], `token ${t}`).toBeCloseTo(reward - values[t], 14);
      }
  });
});
