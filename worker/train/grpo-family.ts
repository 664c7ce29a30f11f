/**
 * The base of every GRPO-family run, whatever it samples: the single-turn run (grpo.ts, prompts of
 * arithmetic or a person's dataset) and the episode run (grpo-episodes.ts, a multi-turn
 * environment), each trained with an outcome estimator (GRPO, RLOO, REINFORCE++), OTB's per-token
 * baselines (otb.ts) or a critic (PPO). It holds what they share: the model (a value head under a critic) and its frozen
 * reference (β > 0), the rollout scheduler that launches each batch (scheduler.ts), one step's
 * update and figures (update.ts, or critic.ts under a critic), the resume position and its
 * checks (resume.ts `restore`), and letting go of batches sampled ahead. A run says how it
 * collects a batch (`collect`) and packs it; not the UI loop (worker/runs) nor the CLI.
 */
import type { Ops } from '../../kernels/ops';
import type { AdvantageRunOptions, GrpoFamilyOptions } from '../contract/options';
import type { PhaseReport } from '../contract/records';
import type { KindServices } from '../episodes/kinds';
import type { LoadedCheckpoint } from '../model/checkpoint';
import type { Model } from '../model/model';
import type { OverlongOptions } from '../rewards/overlong';
import { overlongPenalty } from '../rewards/overlong';
import type { PackedBatch } from '../rl/pack-types';
import type { EntropyControllerState } from '../rl/index';
import type { Session } from '../rl/types';
import type { Sampler } from '../rollout/prompt-source';
import type { CriticConfig } from './critic';
import { criticUpdate } from './critic';
import type { SampledEval } from './evaluate';
import type { OtbConfig } from './otb';
import { otbOf, otbUpdate } from './otb';
import type { RunModelConfig } from './policy';
import { runModels } from './policy';
import type { ResumePoint, TrainerPosition, TrainStreamPosition } from './resume';
import { restore } from './resume';
import { RolloutScheduler, samplerSlots } from './scheduler';
import type { GrpoUpdate, TrainedBatch, UpdateConfig } from './update';
import { batchMetrics, stepsPerBatch, updateOnBatch } from './update';

/** What of a run's options the base reads (worker/contract/run-options/grpo.ts documents each field). */
type RunBaseConfig = UpdateConfig &
  RunModelConfig &
  Pick<
    GrpoFamilyOptions,
    'topK' | 'topP' | 'evalSamples' | 'staleness' | 'samplerWorker' | 'samplerBf16' | 'samplerTemperature'
  > & {
    /** GRPO's shapes' estimator (PPO's have none): OTB scores the batch before its update (otb.ts). */
    advantage?: AdvantageRunOptions;
  };

/** One batch after its update: the figures, the sessions as trained (with their critic's figures), the packed batch and what the update left. */
export interface TrainedStep {
  /** batchMetrics, the critic's (under a critic), the run's own, dynamic sampling's and the scheduler's. */
  metrics: Record<string, number>;
  sessions: Session[];
  /** As trained: under a critic its advantages are GAE's, under OTB its per-token ones. */
  packed: PackedBatch;
  dlogp: Float64Array;
  corrections: TrainedBatch['corrections'];
  oldLogp: Float64Array | null;
  updates: GrpoUpdate[];
  /** Under a critic, per packed id: the value at rollout and the return target. */
  values?: Float64Array;
  returns?: Float64Array;
}

export abstract class GrpoFamilyRun<C extends RunBaseConfig, B> {
  readonly model: Model;
  protected readonly reference: Model | null;
  /** Launches the batches (ahead of the trainer under a staleness bound: scheduler.ts) and hands each over complete. */
  protected readonly scheduler: RolloutScheduler<B>;
  /** The run's seeded task stream: where it stands is part of the run's position. */
  protected abstract readonly stream: TrainStreamPosition;
  step = 0;
  /** The adaptive entropy coefficient's controller after the last step (null: none yet, or no adaptive bonus): part of the position. */
  private entropyController: EntropyControllerState | null = null;
  /** Told where the step under way is (sampling, old log-probs, reference, training; an environment's grading). */
  onProgress: PhaseReport | null = null;
  /** The estimator is OTB: the update scores the batch first for its per-token advantages (otb.ts). */
  protected readonly otb: OtbConfig | null;

  /** `critic`: train with it (a value head, GAE) instead of the advantages pack gave; null: pack's. */
  constructor(
    ops: Ops,
    readonly config: C,
    readonly base: LoadedCheckpoint,
    protected readonly critic: CriticConfig | null,
    services: KindServices,
  ) {
    this.otb = otbOf(config);
    ({ model: this.model, reference: this.reference } = runModels(ops, base, config, {
      valueHead: critic !== null,
      reference: config.beta > 0,
    }));
    this.scheduler = new RolloutScheduler(this.model, {
      staleness: config.staleness ?? 0,
      total: config.steps,
      streamPosition: () => this.stream.position,
      launch: (batch, version, policy) => this.collect(batch, version, policy),
      remote: samplerSlots(config, services, base.config),
      ...(config.samplerBf16 ? { samplerBf16: true } : {}),
      ...(config.samplerTemperature !== undefined ? { samplerTemperature: config.samplerTemperature } : {}),
    });
  }

  get tokenizer() {
    return this.base.tokenizer;
  }

