/**
 * DPO on arithmetic (or a person's prompt dataset, task-source.ts) from the base checkpoint:
 * preference pairs from the base model's own samples (G completions per prompt at temperature 1;
 * chosen = the first correct one, rejected = the first incorrect one under MathReward or the
 * dataset's reward; prompts without both give no pair), the frozen base as reference, the RL core's
 * `dpoLoss`, plus an optional NLL term on the chosen completion (TRL `rpo_alpha`): docs/calibration.md "DPO"
 * found plain DPO collapses greedy accuracy here and DPO + NLL (weight 1) gains ~15 points.
 * One optimizer step per `next()`.
 */
import type { Ops } from '../../kernels/ops';
import type { LoadedCheckpoint } from '../model/checkpoint';
import { stopsOf } from '../model/checkpoint';
import { rowPerSequence } from '../model/packing';
import type { Model } from '../model/model';
import { dropoutSeedOf, loraFromOptions } from '../model/lora';
import { runModels } from './policy';
import { wasmDpoPlan } from '../hf/memory';
import { taskMathReward } from '../rewards/task-math-reward';
import type { DpoRunOptions } from '../contract/options';
import type { PhaseReport } from '../contract/records';
import { syncDatasetReward } from '../rewards/dataset-reward';
import { dpoLoss } from '../rl/index';
import { generate } from '../rollout/generate';
import type { EvalProgress, EvalResult } from './evaluate';
import { stepOptions } from './optimizer';
import type { PairReward, PendingPair, ResumePoint, TrainerPosition } from './resume';
import { restore } from './resume';
import type { RunTask, TaskSource } from './task-source';
import { ARITH_TASK, taskSourceOf } from './task-source';

/**
 * dpo-arith's options (the form's defaults): 16 pairs per step from 8 samples per prompt at T = 1,
 * β = 0.1 sigmoid DPO plus the NLL term on chosen completions (weight 1, TRL rpo_alpha: plain DPO
 * collapses accuracy here, docs/calibration.md "DPO"), AdamW lr 1e-4, (0.9, 0.99), wd 0.
 */
export const DPO_ARITH: DpoRunOptions = {
  preset: 'dpo-arith',
  steps: 150,
  lr: 1e-4,
  seed: 1,
  pairs: 16,
  beta: 0.1,
  loss: { type: 'sigmoid', labelSmoothing: 0 },
  nllWeight: 1.0,
  samplesPerPrompt: 8,
  temperature: 1,
  maxNew: 16,
  beta1: 0.9,
  beta2: 0.99,
  eps: 1e-8,
  weightDecay: 0,
  maxGradNorm: 1.0,
  evalEvery: 10,
  evalN: 100,
  checkpointEvery: 50,
};

/** A run's LoRA as the memory plan takes it: `{ lora }`, or nothing without a rank. */
const loraOf = (c: DpoRunOptions) => {
  const lora = loraFromOptions(c);
  return lora ? { lora } : {};
};

/** A preference pair (chosen = a correct completion of the base, rejected = an incorrect one for the same prompt). */
export type Pair = PendingPair;

/** One DPO optimizer step: its metrics, the pairs it trained on, and each completion's implicit reward. */
export interface DpoStep {
  metrics: Record<string, number>;
  pairs: Pair[];
  /**
   * β · Σ (log π − log π_ref) over each completion before the update, [chosen₀, rejected₀,
   * chosen₁, …]: DPO's implicit reward (TRL `rewards/chosen`, `rewards/rejected` per pair).
   */
  implicitRewards: Float64Array;
  /** Per pair, the DPO loss variant's value for that pair before the update (`loss/dpo` is their mean; the NLL term is not in it). */
  pairLosses: Float64Array;
  /** Per pair, the reward its chosen and its rejected completion were chosen by (MathReward or the dataset's). */
  rewards: { chosen: PairReward; rejected: PairReward }[];
}

