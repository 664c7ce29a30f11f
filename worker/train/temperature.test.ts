import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { tinySftBase } from './testing/tiny-base';
import type { LoadedCheckpoint } from '../model/checkpoint';
import type { Scored } from '../model/model';
import { Model } from '../model/model';
import { offPolicyMetrics } from '../rl/corrections/off-policy-metrics';
import type { GrpoRunOptions } from '../contract/options';
import { GRPO_ARITH, GrpoRun } from './grpo';
import { PPO_ARITH, PpoRun } from './ppo';

// The trainer scores the policy the sampler drew from: at temperature T both use softmax(l / T)
// (verl's actor divides the logits by the rollout temperature before the log-softmax). With one
// update per batch the update's own forward is then the sampler's raw log-probs up to float32, and
// every sampler/trainer mismatch metric is ~0; scoring the same batch at T = 1 is far from both.

const T = 0.7;
const TOL = 1e-4;

/** One update per batch; truncated completions train too, so every session carries loss mass. */
const CONFIG: GrpoRunOptions = {
  ...GRPO_ARITH,
  prompts: 3,
  group: 4,
  maxNew: 8,
  evalN: 4,
  lr: 1e-2,
  maskZeroAdvantage: false,
  truncation: 'score',
  temperature: T,
  epochs: 1,
  miniBatches: 1,
};

/** The mismatch/* figures that measure a gap (0 when trainer ≡ sampler), and the ratios (1 then). */
const GAPS = ['kl', 'k3_kl', 'log_ppl_diff', 'log_ppl_abs_diff', 'log_ppl_diff_max', 'log_ppl_diff_min']
  .concat(['chi2_token', 'chi2_seq'])
  .map((k) => `mismatch/${k}`);
const RATIOS = ['ratio/mean', 'ratio/max', 'ratio/min', 'ppl_ratio'].map((k) => `mismatch/${k}`);

/** The largest |a − b| over the response ids. */
function maxGap(a: ArrayLike<number>, b: ArrayLike<number>, mask: ArrayLike<number>): number {
  let gap = 0;
  for (let i = 0; i < mask.length; i++) if (mask[i]) gap = Math.max(gap, Math.abs(a[i] - b[i]));
  return gap;
}

let base: LoadedCheckpoint;
beforeAll(async () => {
  base = await tinySftBase();
});