  /** Batch `batch`'s sessions, drawn by `policy` (the trainer's model, or a sampler's) under `version`. */
  protected abstract collect(batch: number, version: number, policy: Model | Sampler): Promise<B>;

  /** Starts the next step: its batch (sampled now, or ahead under a staleness bound) and when the step began. */
  protected async nextBatch(): Promise<{ batch: B; t0: number }> {
    stepsPerBatch(this.config);
    this.step++;
    const t0 = performance.now();
    return { batch: await this.scheduler.take(this.step), t0 };
  }

  /**
   * The step's update of `packed` (packed from `sessions`): updateOnBatch on pack's advantages, or
   * the critic's step, or OTB's; then the figures, `own` (the run's and dynamic sampling's) after the update's.
   */
  protected async train(
    sessions: Session[],
    packed: PackedBatch,
    t0: number,
    tSample: number,
    own: Record<string, number>,
  ): Promise<TrainedStep> {
    const c = this.config;
    const ctx = {
      model: this.model,
      reference: this.reference,
      step: this.step,
      onProgress: this.onProgress,
      entropy: this.entropyController,
    };
    const figures = (trained: TrainedBatch, critic: Record<string, number> = {}) => ({
      ...batchMetrics(c, sessions, trained, t0, tSample, this.step),
      ...critic,
      ...own,
      ...this.scheduler.metrics(sessions, this.step - 1),
    });
    const done = (trained: TrainedBatch) => ({
      dlogp: trained.dlogp,
      corrections: trained.corrections,
      oldLogp: trained.oldLogp,
      updates: trained.updates,
    });
    if (this.critic) {
      const u = await criticUpdate({ ...ctx, config: { ...c, ...this.critic } }, packed, sessions);
      this.entropyController = u.trained.entropy;
      return {
        metrics: figures(u.trained, u.metrics),
        sessions: u.sessions,
        packed: u.packed,
        ...done(u.trained),
        values: u.values,
        returns: u.returns,
      };
    }
    if (this.otb) {
      const u = await otbUpdate({ ...ctx, config: c }, packed, sessions, this.otb);
      this.entropyController = u.trained.entropy;
      return { metrics: figures(u.trained, u.metrics), sessions, packed: u.packed, ...done(u.trained) };
    }
    const trained = await updateOnBatch({ ...ctx, config: c }, packed);
    this.entropyController = trained.entropy;
    return { metrics: figures(trained), sessions, packed, ...done(trained) };
  }

  /** Lets go of the batches sampled ahead (a run that ended, stopped or failed). */
  close(): void {
    this.scheduler.close();
  }

  /**
   * Where this run stands between steps, for an exact continuation (resume.ts): the sampling seeds
   * derive from the step, the frozen reference from the base.
   */
  position(): TrainerPosition {
    // Batches sampled ahead are not part of it: a continued run samples them again under its weights.
    return {
      step: this.step,
      tasksDrawn: this.scheduler.streamPositionBefore(this.stream.position),
      ...(this.entropyController ? { entropy: { ...this.entropyController } } : {}),
    };
  }

  /** Continues a freshly constructed run from a stored position, weights (a value head's too) and AdamW state. */
  resumeAt(from: ResumePoint): void {
    restore(this.model, this.stream, from);
    this.step = from.position.step;
    this.entropyController = from.position.entropy ? { ...from.position.entropy } : null;
    this.scheduler.resumeAt(this.step);
  }
}

/**
 * A session's response length as verl counts it for the overlong buffer (`valid_response_length`):
 * every id after its first prompt, EOS included: a single turn's sampled ids; an episode's actions
 * and the environment's observations between them (its last call's context and ids, less the first prompt).
 */
export function responseLength(s: Session): number {
  const first = s.calls[0];
  const last = s.calls.at(-1);
  return first && last ? last.promptIds.length + last.sampledIds.length - first.promptIds.length : 0;
}

/**
 * The sessions with DAPO's soft overlong penalty (rewards/overlong.ts) added to the reward of each
 * one that has a reward, truncated or not, as verl's DAPO reward manager does; the penalty and the
 * score before it are kept in `components` (`overlong`, `score`). `maxLength` is the response
 * budget: maxNew for one turn, maxNew × maxTurns for an episode (what the verl export writes as
 * `data.max_response_length`). Absent options: the sessions unchanged.
 */
export function punishOverlong<S extends Session>(
  sessions: S[],
  options: Pick<GrpoFamilyOptions, 'overlongBuffer' | 'overlongPenalty'>,
  maxLength: number,
): S[] {
  if (options.overlongBuffer === undefined) return sessions;
  const o: OverlongOptions = { buffer: options.overlongBuffer, penaltyFactor: options.overlongPenalty ?? 1 };
  return sessions.map((s) => {
    if (s.reward === null) return s;
    const penalty = overlongPenalty(responseLength(s), maxLength, o);
    return { ...s, reward: s.reward + penalty, components: { ...s.components, score: s.reward, overlong: penalty } };
  });
}

/** The sampled evaluation a config asks for (`evalSamples` > 0): k samples at its training sampler's settings. */
export function sampledEvalOf(
  c: Pick<RunBaseConfig, 'evalSamples' | 'temperature' | 'topK' | 'topP'>,
): SampledEval | undefined {
  return c.evalSamples
    ? { k: c.evalSamples, sampling: { temperature: c.temperature, topK: c.topK, topP: c.topP } }
    : undefined;
}