export class DpoRun {
  readonly model: Model;
  private readonly reference: Model;
  private readonly source: TaskSource;
  /** Score 1 for a correct completion, 0 for an incorrect one: MathReward, or the dataset's reward. */
  private readonly reward: (completion: string, task: RunTask) => PairReward;
  private readonly pending: Pair[] = [];
  private sampled = 0;
  step = 0;
  /** Told where the step under way is (sampling pairs, the reference's log-probs, training). */
  onProgress: PhaseReport | null = null;

  constructor(
    ops: Ops,
    readonly config: DpoRunOptions,
    readonly base: LoadedCheckpoint,
  ) {
    const models = runModels(ops, base, config, { reference: true });
    this.model = models.model;
    this.reference = models.reference!;
    this.source = taskSourceOf(config, ARITH_TASK, base.tokenizer, base.config.maxSeq);
    const dataset = config.dataset ? syncDatasetReward(config.dataset.reward) : null;
    this.reward = (completion, task) => {
      const r = dataset ? dataset(completion, task.answer) : taskMathReward(completion, task);
      return { score: r.score, components: r.components, detail: r.detail };
    };
  }

  /** Samples prompts with the frozen base until `n` pairs are waiting; returns prompts sampled and the ids generated. */
  private async fill(n: number): Promise<{ prompts: number; sampledTokens: number }> {
    const c = this.config;
    const tok = this.base.tokenizer;
    let prompts = 0;
    let sampledTokens = 0;
    for (let round = 0; this.pending.length < n; round++) {
      if (round > 50)
        throw new Error(
          `DPO: found only ${this.pending.length} of ${n} pairs in 50 rounds of sampling: the base model is always right or always wrong on these prompts`,
        );
      const tasks = this.source.stream.take(c.pairs);
      const ids = tasks.map((t) => this.source.promptIds(t));
      // On wasm, a step that would not fit its memory is refused before sampling, naming each part (hf/memory.ts).
      const plan =
        this.model.ops.backend === 'wasm'
          ? wasmDpoPlan(this.base.config, { ...c, ...loraOf(c) }, Math.max(...ids.map((p) => p.length)))
          : null;
      if (plan?.problem) throw new Error(plan.problem);
      this.onProgress?.('sampling', this.pending.length, n, 'pairs found');
      const gens = await generate(
        this.reference,
        tasks.flatMap((_, i) => Array.from({ length: c.samplesPerPrompt }, () => ids[i])),
        {
          maxNew: c.maxNew,
          ...stopsOf(tok),
          seed: c.seed * 7919 + ++this.sampled,
          temperature: c.temperature,
          adapters: false,
        },
      );
      prompts += tasks.length;
      sampledTokens += gens.reduce((k, g) => k + g.sampledIds.length, 0);
      tasks.forEach((task, i) => {
        // Each completion scored once: the pair keeps the rewards it was chosen by.
        const mine = gens
          .slice(i * c.samplesPerPrompt, (i + 1) * c.samplesPerPrompt)
          .filter((g) => g.finishReason === 'stop')
          .map((g) => ({ g, r: this.reward(tok.decode(g.sampledIds), task) }));
        const correct = mine.find((x) => x.r.score === 1);
        const wrong = mine.find((x) => x.r.score === 0);
        if (correct && wrong)
          this.pending.push({
            task,
            prompt: ids[i],
            chosen: correct.g.sampledIds,
            rejected: wrong.g.sampledIds,
            calls: { chosen: correct.g, rejected: wrong.g },
            rewards: { chosen: correct.r, rejected: wrong.r },
          });
      });
    }
    return { prompts, sampledTokens };
  }

