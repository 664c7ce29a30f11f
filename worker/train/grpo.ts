/**
 * The single-turn run of the GRPO family: per step a SampledRollout draws P prompts × G
 * completions under the current weights (KV cache) as one-call Sessions, from arithmetic or a
 * person's prompt dataset (task-source.ts), scored by MathReward or the dataset's reward; pack;
 * then the shared update (update.ts: the RL core's objective, backward, clip, AdamW; `epochs` ×
 * `miniBatches` optimizer steps per batch, verl `ppo_epochs`, `ppo_mini_batch_size`, one by
 * default). GrpoRun takes pack's outcome advantages, PpoRun (ppo.ts) a critic's. With beta > 0 a
 * frozen copy of the starting weights is the reference. The model, scheduler, resume position and
 * update dispatch are the run base's (grpo-family.ts). Not the UI loop (worker/runs) nor the CLI:
 * both drive this.
 */
import type { Ops } from '../../kernels/ops';
import type { TextTokenizer } from '../data/tokenizer';
import type { LoadedCheckpoint } from '../model/checkpoint';
import { stopsOf } from '../model/checkpoint';
import type { Model } from '../model/model';
import type { PackedBatch, PackOptions } from '../rl/pack-types';
import type { Session } from '../rl/index';
import type { GrpoRunOptions, PpoRunOptions } from '../contract/options';
import type { KindServices } from '../episodes/kinds';
import type { Generated } from '../rollout/generate';
import { PromptSource } from '../rollout/prompt-source';
import { SampledRollout } from '../rollout/sampled-rollout';
import type { EvalProgress, EvalResult } from './evaluate';
import type { CriticConfig } from './critic';
import { dynamicSamplingOf, fillBatch } from './dynamic-sampling';
import { GrpoFamilyRun, punishOverlong, sampledEvalOf } from './grpo-family';
import type { RunTask, TaskSource } from './task-source';
import { ARITH_TASK, taskSourceOf } from './task-source';
import { wasmStepPlan } from '../hf/memory';
import { loraFromOptions } from '../model/lora';
import type { SampledSession, Sampler } from '../rollout/prompt-source';
import type { GrpoUpdate, TrainedBatch } from './update';
import { packForUpdate } from './update';
import { estimatorPacking } from './otb';

/** What the single-turn run reads: grpo-arith's or ppo-arith's validated options. */
export type SingleTurnOptions = GrpoRunOptions | PpoRunOptions;

/** A single-turn batch as collected: its tasks (those trained on), sessions and dynamic sampling's figures. */
interface SampledBatch {
  tasks: RunTask[];
  sessions: SampledSession[];
  filterMetrics: Record<string, number>;
}

/**
 * grpo-arith's options (the form's defaults): P = 16 prompts × G = 8 completions at temperature 1,
 * the PPO clip 0.2 with token-mean, group-normalised advantages with zero-advantage groups masked,
 * truncated completions masked, β = 0, AdamW lr 1e-4 constant, (0.9, 0.99), wd 0, one update per
 * batch (docs/calibration.md "GRPO").
 */
export const GRPO_ARITH: GrpoRunOptions = {
  preset: 'grpo-arith',
  steps: 150,
  lr: 1e-4,
  seed: 1,
  prompts: 16,
  group: 8,
  temperature: 1,
  topK: 0,
  topP: 1,
  maxNew: 16,
  policyLoss: { name: 'ppo' },
  aggregation: { mode: 'token-mean' },
  advantage: { estimator: 'grpo' },
  maskZeroAdvantage: true,
  truncation: 'mask',
  beta: 0,
  kl: { estimator: 'k3' },
  importance: { kind: 'off' },
  entropyBonus: { kind: 'off' },
  rejection: {},
  beta1: 0.9,
  beta2: 0.99,
  eps: 1e-8,
  weightDecay: 0,
  maxGradNorm: 1.0,
  epochs: 1,
  miniBatches: 1,
  evalEvery: 10,
  evalN: 100,
  checkpointEvery: 50,
};

