import { describe, expect, it, vi } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { toolTokenizer } from '../data/tokenizer';
import type { EpisodeGrpoRunOptions, GrpoRunOptions } from '../contract/options';
import { exportCheckpoint, importCheckpoint, type LoadedCheckpoint } from '../model/checkpoint';
import { modelPreset } from '../model/config';
import { Model } from '../model/model';
import { batchRecord, groupRecords } from '../presets/records';
import type * as MathRewardModule from '../rewards/math-reward';
import { otbPacked } from '../rl/index';
import type { PackedBatch } from '../rl/pack-types';
import type { Session } from '../rl/types';
import { GRPO_ARITH, GrpoRun } from './grpo';
import { EpisodeRun, GRPO_CALC } from './grpo-episodes';
import { tinySftBase } from './testing/tiny-base';

// The three-step SFT base never answers right, so every group would be all 0 and OTB's advantages
// too: as grpo.test.ts, the reward here is the completion's length parity, which splits groups.
vi.mock('../rewards/math-reward', async (importOriginal) => {
  const real = await importOriginal<typeof MathRewardModule>();
  return {
    ...real,
    mathReward: (completion: string) => {
      const score = (completion.length % 2) as 0 | 1;
      return { score, components: { boxed: 0, parsed: 0, correct: score }, extracted: null, detail: 'parity' } as const;
    },
  };
});

const CONFIG: GrpoRunOptions = {
  ...GRPO_ARITH,
  prompts: 3,
  group: 4,
  maxNew: 8,
  evalN: 4,
  lr: 1e-2,
  advantage: { estimator: 'otb' },
  maskZeroAdvantage: false,
  // The tiny base seldom stops within 8 ids: scored, its truncated completions train too.
  truncation: 'score',
};
const exact = (m: Record<string, number>) =>
  Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('perf/')));

/** OTB recomputed from scratch: the base's weights score the packed batch (old log-probs, Σπ²), then the estimator. */
async function recomputed(
  base: LoadedCheckpoint,
  p: PackedBatch,
  sessions: readonly Session[],
  align: 'position' | 'token',
) {
  const model = new Model(createCpuOps(), base.config, { frozen: true });
  model.setWeights(base.weights);
  const scored = await model.score(p, undefined, { temperature: 1, sumPiSquared: true });
  return otbPacked(
    {
      ...p,
      oldLogp: scored.logp,
      sumPiSquared: scored.sumPiSquared!,
      groupOf: (i) => JSON.stringify([sessions[i].task, sessions[i].group]),
    },
    { align },
  ).advantages;
}