  async next(): Promise<DpoStep> {
    const c = this.config;
    const t0 = performance.now();
    const { prompts, sampledTokens } = await this.fill(c.pairs);
    const pairs = this.pending.splice(0, c.pairs);
    this.step++;
    const tSample = performance.now();
    // [2·pairs, width]: row 2i = prompt + chosen, row 2i+1 = prompt + rejected (dew layout).
    const batch = rowPerSequence(
      pairs.flatMap((p) => [
        [...p.prompt, ...p.chosen],
        [...p.prompt, ...p.rejected],
      ]),
    );
    const { width } = batch;
    const mask = new Float64Array(batch.rows * width); // 1 on completion ids
    pairs.forEach((p, i) =>
      [p.chosen, p.rejected].forEach((completion, k) => {
        const base = (2 * i + k) * width + p.prompt.length;
        mask.fill(1, base, base + completion.length);
      }),
    );
    this.onProgress?.('reference log-probs');
    const refLogp = (await this.reference.score(batch, undefined, { adapters: false })).logp;
    this.onProgress?.('training');
    const { logp } = await this.model.score(batch, undefined, { dropoutSeed: dropoutSeedOf(c.seed, this.step, 0) });
    const dpo = dpoLoss({
      pairs: pairs.length,
      width,
      logp,
      refLogp,
      mask,
      beta: c.beta,
      lossType: c.loss.type,
      labelSmoothing: 'labelSmoothing' in c.loss ? (c.loss.labelSmoothing ?? 0) : 0,
    });
    const dlogp = dpo.dlogp;
    let nll = 0;
    if (c.nllWeight > 0) {
      // Token-mean NLL over the chosen completions (rows 2i), as TRL's rpo_alpha term.
      let tokens = 0;
      for (let i = 0; i < pairs.length; i++) for (let t = 0; t < width; t++) tokens += mask[2 * i * width + t];
      for (let i = 0; i < pairs.length; i++) {
        for (let t = 0; t < width; t++) {
          const j = 2 * i * width + t;
          if (!mask[j]) continue;
          nll -= logp[j] / tokens;
          dlogp[j] -= c.nllWeight / tokens;
        }
      }
    }
    this.model.zeroGrad();
    await this.model.backward(dlogp);
    const gradNorm = await this.model.step(stepOptions(c, this.step));
    const t1 = performance.now();
    const tok = this.base.tokenizer;
    // A pair a checkpoint kept before pairs carried their rewards is scored here, as it was chosen.
    const rewards = pairs.map(
      (p) =>
        p.rewards ?? {
          chosen: this.reward(tok.decode(p.chosen), p.task),
          rejected: this.reward(tok.decode(p.rejected), p.task),
        },
    );
    return {
      pairs,
      rewards,
      implicitRewards: dpo.implicitRewards,
      pairLosses: dpo.pairLosses,
      metrics: {
        ...dpo.metrics,
        'loss/dpo': dpo.loss,
        'loss/nll_chosen': nll,
        'loss/total': dpo.loss + c.nllWeight * nll,
        'dpo/prompts_sampled': prompts,
        'opt/lr': c.lr,
        'opt/grad_norm': gradNorm,
        'perf/sample_ms': tSample - t0,
        'perf/train_ms': t1 - tSample,
        'perf/step_ms': t1 - t0,
        // As GRPO's: ids generated while sampling pairs (none when enough were pending) plus the ids of the scored batch.
        'perf/tokens_per_s':
          (sampledTokens + pairs.reduce((k, p) => k + 2 * p.prompt.length + p.chosen.length + p.rejected.length, 0)) /
          ((t1 - t0) / 1000),
      },
    };
  }

  evaluate(n = this.source.heldOut.length, progress?: EvalProgress): Promise<EvalResult> {
    return this.source.evaluate(this.model, this.source.heldOut.slice(0, n), undefined, progress);
  }

  /**
   * Where this run stands between steps, for an exact continuation (worker/train/resume.ts): with
   * the stream position, the sampling-round counter (its seeds) and the pairs not yet trained on.
   */
  position(): TrainerPosition {
    return {
      step: this.step,
      tasksDrawn: this.source.stream.position,
      dpo: { sampled: this.sampled, pending: this.pending.map((p) => ({ ...p })) },
    };
  }

  /** Continues a freshly constructed run from a stored position, weights and AdamW state. */
  resumeAt(from: ResumePoint): void {
    const dpo = from.position.dpo;
    if (!dpo)
      throw new Error(
        'DpoRun.resumeAt: the position has no DPO state (sampling rounds and pending pairs); was it saved by another trainer?',
      );
    restore(this.model, this.source.stream, from);
    this.step = from.position.step;
    this.sampled = dpo.sampled;
    this.pending.splice(0, this.pending.length, ...dpo.pending.map((p) => ({ ...p })));
  }
}