export interface GrpoStep {
  step: number;
  /** The batch's figures, the last optimizer step's objective metrics and `opt/grad_norm`, `opt/steps_per_batch`. */
  metrics: Record<string, number>;
  tasks: RunTask[];
  sessions: Session[];
  generated: Generated[];
  packed: PackedBatch;
  /**
   * ∂loss/∂logp per packed id, from the last update that trained the id's row: the last epoch
   * covers every row once, so this is the last epoch's gradient seeds (one update: its seed).
   */
  dlogp: Float64Array;
  /** The IS weights and rejection keep flags per packed id, when corrections are on (TrainedBatch). */
  corrections?: TrainedBatch['corrections'];
  /**
   * The old log-probs when the trainer rescored the batch under the weights before its first
   * update (epochs × miniBatches > 1, verl `old_log_prob`); null when old is the sampler's raw
   * log-probs, `packed.oldLogProbs`. The Batch view's mismatch is old − behavior.
   */
  oldLogp: Float64Array | null;
  /** The batch's optimizer steps, in order. */
  updates: GrpoUpdate[];
  /** Under a critic (PpoRun, ppo.ts), per packed id: the value at rollout and the return target. */
  values?: Float64Array;
  returns?: Float64Array;
}

/**
 * The single-turn rollout of GRPO and PPO: G completions per task under `model`, scored by the
 * source's reward (MathReward on arithmetic). Batch `step` (version step − 1) samples with
 * generate seed c.seed · 100_003 + step, so a GRPO and a PPO run of one seed draw the same first batch.
 */
function singleTurnRollout(
  model: Model | Sampler,
  c: SingleTurnOptions,
  tok: TextTokenizer,
  source: TaskSource,
  onProgress: (finished: number, rows: number) => void,
  pack: PackOptions,
  seed = c.seed * 100_003 + 1,
): SampledRollout<RunTask> {
  const prompts = new PromptSource<RunTask>({
    model,
    reward: source.reward,
    decode: (ids) => tok.decode(ids),
    prompt: (task) => source.promptIds(task),
    ...stopsOf(tok),
    maxNewTokens: c.maxNew,
    sampling: { temperature: c.temperature, topK: c.topK, topP: c.topP },
    seed,
    ...(c.renormalize ? { recordSupport: true } : {}),
    onProgress,
  });
  return new SampledRollout(prompts, { groups: c.group, pack });
}

/**
 * A single-turn run from a base checkpoint, whatever its update: the task source (arithmetic, or a
 * person's dataset: task-source.ts) with its stream, held-out tasks and reward, the rollout, one
 * sampled, packed and trained batch per `next()`, and evaluation; the models, scheduler, update
 * and resume position are the run base's (grpo-family.ts). GrpoRun and PpoRun (ppo.ts) differ
 * only in how they pack and whether a critic trains. `services.codeGrader` grades a dataset's `code` reward.
 */
export abstract class SingleTurnRun<C extends SingleTurnOptions> extends GrpoFamilyRun<C, SampledBatch> {
  protected readonly source: TaskSource;
  protected readonly stream: TaskSource['stream'];
  protected readonly rollout: SampledRollout<RunTask>;

  constructor(
    ops: Ops,
    config: C,
    base: LoadedCheckpoint,
    private readonly o: { critic: CriticConfig | null; pack: PackOptions },
    services: KindServices = {},
  ) {
    super(ops, config, base, o.critic, services);
    this.source = taskSourceOf(config, ARITH_TASK, base.tokenizer, base.config.maxSeq, services.codeGrader ?? null);
    this.stream = this.source.stream;
    this.rollout = this.rolloutOn(this.model, 0);
  }

  /** The rollout of batches drawn on `model`: the run's own on its model, a batch's own on a sampler's (seeded by the batch). */
  private rolloutOn(model: Model | Sampler, batch: number): SampledRollout<RunTask> {
    const c = this.config;
    const seed = c.seed * 100_003 + 1;
    return singleTurnRollout(
      model,
      c,
      this.base.tokenizer,
      this.source,
      // A batch sampled ahead does not report: the step under way is another's.
      (finished, rows) =>
        (batch === 0 || batch === this.step) && this.onProgress?.('sampling', finished, rows, 'sequences'),
      this.o.pack,
      batch === 0 ? seed : (seed + Math.imul(batch, 0x9e3779b1)) | 0,
    );
  }

