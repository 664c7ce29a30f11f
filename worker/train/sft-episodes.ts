/**
 * Supervised fine-tuning on demonstration episodes of an environment kind (`calc`, `guess`): the
 * base checkpoints of the multi-turn presets. Each example is one expert episode, run through a
 * real environment instance so that the observations are the environment's own:
 *
 *   BOS prompt | action₁ EOS | observation₁ | action₂ EOS | observation₂ | … | actionₙ EOS
 *
 * with a loss mask of 1 exactly on the action ids and their EOS (the environment's ids are context
 * only). Otherwise as `SftRun` (sft.ts): the same token-mean NLL, warmup + cosine lr, clipping,
 * AdamW, metric names, position and resume; held-out accuracy is greedy episodes
 * (evaluate.ts `evaluateEpisodes`), the fraction with reward 1.
 */
import type { Ops } from '../../kernels/ops';
import type { CharTokenizer } from '../data/tokenizer';
import { toolTokenizer } from '../data/tokenizer';
import type { EnvTask, EnvironmentKind } from '../episodes/environment';
import { resolveKind, type EnvironmentName, type KindServices } from '../episodes/kinds';
import type { ModelConfig } from '../model/config';
import { modelPreset } from '../model/config';
import { Model } from '../model/model';
import type { EvalProgress, EvalResult } from './evaluate';
import { evaluateEpisodes } from './evaluate';
import type { ResumePoint, TrainerPosition } from './resume';
import type { SftConfig, SftStepMetrics } from './sft';
import { sftUpdate } from './sft';
import type { MaskedExample } from './sft-batch';
import { packMaskedExamples } from './sft-batch';

/** SftConfig's fields, an environment kind instead of an arithmetic task, and the model's maxSeq. */
export interface SftEpisodeConfig extends Omit<SftConfig, 'task'> {
  /** The environment kind whose demonstrations are the examples. */
  env: EnvironmentName;
  /** The model's maxSeq: room for the RL rollouts' longest context + action, beyond the SFT `width`. */
  maxSeq: number;
}

/**
 * `calc`: demonstrations are 51–55 ids (mean 54: 10 of prompt, 3 actions of 11–13 ids with EOS,
 * two observations of 3–4), one per row of 56. maxSeq 96 leaves the rollouts room for a fourth
 * turn and for actions up to the 14-id budget.
 */
export const SFT_CALC: SftEpisodeConfig = {
  env: 'calc',
  model: 'small',
  maxSeq: 96,
  seed: 1,
  steps: 1500,
  examples: 64,
  rows: 64,
  width: 56,
  lr: 1e-3,
  warmup: 50,
  minLr: 1e-4,
  beta1: 0.9,
  beta2: 0.98,
  eps: 1e-8,
  weightDecay: 0.01,
  maxGradNorm: 5.0,
  evalEvery: 20,
  evalN: 200,
};

/**
 * `guess`: demonstrations are 9–29 ids (mean 25: 6 of prompt, up to 6 guesses of ≤ 3 ids with EOS
 * and 5 one-id answers), mostly one per row of 30. maxSeq 48 covers 7 turns (6 + 7·3 + 6·1 = 33).
 * Held-out is every one of the 63 secrets.
 */
export const SFT_GUESS: SftEpisodeConfig = {
  env: 'guess',
  model: 'small',
  maxSeq: 48,
  seed: 1,
  steps: 1500,
  examples: 64,
  rows: 64,
  width: 30,
  lr: 1e-3,
  warmup: 50,
  minLr: 1e-4,
  beta1: 0.9,
  beta2: 0.98,
  eps: 1e-8,
  weightDecay: 0.01,
  maxGradNorm: 5.0,
  evalEvery: 10,
  evalN: 63,
};

/**
 * One demonstration episode of `task` as a masked example: `kind.demonstrate(task)` driven through
 * a fresh environment. Throws when the environment rewrites its context, ends the episode before
 * the last action, or does not end it with reward 1 there: the expert must solve the task.
 */