describe(`GRPO at temperature ${T}: the trainer scores the sampler's policy`, () => {
  it("the update's first forward and the reference equal the sampler's raw log-probs; mismatch ~0; at T = 1 they are not", async () => {
    const run = new GrpoRun(createCpuOps(), { ...CONFIG, beta: 0.05 }, base);
    const score = vi.spyOn(run.model, 'score');
    const reference = (run as unknown as { reference: Model }).reference;
    const refScore = vi.spyOn(reference, 'score');
    const s = await run.next();
    const p = s.packed;
    const mask = p.responseMask;
    expect(mask.reduce((n, m) => n + m, 0)).toBeGreaterThan(20);

    // The update's own forward: the policy scoring the packed batch, before any optimizer step.
    const call = score.mock.calls.findIndex(([batch]) => batch === p);
    expect(call).toBeGreaterThanOrEqual(0);
    expect(score.mock.calls[call][2]?.temperature).toBe(T);
    const first = (await score.mock.results[call].value) as Scored;
    // The sampler's raw log-probs (pack's oldLogProbs), id by id, and its behavior log-probs (no top-k/top-p: the same).
    const raw = p.oldLogProbs!;
    expect(maxGap(first.logp, raw, mask)).toBeLessThan(TOL);
    expect(maxGap(first.logp, p.behaviorLogProbs, mask)).toBeLessThan(TOL);
    // The sampler's own record: the packed raw log-probs are the generated ones.
    const byValue = (a: number, b: number) => a - b;
    const sampled = s.generated.flatMap((g) => Array.from(g.rawLogProbs)).sort(byValue);
    expect(
      Array.from(raw)
        .filter((_, i) => mask[i])
        .sort(byValue),
    ).toEqual(sampled);
    // The frozen reference scores at the same temperature (same weights at the first step), without adapters (none here).
    expect(refScore.mock.calls.map(([, , options]) => options)).toEqual([{ temperature: T, adapters: false }]);
    expect(maxGap(((await refScore.mock.results[0].value) as Scored).logp, raw, mask)).toBeLessThan(TOL);
    expect(Math.abs(s.metrics['rl/kl'])).toBeLessThan(TOL);

    // The step's figures: PPO's ratio is the trainer's forward over the old (raw) log-probs, and
    // verl's mismatch/* compare the training side (old) with behavior.
    expect(Math.abs(s.metrics['rl/ppo_kl'])).toBeLessThan(TOL);
    for (const k of GAPS) expect(Math.abs(s.metrics[k]), k).toBeLessThan(TOL);
    for (const k of RATIOS) expect(Math.abs(s.metrics[k] - 1), k).toBeLessThan(TOL);
    // The same measures with the trainer's own forward as the training side.
    const layout = { rows: p.rows, width: p.width, responseMask: mask, segmentIds: p.segmentIds };
    const trainer = offPolicyMetrics({ ...layout, logp: first.logp, behaviorLogp: p.behaviorLogProbs });
    for (const k of GAPS) expect(Math.abs(trainer[k]), `trainer ${k}`).toBeLessThan(TOL);
    for (const k of RATIOS) expect(Math.abs(trainer[k] - 1), `trainer ${k}`).toBeLessThan(TOL);

    // The same weights scoring at T = 1 (the trainer before this change): far from the sampler.
    const untempered = new Model(createCpuOps(), base.config);
    untempered.setWeights(base.weights);
    const atOne = (await untempered.score(p)).logp;
    expect(maxGap(atOne, raw, mask)).toBeGreaterThan(100 * TOL);
    const wrong = offPolicyMetrics({ ...layout, logp: atOne, behaviorLogp: p.behaviorLogProbs });
    expect(Math.abs(wrong['mismatch/kl'])).toBeGreaterThan(10 * TOL);
    expect(Math.abs(wrong['mismatch/log_ppl_abs_diff'])).toBeGreaterThan(10 * TOL);
    expect(Math.abs(wrong['mismatch/ratio/max'] - 1)).toBeGreaterThan(10 * TOL);
  });

  it('greedy sampling (T = 0) is scored at T = 1', async () => {
    const run = new GrpoRun(createCpuOps(), { ...CONFIG, temperature: 0 }, base);
    const score = vi.spyOn(run.model, 'score');
    const s = await run.next();
    const call = score.mock.calls.findIndex(([batch]) => batch === s.packed);
    expect(score.mock.calls[call][2]?.temperature).toBe(1);
    const first = (await score.mock.results[call].value) as Scored;
    expect(maxGap(first.logp, s.packed.oldLogProbs!, s.packed.responseMask)).toBeLessThan(TOL);
  });
});

describe(`PPO at temperature ${T}: the critic's scoring is the sampler's policy`, () => {
  it("the old log-probs the critic scored equal the sampler's raw log-probs; the mismatch metrics are ~0", async () => {
    const { prompts, group, maxNew, evalN, lr } = CONFIG;
    const config = { ...PPO_ARITH, prompts, group, maxNew, evalN, lr, temperature: T, epochs: 1, miniBatches: 1 };
    const run = new PpoRun(createCpuOps(), config, base);
    const score = vi.spyOn(run.model, 'score');
    const s = await run.next();
    const p = s.packed;
    // The critic's pass scores the batch packed before GAE (same ids, advantages still 0).
    const calls = score.mock.calls.map(([, , options]) => options);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    for (const options of calls) expect(options?.temperature).toBe(T);
    const old = (await score.mock.results[0].value) as Scored;
    expect(maxGap(old.logp, p.oldLogProbs!, p.responseMask)).toBeLessThan(TOL);
    for (const k of GAPS) expect(Math.abs(s.metrics[k]), k).toBeLessThan(TOL);
    for (const k of RATIOS) expect(Math.abs(s.metrics[k] - 1), k).toBeLessThan(TOL);
  });
});
