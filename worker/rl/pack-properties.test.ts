import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../kernels/common/random';
import { grpoAdvantages } from './advantages/index';
import { pack, type PackedBatch } from './pack';
import { trains, type Call, type Session, type Status } from './types';

interface Generated {
  sessions: Session[];
  /** Per session, per call: whether it was built to extend the previous call. */
  extendsPrev: boolean[][];
}

function randomSessions(seed: number): Generated {
  const rand = mulberry32(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const ids = (n: number) => Array.from({ length: n }, () => int(0, 50));
  const statuses: Status[] = ['completed', 'completed', 'completed', 'truncated', 'cancelled', 'failed'];
  const sessions: Session[] = [];
  const extendsPrev: boolean[][] = [];
  for (let i = 0, n = int(1, 12); i < n; i++) {
    const calls: Call[] = [];
    const ext: boolean[] = [];
    for (let c = 0, k = int(1, 4); c < k; c++) {
      const prev = calls.at(-1);
      const extend = prev !== undefined && rand() < 0.7;
      // A fresh prompt starts with an id no earlier call of this session used, so it never extends by accident.
      const promptIds = extend
        ? [...Array.from(prev.promptIds), ...Array.from(prev.sampledIds), ...ids(int(0, 3))]
        : [1000 + c, ...ids(int(0, 4))];
      const sampledIds = ids(int(0, 4));
      calls.push({
        promptIds,
        sampledIds,
        behaviorLogProbs: sampledIds.map(() => -rand() * 3),
        rawLogProbs: sampledIds.map(() => -rand() * 3),
        finishReason: rand() < 0.5 ? 'stop' : 'length',
        version: int(0, 5),
      });
      ext.push(extend);
    }
    const status = statuses[int(0, statuses.length - 1)];
    const scored = status === 'completed' || status === 'truncated';
    sessions.push({
      task: `t${int(0, 2)}`,
      group: `g${int(0, 1)}`,
      sample: i,
      attempt: 0,
      calls,
      status,
      reward: scored ? int(0, 4) / 4 : null,
    });
    extendsPrev.push(ext);
  }
  return { sessions, extendsPrev };
}

function chainIds(s: Session, firstCall: number, calls: number): number[] {
  const last = s.calls[firstCall + calls - 1];
  return [...Array.from(last.promptIds), ...Array.from(last.sampledIds)];
}

function checkBatch(b: PackedBatch, { sessions, extendsPrev }: Generated, truncation: 'mask' | 'score') {
  const { width } = b;
  const cover = new Int32Array(b.rows * width);
  // Every chain's ids, positions and segment are where the placement says.
  for (const ch of b.chains) {
    expect(ch.offset + ch.length).toBeLessThanOrEqual(width);
    const expected = chainIds(sessions[ch.session], ch.firstCall, ch.calls);
    expect(ch.length).toBe(expected.length);
    for (let j = 0; j < ch.length; j++) {
      const t = ch.row * width + ch.offset + j;
      cover[t]++;
      expect(b.inputIds[t]).toBe(expected[j]);
      expect(b.positions[t]).toBe(j);
      expect(b.segmentIds[t]).toBe(ch.segment);
      expect(b.sessionIds[t]).toBe(ch.session + 1);
    }
  }
  // Every real id exactly once; padding is exactly the uncovered entries.
  for (let t = 0; t < cover.length; t++) {
    expect(cover[t]).toBeLessThanOrEqual(1);
    expect(b.segmentIds[t] > 0).toBe(cover[t] === 1);
  }
  expect(b.realTokens).toBe(cover.reduce((a, x) => a + x, 0));
  // Strict merging: one chain per fresh call, covering all calls in order.
  sessions.forEach((s, i) => {
    const chains = b.chains.filter((c) => c.session === i).sort((x, y) => x.firstCall - y.firstCall);
    if (!trains(s.status, truncation)) return expect(chains.length).toBe(0);
    expect(chains.length).toBe(extendsPrev[i].filter((e) => !e).length);
    let next = 0;
    for (const c of chains) {
      expect(c.firstCall).toBe(next);
      expect(extendsPrev[i][c.firstCall]).toBe(false);
      next += c.calls;
    }
    expect(next).toBe(s.calls.length);
  });
  // Stable decreasing order, first fit, segments 1..k from the row start with no gaps.
  const used: number[] = [];
  const segs: number[] = [];
  b.chains.forEach((c, k) => {
    if (k > 0) {
      const p = b.chains[k - 1];
      expect(p.length >= c.length).toBe(true);
      if (p.length === c.length)
        expect(p.session < c.session || (p.session === c.session && p.firstCall < c.firstCall)).toBe(true);
    }
    for (let r = 0; r < c.row; r++) expect(used[r] + c.length).toBeGreaterThan(width);
    if (c.row === used.length) {
      used.push(0);
      segs.push(0);
    }
    expect(c.offset).toBe(used[c.row]);
    expect(c.segment).toBe(++segs[c.row]);
    used[c.row] += c.length;
  });
  expect(used.length).toBe(b.rowsNeeded);
  // Masks aligned with sampled ids.
  let mass = 0;
  for (const ch of b.chains) {
    const s = sessions[ch.session];
    for (let k = ch.firstCall; k < ch.firstCall + ch.calls; k++) {
      const call = s.calls[k];
      for (let i = 0; i < call.sampledIds.length; i++) {
        const t = ch.row * width + ch.offset + call.promptIds.length + i;
        expect(b.inputIds[t]).toBe(call.sampledIds[i]);
        expect(b.responseMask[t]).toBe(1);
        expect(b.behaviorLogProbs[t]).toBe(call.behaviorLogProbs[i]);
        expect(b.oldLogProbs![t]).toBe(call.rawLogProbs![i]);
        expect(b.callIndex[t]).toBe(k);
        expect(b.versions[t]).toBe(call.version);
        mass++;
      }
    }
  }
  expect(b.responseMask.reduce((a, x) => a + x, 0)).toBe(mass);
  for (let t = 0; t < b.responseMask.length; t++) if (!b.responseMask[t]) expect(b.behaviorLogProbs[t]).toBe(0);
  const withMass = new Set(
    b.chains
      .filter((c) =>
        sessions[c.session].calls.slice(c.firstCall, c.firstCall + c.calls).some((k) => k.sampledIds.length > 0),
      )
      .map((c) => c.session),
  );
  expect(b.sessionWeights.reduce((a, x) => a + x, 0)).toBeCloseTo(withMass.size, 12);
}

describe('pack properties on seeded random sessions', () => {
  for (let seed = 1; seed <= 40; seed++) {
    it(`seed ${seed}`, () => {
      const gen = randomSessions(seed);
      const truncation = seed % 2 ? 'mask' : 'score';
      const longest = Math.max(
        1,
        ...gen.sessions.flatMap((s) => s.calls.map((c) => c.promptIds.length + c.sampledIds.length)),
      );
      const width = longest + (seed % 7) * 3;
      const r = pack(gen.sessions, width, { truncation });
      expect(r.ok).toBe(true);
      if (!r.ok) return;
      checkBatch(r, gen, truncation);
      // Advantages are the estimator's over the trained sessions' (task, group).
      const idx = gen.sessions.map((_, i) => i).filter((i) => trains(gen.sessions[i].status, truncation));
      const ref = grpoAdvantages(
        idx.map((i) => gen.sessions[i].reward!),
        idx.map((i) => `${gen.sessions[i].task}/${gen.sessions[i].group}`),
      );
      idx.forEach((i, k) => expect(r.sessionAdvantages[i]).toBeCloseTo(ref.advantages[k], 12));
      expect(r.metrics['reward/frac_reward_zero_std']).toBeCloseTo(ref.fracRewardZeroStd, 15);
      // One row fewer is refused with the same count.
      if (r.rowsNeeded > 0)
        expect(pack(gen.sessions, width, { truncation, rows: r.rowsNeeded - 1 })).toMatchObject({
          ok: false,
          reason: 'rows',
          rowsNeeded: r.rowsNeeded,
        });
      // Reversing the input keeps each session's advantage.
      const rev = pack([...gen.sessions].reverse(), width, { truncation });
      if (!rev.ok) throw new Error(rev.message);
      const n = gen.sessions.length;
      idx.forEach((i) => expect(rev.sessionAdvantages[n - 1 - i]).toBeCloseTo(r.sessionAdvantages[i], 12));
    });
  }
});
