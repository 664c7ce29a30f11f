import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { tinySftBase } from './testing/tiny-base';
import type { LoadedCheckpoint } from '../model/checkpoint';
import { mulberry32 } from '../../kernels/common/random';
import { Model } from '../model/model';
import { grpoObjective } from '../rl/index';
import type * as MathRewardModule from '../rewards/math-reward';
import type { GrpoRunOptions } from '../contract/options';
import type { GrpoStep } from './grpo';
import { GRPO_ARITH, GrpoRun } from './grpo';
import { updateOnBatch } from './update';
import { pack } from '../rl/pack';
import { expectClose } from '../../kernels/testing/expect-close';

// A three-step SFT model never answers right, so every advantage would be 0 and no update would
// move the weights. The tests of the update loop swap in a reward that splits groups (the
// completion's length parity); the others keep MathReward.
const testReward = vi.hoisted(() => ({ on: false }));
vi.mock('../rewards/math-reward', async (importOriginal) => {
  const real = await importOriginal<typeof MathRewardModule>();
  const parity = (completion: string) => {
    const score = (completion.length % 2) as 0 | 1;
    return {
      score,
      components: { boxed: 0, parsed: 0, correct: score },
      extracted: null,
      detail: 'test reward: completion length parity',
    } as const;
  };
  return {
    ...real,
    mathReward: (completion: string, reference: string) =>
      testReward.on ? parity(completion) : real.mathReward(completion, reference),
  };
});

const CONFIG: GrpoRunOptions = {
  ...GRPO_ARITH,
  prompts: 3,
  group: 4,
  maxNew: 8,
  evalN: 4,
  lr: 1e-2,
  maskZeroAdvantage: false,
};

describe('GrpoRun (CPU, tiny model)', () => {
  it('samples P×G sessions, packs the trained ones (at most two a row), and steps on a dlogp that lives on sampled ids only', async () => {
    const base = await tinySftBase();
    const run = new GrpoRun(createCpuOps(), CONFIG, base);
    const s = await run.next();
    expect(s.sessions).toHaveLength(12);
    expect(new Set(s.sessions.map((x) => x.group)).size).toBe(3);
    expect(s.sessions.every((x) => x.calls[0].version === 0 && (x.reward === 0 || x.reward === 1))).toBe(true);
    expect(s.packed.rows).toBe(s.packed.rowsNeeded);
    expect(s.packed.rows).toBeLessThanOrEqual(6);
    expect(new Set(s.packed.chains.map((ch) => ch.session)).size).toBe(s.metrics['sessions/trained']);
    for (let i = 0; i < s.dlogp.length; i++) if (!s.packed.responseMask[i]) expect(s.dlogp[i]).toBe(0);
    expect(Number.isFinite(s.metrics['loss/total'])).toBe(true);
    expect(s.metrics['rl/ppo_kl']).toBeCloseTo(0, 5); // one optimizer step per batch: ratio ≡ 1 up to float32
    const weightsBefore = base.weights.get('model.layers.0.mlp.down_proj.weight')!;
    const after = (await run.model.getWeights()).get('model.layers.0.mlp.down_proj.weight')!;
    expect(after.some((w, i) => w !== weightsBefore[i])).toBe(s.metrics['reward/frac_reward_zero_std'] < 1);
  });

  it('is deterministic: same config and seed, same completions and metrics', async () => {
    const base = await tinySftBase();
    const a = await new GrpoRun(createCpuOps(), CONFIG, base).next();
    const b = await new GrpoRun(createCpuOps(), CONFIG, base).next();
    expect(a.generated.map((g) => [...g.sampledIds])).toEqual(b.generated.map((g) => [...g.sampledIds]));
    expect(a.metrics['loss/total']).toBe(b.metrics['loss/total']);
  });

  it('trainProblems: every step draws its prompts from the same training set', async () => {
    const base = await tinySftBase();
    const run = new GrpoRun(createCpuOps(), { ...CONFIG, trainProblems: 3 }, base);
    const ids = [await run.next(), await run.next()].map((s) => s.tasks.map((t) => t.id).sort());
    expect(ids[0]).toHaveLength(3);
    expect(new Set(ids[0]).size).toBe(3);
    expect(ids[1]).toEqual(ids[0]);
  });

  it('with beta > 0 adds the KL to a frozen reference (zero at the first step)', async () => {
    const base = await tinySftBase();
    const s = await new GrpoRun(createCpuOps(), { ...CONFIG, beta: 0.05 }, base).next();
    expect(s.metrics['rl/kl']).toBeCloseTo(0, 5);
  });
});