  /** Batch `batch`'s sessions, drawn on `model` under `version` (more batches with dynamic sampling). */
  protected async collect(batch: number, version: number, model: Model | Sampler): Promise<SampledBatch> {
    const c = this.config;
    const rollout = model === this.model ? this.rollout : this.rolloutOn(model, batch);
    const drawn: RunTask[] = [];
    const draw = async () => {
      const tasks = this.source.stream.take(c.prompts);
      this.checkMemory(tasks);
      drawn.push(...tasks);
      if (batch === this.step) this.onProgress?.('sampling', 0, c.prompts * c.group, 'sequences');
      return punishOverlong(await rollout.collect(tasks, version), c, c.maxNew);
    };
    const dynamic = dynamicSamplingOf(c);
    const filled = dynamic ? await fillBatch(c.prompts, dynamic, draw) : null;
    const sessions = filled ? filled.sessions : await draw();
    // The tasks of the batch trained on, in the order drawn (dynamic sampling draws more).
    const trained = new Set(sessions.map((s) => s.task));
    return { tasks: drawn.filter((t) => trained.has(t.id)), sessions, filterMetrics: filled?.metrics ?? {} };
  }

  /**
   * Refuses a batch whose step would not fit the wasm memory (hf/memory.ts `wasmStepPlan`), before
   * sampling it, with the plan's parts and the idsPerPass that would fit. Other backends are not
   * planned: a GPU's memory is the device's.
   */
  private checkMemory(tasks: readonly RunTask[]): void {
    if (this.model.ops.backend !== 'wasm' || tasks.length === 0) return;
    const promptIds = Math.max(...tasks.map((t) => this.source.promptIds(t).length));
    const lora = loraFromOptions(this.config);
    const { problem } = wasmStepPlan(this.base.config, { ...this.config, ...(lora ? { lora } : {}) }, promptIds);
    if (problem) throw new Error(problem);
  }

  /**
   * The next step: P tasks × G completions (sampled under the current weights, or up to s versions
   * before), packed for the update (`packForUpdate`) and trained on.
   */
  async next(): Promise<GrpoStep> {
    const c = this.config;
    const {
      batch: { tasks, sessions, filterMetrics },
      t0,
    } = await this.nextBatch();
    const generated: Generated[] = sessions.map(({ calls: [g] }) => ({
      promptIds: g.promptIds,
      sampledIds: g.sampledIds,
      behaviorLogProbs: g.behaviorLogProbs,
      rawLogProbs: g.rawLogProbs,
      finishReason: g.finishReason,
    }));
    const tSample = performance.now();
    const longest = Math.max(...generated.map((g) => g.promptIds.length)) + c.maxNew;
    // Two chains always fit a row of twice the longest chain.
    const packed = packForUpdate((options) => this.rollout.pack(sessions, 2 * longest, options), c.miniBatches);
    if (!packed.ok) throw new Error(`batch does not pack: ${packed.message}`);
    const trained = await this.train(sessions, packed, t0, tSample, filterMetrics);
    return { step: this.step, tasks, generated, ...trained };
  }

  evaluate(n = this.source.heldOut.length, progress?: EvalProgress): Promise<EvalResult> {
    return this.source.evaluate(this.model, this.source.heldOut.slice(0, n), sampledEvalOf(this.config), progress);
  }
}

/** GRPO (or another outcome estimator) on single-turn prompts: pack gives the advantages; OTB's come after scoring (otb.ts). */
export class GrpoRun extends SingleTurnRun<GrpoRunOptions> {
  constructor(ops: Ops, config: GrpoRunOptions, base: LoadedCheckpoint, services: KindServices = {}) {
    super(
      ops,
      config,
      base,
      {
        critic: null,
        pack: {
          ...estimatorPacking(config.advantage),
          truncation: config.truncation,
          maskZeroAdvantage: config.maskZeroAdvantage,
        },
      },
      services,
    );
  }
}