export async function demonstrationExample(
  kind: EnvironmentKind,
  tok: CharTokenizer,
  task: EnvTask,
): Promise<MaskedExample & { ids: Int32Array; lossMask: Float32Array }> {
  const env = kind.create(task);
  try {
    const ids: number[] = Array.from(await env.reset());
    const mask: number[] = ids.map(() => 0);
    const actions = kind.demonstrate(task);
    for (const [k, text] of actions.entries()) {
      const actionIds = tok.encode(text);
      const r = await env.step({ ids: actionIds, text, terminated: true });
      for (const id of actionIds) ids.push(id);
      ids.push(tok.eos);
      for (let i = 0; i <= actionIds.length; i++) mask.push(1);
      const last = k === actions.length - 1;
      const where = `${kind.name} demonstration of ${task.id}, action ${k + 1} of ${actions.length} (${JSON.stringify(text)})`;
      if (r.context !== undefined)
        throw new Error(
          `${where}: the environment rewrote its context; SFT demonstrations need append-only observations`,
        );
      if (r.status === 'error') throw new Error(`${where}: the environment failed: ${r.detail ?? 'no detail'}`);
      if (!last && r.status === 'done')
        throw new Error(`${where}: the episode ended before the last action (${r.detail ?? 'no detail'})`);
      if (last && (r.status !== 'done' || r.reward !== 1)) {
        throw new Error(
          `${where}: the last action must end the episode with reward 1, got status ${r.status}, reward ${r.reward} (${r.detail ?? 'no detail'})`,
        );
      }
      for (const id of Array.from(r.observation)) {
        ids.push(id);
        mask.push(0);
      }
    }
    return { ids: Int32Array.from(ids), lossMask: Float32Array.from(mask) };
  } finally {
    await env.close?.();
  }
}

/**
 * `code`: demonstrations are 42–58 ids (a prompt of 3–13 characters after BOS, a fenced program
 * of 37–43 and EOS), one per row of 60. maxSeq 64 leaves the rollouts room for the 50-id action
 * budget after the longest prompt. Each demonstration is graded in the sandbox like a rollout
 * (the expert must pass every case); the cached grader runs each distinct one once.
 */
export const SFT_CODE: SftEpisodeConfig = {
  ...SFT_GUESS,
  env: 'code',
  maxSeq: 64,
  width: 60,
  evalEvery: 10,
  evalN: 100,
};

export class SftEpisodeRun {
  readonly tok: CharTokenizer;
  readonly kind: EnvironmentKind;
  readonly model: Model;
  readonly modelConfig: ModelConfig;
  private readonly stream: ReturnType<EnvironmentKind['trainTasks']>;
  private readonly heldOutTasks: EnvTask[];
  step = 0;

  constructor(
    ops: Ops,
    readonly config: SftEpisodeConfig,
    services: KindServices = {},
  ) {
    this.kind = resolveKind(config.env, services);
    this.tok = (this.kind.tokenizer ?? toolTokenizer)();
    if (!Number.isInteger(config.maxSeq) || config.maxSeq < config.width) {
      throw new Error(
        `SftEpisodeRun: maxSeq = ${config.maxSeq}; expected an integer ≥ width (${config.width}), the longest packed chain`,
      );
    }
    this.modelConfig = { ...modelPreset(config.model, this.tok.size), maxSeq: config.maxSeq };
    this.model = new Model(ops, this.modelConfig);
    this.model.initWeights(config.seed);
    this.stream = this.kind.trainTasks(config.seed);
    this.heldOutTasks = this.kind.heldOut(config.evalN);
  }

  /** One optimizer step on the demonstrations of the next `examples` training tasks. */
  async next(): Promise<SftStepMetrics> {
    const c = this.config;
    const t0 = performance.now();
    const tasks = this.stream.take(c.examples);
    const examples: MaskedExample[] = [];
    for (const t of tasks) examples.push(await demonstrationExample(this.kind, this.tok, t));
    const packed = packMaskedExamples(examples, c.rows, c.width);
    if (!packed.ok)
      throw new Error(`SFT batch does not fit: ${packed.reason} (raise rows or width, or lower examples)`);
    this.step++;
    return sftUpdate(this.model, packed.batch, c, this.step, t0);
  }

  /** Held-out accuracy: greedy episodes, the fraction with reward 1. */
  evaluate(n = this.heldOutTasks.length, progress?: EvalProgress): Promise<EvalResult> {
    return evaluateEpisodes(this.model, this.tok, this.kind, this.heldOutTasks.slice(0, n), 64, undefined, progress);
  }

  /** Where this run stands between steps, for an exact continuation (worker/train/resume.ts). */
  position(): TrainerPosition {
    return { step: this.step, tasksDrawn: this.stream.position };
  }

  /** Continues a freshly constructed run from a stored position, weights and AdamW state. */
  resumeAt(from: ResumePoint): void {
    const { step, tasksDrawn } = from.position;
    if (!Number.isInteger(step) || step < 0)
      throw new Error(`resumeAt: position.step = ${step}; expected a non-negative integer`);
    if (this.stream.position !== 0)
      throw new Error(
        `resumeAt: this run has already drawn ${this.stream.position} tasks; resume a freshly constructed run`,
      );
    if (!Number.isInteger(tasksDrawn) || tasksDrawn < 0)
      throw new Error(`resumeAt: position.tasksDrawn = ${tasksDrawn}; expected a non-negative integer`);
    this.model.setWeights(from.weights);
    this.model.setOptimizerState(from.optimizer);
    this.stream.skip(tasksDrawn);
    this.step = step;
  }
}