describe('GrpoRun honours every GrpoRunOptions field (CPU, tiny model, length-parity reward)', () => {
  // Truncated completions train too ('score'), so every session carries loss mass.
  const TRAIN: GrpoRunOptions = { ...CONFIG, truncation: 'score' };
  let base: LoadedCheckpoint;
  beforeAll(async () => {
    base = await tinySftBase();
    testReward.on = true;
  });
  afterAll(() => {
    testReward.on = false;
  });
  const first = (config: GrpoRunOptions) => new GrpoRun(createCpuOps(), config, base).next();
  const rowsMass = (s: GrpoStep, rows: readonly number[]) =>
    rows.reduce(
      (n, r) =>
        n + s.packed.responseMask.subarray(r * s.packed.width, (r + 1) * s.packed.width).reduce((a, b) => a + b, 0),
      0,
    );
  async function startingScore(s: GrpoStep) {
    const fresh = new Model(createCpuOps(), base.config);
    fresh.setWeights(base.weights);
    return (await fresh.score(s.packed)).logp;
  }

  it('leaving masked zero-advantage sessions out of the rows trains exactly as packing them would', async () => {
    const config: GrpoRunOptions = { ...TRAIN, maskZeroAdvantage: true, prompts: 6 };
    const s = await first(config);
    expect(s.metrics['sessions/not_packed']).toBeGreaterThan(0); // some all-equal groups this seed
    expect(s.metrics['sessions/not_packed']).toBeLessThan(s.sessions.length);
    const longest = Math.max(...s.generated.map((g) => g.promptIds.length + g.sampledIds.length));
    const weightsAfter = async (include: 'trained' | 'carried') => {
      const packed = pack(s.sessions, 2 * longest, { truncation: config.truncation, maskZeroAdvantage: true, include });
      if (!packed.ok) throw new Error(packed.message);
      const model = new Model(createCpuOps(), base.config);
      model.setWeights(base.weights);
      const t = await updateOnBatch({ model, reference: null, config, step: 1, onProgress: null }, packed);
      return { rows: packed.rows, loss: t.last!.metrics['loss/total'], weights: await model.getWeights() };
    };
    const [all, carried] = [await weightsAfter('trained'), await weightsAfter('carried')];
    expect(carried.rows).toBeLessThan(all.rows);
    expect(carried.loss).toBeCloseTo(all.loss, 9);
    for (const [name, w] of all.weights)
      expectClose(carried.weights.get(name)!, w, { atol: 1e-7, rtol: 1e-6, label: name });
  });

  it('one update is AdamW on the gradient of the objective it reports: a finite difference along a random direction agrees', async () => {
    const config: GrpoRunOptions = { ...TRAIN, maxGradNorm: 1e9, lr: 1e-3 };
    const run = new GrpoRun(createCpuOps(), config, base);
    const s = await run.next();
    expect(s.metrics['reward/frac_reward_zero_std']).toBeLessThan(1);
    const p = s.packed;
    // The objective as the step evaluated it, at any weights: old and behavior stay the sampler's.
    const lossAt = async (w: Map<string, Float32Array>) => {
      const m = new Model(createCpuOps(), base.config);
      m.setWeights(w);
      const { logp, entropy } = await m.score(p);
      const input = {
        rows: p.rows,
        width: p.width,
        logp,
        oldLogp: p.oldLogProbs ?? undefined,
        behaviorLogp: p.behaviorLogProbs,
        advantages: p.advantages,
        responseMask: p.responseMask,
        segmentIds: p.segmentIds,
        sessionWeights: p.sessionWeights,
        sessionIds: p.sessionIds,
        entropy,
      };
      return grpoObjective(input, {
        policyLoss: config.policyLoss,
        aggregation: config.aggregation,
        beta: 0,
        kl: config.kl,
      }).loss;
    };
    expect(await lossAt(base.weights)).toBeCloseTo(s.metrics['loss/total'], 6);
    // The gradient the step used (AdamW scales a copy when clipping; the gradients stay as computed).
    const grads = await run.model.getGradients();
    const rand = mulberry32(17);
    const h = 1e-3;
    const plus = new Map<string, Float32Array>();
    const minus = new Map<string, Float32Array>();
    let along = 0;
    let norm = 0;
    for (const [name, w] of base.weights) {
      const d = Float32Array.from(w, () => rand() * 2 - 1);
      const g = grads.get(name)!;
      for (let i = 0; i < w.length; i++) {
        along += g[i] * d[i];
        norm += d[i] * d[i];
      }
      plus.set(
        name,
        Float32Array.from(w, (x, i) => x + h * d[i]),
      );
      minus.set(
        name,
        Float32Array.from(w, (x, i) => x - h * d[i]),
      );
    }
    const fd = ((await lossAt(plus)) - (await lossAt(minus))) / (2 * h);
    expect(Math.abs(along), 'vacuous: the gradient is orthogonal to the direction').toBeGreaterThan(
      1e-3 * Math.sqrt(norm),
    );
    expect(Math.abs(fd - along)).toBeLessThan(0.01 * Math.abs(along));
    // AdamW's first step from zero moments (no decay at weightDecay 0): θ₁ − θ₀ = −lr · g / (|g| + ε).
    const after = await run.model.getWeights();
    for (const [name, w] of base.weights) {
      const g = grads.get(name)!;
      const moved = after.get(name)!;
      for (let i = 0; i < w.length; i += 7)
        expect(moved[i] - w[i]).toBeCloseTo((-config.lr * g[i]) / (Math.abs(g[i]) + config.eps), 6);
    }
  });

  it('epochs = 2: two optimizer steps on the batch; old log-probs are the rescoring before the first, so the second sees ratio ≠ 1', async () => {
    const run = new GrpoRun(createCpuOps(), { ...TRAIN, epochs: 2 }, base);
    const s = await run.next();
    expect(s.metrics['reward/frac_reward_zero_std']).toBeLessThan(1); // nonzero advantages: the updates move the weights
    expect(s.metrics['opt/steps_per_batch']).toBe(2);
    expect(s.updates.map((u) => [u.epoch, u.miniBatch, u.rows.length])).toEqual([
      [0, 0, 6],
      [1, 0, 6],
    ]);
    expect(s.oldLogp).not.toBeNull();
    expect(Array.from(s.oldLogp!)).toEqual(Array.from(await startingScore(s))); // verl old_log_prob: same weights, same numbers
    expect(Math.abs(s.updates[0].metrics['rl/ppo_kl'])).toBe(0); // logp and old are one forward
    expect(Math.abs(s.updates[1].metrics['rl/ppo_kl'])).toBeGreaterThan(1e-6);
    expect(s.metrics['rl/ppo_kl']).toBe(s.updates[1].metrics['rl/ppo_kl']); // the last step's metrics
    expect(s.metrics['opt/grad_norm']).toBe(s.updates[1].metrics['opt/grad_norm']);
    // mismatch compares the rescoring (not the sampler's raw log-probs) with behavior
    const single = await first(TRAIN);
    expect(single.oldLogp).toBeNull();
    expect(single.updates).toHaveLength(1);
    // AdamW counts optimizer steps across batches.
    expect((await run.model.getOptimizerState()).t).toBe(2);
    await run.next();
    expect((await run.model.getOptimizerState()).t).toBe(4);
  });

  it('miniBatches = 2: two steps on disjoint halves of the rows that cover every trained token once, each aggregated over its own tokens', async () => {
    const s = await first({ ...TRAIN, miniBatches: 2 });
    const W = s.packed.width;
    expect(s.metrics['opt/steps_per_batch']).toBe(2);
    const [a, b] = s.updates.map((u) => u.rows);
    expect([a.length, b.length]).toEqual([s.packed.rows / 2, s.packed.rows / 2]);
    expect(new Set([...a, ...b]).size).toBe(s.packed.rows); // disjoint and covering
    expect(s.updates.map((u) => u.tokens)).toEqual([rowsMass(s, a), rowsMass(s, b)]);
    expect(rowsMass(s, a) * rowsMass(s, b)).toBeGreaterThan(0);
    expect(s.updates[0].tokens + s.updates[1].tokens).toBe(s.packed.metrics['batch/trainable_tokens']);
    // Old log-probs: each mini-batch rescored alone under the starting weights equals the whole batch scored at once.
    const start = await startingScore(s);
    s.oldLogp!.forEach((x, i) => expect(x).toBeCloseTo(start[i], 5));
    // First step: ratio ≡ 1 exactly, so PPO's token-mean seed is −A/N over its own N tokens; the second sees the moved weights.
    expect(Math.abs(s.updates[0].metrics['rl/ppo_kl'])).toBe(0);
    expect(Math.abs(s.updates[1].metrics['rl/ppo_kl'])).toBeGreaterThan(1e-6);
    for (const r of a) {
      for (let i = r * W; i < (r + 1) * W; i++)
        expect(s.dlogp[i]).toBeCloseTo(
          s.packed.responseMask[i] ? -s.packed.advantages[i] / s.updates[0].tokens : 0,
          12,
        );
    }
    for (const r of b)
      for (let i = r * W; i < (r + 1) * W; i++) if (!s.packed.responseMask[i]) expect(s.dlogp[i]).toBe(0);
  });

  it(
    'importance: with behavior ≠ old (top-p 0.9) a TIS cap and an IcePop band each change the loss; without a ' +
      'filter they change nothing, at any temperature',
    async () => {
      // Old is the full softmax at the temperature, behavior the nucleus renormalised: π_old / μ is the kept mass, ≤ 1.
      const T = { ...TRAIN, temperature: 0.7, topP: 0.9 };
      const none = await first(T);
      const tis = await first({ ...T, importance: { kind: 'tis', level: 'token', cap: 0.98, batchNormalize: false } });
      const band = await first({
        ...T,
        importance: { kind: 'band', level: 'token', low: 0.92, high: 1.05, batchNormalize: false },
      });
      const rejected = await first({ ...T, rejection: { token_k1: 1.05 } });
      for (const s of [tis, band, rejected])
        expect(s.generated.map((g) => [...g.sampledIds])).toEqual(none.generated.map((g) => [...g.sampledIds]));
      expect(Math.abs(none.metrics['mismatch/kl'])).toBeGreaterThan(1e-4);
      const losses = [none, tis, band, rejected].map((s) => s.metrics['loss/policy']);
      expect(new Set(losses).size).toBe(4);
      expect(band.metrics['mismatch/rollout_is_oob_ratio']).toBeGreaterThan(0);
      expect(rejected.metrics['mismatch/rollout_rs_masked_fraction']).toBeGreaterThan(0);
      // No filter: behavior = raw = old at the temperature (the trainer scores logits / T), every weight is 1.
      for (const temperature of [1, 0.7]) {
        const plain = await first({ ...TRAIN, temperature });
        const capped = await first({
          ...TRAIN,
          temperature,
          importance: { kind: 'tis', level: 'token', cap: 1.5, batchNormalize: false },
        });
        expect(Math.abs(plain.metrics['mismatch/kl'])).toBeLessThan(1e-6);
        expect(capped.metrics['loss/policy']).toBeCloseTo(plain.metrics['loss/policy'], 5);
      }
    },
  );

  it('estimator, advantage and truncation reach pack: RLOO gives other advantages than GRPO on the same batch', async () => {
    const grpo = await first(TRAIN);
    const rloo = await first({ ...TRAIN, advantage: { estimator: 'rloo', normalize: false } });
    const drGrpo = await first({ ...TRAIN, advantage: { estimator: 'grpo', scale: 'none' } });
    const masked = await first({ ...TRAIN, truncation: 'mask' });
    expect(rloo.sessions.map((s) => s.reward)).toEqual(grpo.sessions.map((s) => s.reward));
    // RLOO by hand: a_i = r_i − mean of the other members of its group.
    const expected = rloo.sessions.map((s) => {
      const others = rloo.sessions.filter((o) => o.group === s.group && o !== s).map((o) => o.reward!);
      return s.reward! - others.reduce((x, y) => x + y, 0) / others.length;
    });
    Array.from(rloo.packed.sessionAdvantages).forEach((a, i) => expect(a).toBeCloseTo(expected[i], 12));
    expect(Array.from(rloo.packed.sessionAdvantages)).not.toEqual(Array.from(grpo.packed.sessionAdvantages));
    expect(rloo.metrics['loss/policy']).not.toBe(grpo.metrics['loss/policy']);
    // Dr. GRPO: centred, not divided by the std.
    expect(Array.from(drGrpo.packed.sessionAdvantages)).not.toEqual(Array.from(grpo.packed.sessionAdvantages));
    expect(grpo.metrics['sessions/truncated']).toBeGreaterThan(0);
    expect(masked.packed.counts.trained).toBe(grpo.packed.counts.trained - grpo.metrics['sessions/truncated']);
  });

  it('kl: the configured estimator measures the KL to the frozen reference', async () => {
    const k3 = await first({ ...TRAIN, beta: 0.05, epochs: 2 });
    const k1 = await first({ ...TRAIN, beta: 0.05, epochs: 2, kl: { estimator: 'k1' } });
    expect(k3.metrics['rl/kl']).toBeGreaterThan(0); // the second step's weights moved off the reference
    expect(k1.metrics['rl/kl']).not.toBeCloseTo(k3.metrics['rl/kl'], 9);
    expect(k3.metrics['loss/kl']).toBeCloseTo(0.05 * k3.metrics['rl/kl'], 12);
  });

  it('is deterministic with shuffled mini-batches over epochs: same seed, same rows, metrics and weights', async () => {
    const config = { ...TRAIN, epochs: 2, miniBatches: 3 };
    const runs = [new GrpoRun(createCpuOps(), config, base), new GrpoRun(createCpuOps(), config, base)];
    const noPerf = (m: Record<string, number>) =>
      Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('perf/')));
    for (let step = 0; step < 2; step++) {
      const [a, b] = [await runs[0].next(), await runs[1].next()];
      expect(a.updates).toHaveLength(6);
      expect(a.updates.map((u) => u.rows)).toEqual(b.updates.map((u) => u.rows));
      expect(a.updates[0].rows).not.toEqual(a.updates[3].rows); // reshuffled per epoch
      expect(noPerf(a.metrics)).toEqual(noPerf(b.metrics));
      expect(Array.from(a.dlogp)).toEqual(Array.from(b.dlogp));
    }
    const [wa, wb] = [await runs[0].model.getWeights(), await runs[1].model.getWeights()];
    for (const [name, w] of wa) expect(Array.from(w)).toEqual(Array.from(wb.get(name)!));
  });
});