describe('GrpoRun with the OTB estimator (CPU, tiny model)', () => {
  it('trains on per-token advantages that vary along a completion, as OTB computes them from the scored batch', async () => {
    const base = await tinySftBase();
    const run = new GrpoRun(createCpuOps(), CONFIG, base);
    const s = await run.next();
    for (const [k, v] of Object.entries(s.metrics)) expect(Number.isFinite(v), k).toBe(true);
    expect(s.metrics['otb/sum_pi_squared/mean']).toBeGreaterThan(0);
    // The advantages are OTB's of the batch scored under the weights it was sampled with.
    const want = await recomputed(base, s.packed, s.sessions, 'position');
    const a = s.packed.advantages;
    for (let i = 0; i < a.length; i++) expect(a[i], `id ${i}`).toBeCloseTo(s.packed.responseMask[i] ? want[i] : 0, 12);
    // Within some completion the advantage differs from one token to the next (GRPO's is one number per completion).
    const perSession = new Map<number, number[]>();
    a.forEach(
      (x, i) =>
        s.packed.responseMask[i] &&
        perSession.set(s.packed.sessionIds[i], [...(perSession.get(s.packed.sessionIds[i]) ?? []), x]),
    );
    const varying = [...perSession.values()].filter((xs) => xs.some((x) => Math.abs(x - xs[0]) > 1e-6));
    expect(varying.length).toBeGreaterThan(0);
    // The old log-probs are the OTB scoring's, with no second pass: the first update's ratio is exactly 1.
    expect(s.oldLogp).not.toBeNull();
    expect(s.metrics['rl/ppo_kl']).toBe(0);
    // The views: the Groups view explains OTB, the Batch view colours its per-token advantages.
    const groups = groupRecords(s, base.tokenizer);
    expect(groups.every((g) => g.estimate?.estimator === 'otb' && g.estimate.baseline === null)).toBe(true);
    expect(groups.flatMap((g) => g.samples).every((x) => x.baseline !== undefined)).toBe(true);
    const layer = batchRecord(s, base.tokenizer).layers.advantage;
    expect(Array.from(layer)).toEqual(Array.from(a, (x, i) => Math.fround(s.packed.responseMask[i] ? x : 0)));
  });

  it('is deterministic: same config and seed, same advantages and metrics over two steps', async () => {
    const base = await tinySftBase();
    const steps = async () => {
      const run = new GrpoRun(createCpuOps(), CONFIG, base);
      return [await run.next(), await run.next()];
    };
    const [a, b] = [await steps(), await steps()];
    for (const k of [0, 1]) {
      expect(Array.from(b[k].packed.advantages)).toEqual(Array.from(a[k].packed.advantages));
      expect(exact(b[k].metrics)).toEqual(exact(a[k].metrics));
    }
    expect(a[1].metrics['otb/advantages/std']).toBeGreaterThan(0);
  });

  it('with rollout IS weights and a rejection mask (verl applies both before OTB): finite, and said in the settings', async () => {
    const base = await tinySftBase();
    const o: GrpoRunOptions = {
      ...CONFIG,
      importance: { kind: 'tis', level: 'token', cap: 2, batchNormalize: false },
      rejection: { token_k1: 2 },
    };
    const s = await new GrpoRun(createCpuOps(), o, base).next();
    for (const [k, v] of Object.entries(s.metrics)) expect(Number.isFinite(v), k).toBe(true);
    expect(s.packed.advantageDetails?.settings).toMatchObject({ isWeights: true, rejection: true });
  });

  it("keeps the adaptive entropy bonus's controller from step to step, as the other updates do", async () => {
    const base = await tinySftBase();
    const entropyBonus = { kind: 'adaptive', coef: 0.01, min: 0, max: 0.5, delta: 0.005, target: 5 } as const;
    const run = new GrpoRun(createCpuOps(), { ...CONFIG, entropyBonus }, base);
    const s = await run.next();
    expect(run.position().entropy?.coef).toBe(s.metrics['rl/entropy_coef_next']);
    expect(s.metrics['rl/entropy_coef_next']).not.toBe(0.01);
  });

  it('masks all-equal groups with maskZeroAdvantage, and OTB runs on the groups left', async () => {
    const base = await tinySftBase();
    const s = await new GrpoRun(
      createCpuOps(),
      { ...CONFIG, prompts: 6, group: 2, maskZeroAdvantage: true },
      base,
    ).next();
    const carried = new Set(
      Array.from(s.packed.sessionIds)
        .filter((x) => x > 0)
        .map((x) => x - 1),
    );
    const byGroup = new Map<string, number[]>();
    s.sessions.forEach((x, i) => byGroup.set(x.group, [...(byGroup.get(x.group) ?? []), i]));
    const varied = [...byGroup.values()].map((members) => new Set(members.map((i) => s.sessions[i].reward)).size > 1);
    expect(new Set(varied)).toEqual(new Set([true, false])); // both kinds of group: the check can fail
    [...byGroup.values()].forEach((members, k) => {
      for (const i of members) expect(carried.has(i)).toBe(varied[k]);
    });
  });
});

describe('EpisodeRun with otb-tir (CPU, tiny model)', () => {
  it('trains one step on the action tokens, OTB aligned by action index', async () => {
    const tok = toolTokenizer();
    const model = new Model(createCpuOps(), { ...modelPreset('tiny', tok.size), maxSeq: 96 });
    model.initWeights(3);
    const base = importCheckpoint(await exportCheckpoint(model, tok, { note: 'test base' }));
    const options: EpisodeGrpoRunOptions = {
      ...GRPO_CALC,
      prompts: 2,
      group: 3,
      lr: 1e-2,
      evalN: 4,
      maskZeroAdvantage: false,
      advantage: { estimator: 'otb-tir' },
    };
    const s = await new EpisodeRun(createCpuOps(), { environment: 'calc', options }, base).next();
    for (const [k, v] of Object.entries(s.metrics)) expect(Number.isFinite(v), k).toBe(true);
    expect(s.packed.advantageDetails?.estimator).toBe('otb-tir');
    const want = await recomputed(base, s.packed, s.sessions, 'token');
    s.packed.advantages.forEach((x, i) => expect(x).toBeCloseTo(want[i], 12));
  });
});
