/**
 * The episode run of the GRPO family, on multi-turn episodes of an environment (`calc`, `guess`,
 * `code`, a person's program): per step, P tasks × G episodes collected under the current weights
 * (worker/episodes/rollout.ts, journaled when a journal is given), each episode read as a Session
 * (`sessionOf`, one call per action: the environment's ids are context, masked from the loss),
 * packed and trained by the same update as the single-turn run (update.ts `updateOnBatch`, or
 * critic.ts under the config's critic: ppo-calc, ppo-env) on the run base (grpo-family.ts). The
 * episode's single reward is shared by its actions (no
 * per-turn credit, dew `EpisodeRollout.project`); a group with a failed, cancelled or corrupt
 * episode is left out of the update entirely. Not the UI loop (worker/runs) nor the CLI.
 */
import type { Ops } from '../../kernels/ops';
import type { EnvTask, EnvironmentKind } from '../episodes/environment';
import type { EpisodeJournal } from '../episodes/journal';
import { programKind } from '../episodes/program';
import { EXAMPLE_ENVIRONMENT } from '../episodes/program-example';
import { ENVIRONMENTS, resolveKind, type EnvironmentName, type KindServices } from '../episodes/kinds';
import { ENV_ERROR_LIMIT_DEFAULT, checkInfrastructure } from '../episodes/infrastructure';
import type { CollectedEpisode } from '../episodes/rollout';
import { collectEpisodes, type EpisodeSampler } from '../episodes/rollout';
import { charTokenizer, type LoadedCheckpoint } from '../model/checkpoint';
import type { Model } from '../model/model';
import type {
  EnvRunOptions,
  EpisodeGrpoRunOptions,
  EpisodeRunOptions,
  PpoEnvRunOptions,
  PpoEpisodeRunOptions,
} from '../contract/options';
import type { PhaseReport } from '../contract/records';
import { pack } from '../rl/pack';
import type { PackedBatch, PackOptions } from '../rl/pack-types';
import { sessionOf } from '../rl/session-of';
import { trainable, type Session } from '../rl/types';
import type { EvalProgress, EvalResult } from './evaluate';
import { evaluateEpisodes } from './evaluate';
import { GRPO_ARITH } from './grpo';
import { PPO_ARITH } from './ppo';
import { GrpoFamilyRun, punishOverlong, sampledEvalOf, type TrainedStep } from './grpo-family';
import { dynamicSamplingOf, fillBatch } from './dynamic-sampling';
import { criticOf } from './critic';
import { estimatorPacking } from './otb';
import { packForUpdate } from './update';

/** A step's episodes as collected (dynamic sampling: the kept groups), with their sessions, tasks and filter figures. */
interface EpisodeBatch {
  sessions: Session[];
  episodes: CollectedEpisode[];
  tasks: EnvTask[];
  filterMetrics?: Record<string, number>;
}

/**
 * grpo-calc's options (the form's defaults): GRPO_ARITH's optimizer and objective; 8 tasks × 8
 * episodes, up to 4 turns of 14 ids. Truncated episodes are scored (dew's default, verl's
 * behaviour), not masked as in grpo-arith: running out of turns or of an action's ids is the
 * agent's failure, and the verifier scores it 0. Masked, a base that often truncates leaves its
 * groups with only their successes, all positive.
 *
 * Sampled at temperature 1 the base solves ~1% of its episodes (pass@1 1.25%, pass@8 9% on 100
 * held-out tasks, greedy 29%): 0–2 of 8 groups carry a signal, AdamW's normalised steps on that
 * noise took every run apart (README). At T = 0.3 (the trainer scores logits / T, as verl) pass@1
 * is 16% and pass@8 66%, and DAPO's dynamic sampling on success (at most 10 batches a step) trains
 * only on groups that vary: 150 steps × 3 seeds raise greedy 29% to 52–58% and pass@1 at T = 0.3
 * by 6–10 points. pass@1 and pass@4 at T are evaluated beside the greedy pass.
 */
export const GRPO_CALC: EpisodeGrpoRunOptions = (() => {
  const {
    preset: _preset,
    trainProblems: _problems,
    dataset: _dataset,
    base: _base,
    renormalize: _r,
    ...grpo
  } = GRPO_ARITH;
  return {
    ...grpo,
    advantage: { estimator: 'grpo' },
    preset: 'grpo-calc',
    truncation: 'score',
    prompts: 8,
    group: 8,
    temperature: 0.3,
    filterGroups: 'success',
    maxGenBatches: 10,
    evalSamples: 4,
    maxNew: ENVIRONMENTS.calc.maxActionTokens,
    maxTurns: ENVIRONMENTS.calc.maxTurns,
    checkpointEvery: 10,
  };
})();

/** grpo-guess: the same, 8 secrets × 8 episodes of up to 7 guesses, evaluated on all 63 secrets. */
export const GRPO_GUESS: EpisodeGrpoRunOptions = {
  ...GRPO_CALC,
  preset: 'grpo-guess',
  maxNew: ENVIRONMENTS.guess.maxActionTokens,
  maxTurns: ENVIRONMENTS.guess.maxTurns,
  evalN: 63,
};

/**
 * grpo-code: the same, 8 tasks × 8 one-turn episodes of up to 50 ids, graded in the companion;
 * evaluated on every held-out task. It samples at T = 0.3 with dynamic sampling on success (every
 * case passed), as grpo-calc: measured over 3 seeds, no held-out evaluation fell below the start,
 * where at T = 1 with one batch a step two seeds dipped to 45% and 35% (README). No sampled
 * evaluation, which would grade 4 programs per held-out task in the companion.
 */
export const GRPO_CODE: EpisodeGrpoRunOptions = (() => {
  const { evalSamples: _samples, ...calc } = GRPO_CALC;
  return { ...calc, preset: 'grpo-code', maxNew: ENVIRONMENTS.code.maxActionTokens, maxTurns: 1 };
})();

/**
 * grpo-env: grpo-calc's sampling and objective on a person's program, from calc-base (its tool
 * tokenizer and its calc(…) / \boxed{} actions), with calc's turn limit and action length. It
 * starts from the example program (examples/calc_env.py on examples/calc-tasks.jsonl) with 10 s
 * per reset or step; a person's files replace it (`loadEnvironment`).
 */
export const GRPO_ENV: EnvRunOptions = {
  ...GRPO_CALC,
  preset: 'grpo-env',
  stepSeconds: 10,
  environment: EXAMPLE_ENVIRONMENT,
};

/** ppo-calc: grpo-calc's episodes, sampling and policy loss, with ppo-arith's critic and 2 epochs × 2 mini-batches. */
export const PPO_CALC: PpoEpisodeRunOptions = (() => {
  const { advantage: _advantage, maskZeroAdvantage: _mask, ...calc } = GRPO_CALC;
  return {
    ...calc,
    preset: 'ppo-calc',
    epochs: PPO_ARITH.epochs,
    miniBatches: PPO_ARITH.miniBatches,
    ...criticOf(PPO_ARITH)!,
  };
})();

/** ppo-env: ppo-calc's critic and updates on a person's program, starting from grpo-env's example. */
export const PPO_ENV: PpoEnvRunOptions = {
  ...PPO_CALC,
  preset: 'ppo-env',
  stepSeconds: 10,
  environment: EXAMPLE_ENVIRONMENT,
};

/**
 * An episode run's setup: its options and the environment they run, the preset's (a built-in
 * one) or `program`, the options' own program (grpo-env, ppo-env).
 */
export interface EpisodeSetup {
  environment: EnvironmentName | 'program';
  options: EpisodeRunOptions;
}

/** How an episode run packs (and its journal's readers read) a batch: the options' estimator, or none under a critic or OTB. */
export function episodePacking(
  o: EpisodeRunOptions,
): Pick<PackOptions, 'estimator' | 'advantage' | 'truncation'> & { maskZeroAdvantage: boolean } {
  if (!('advantage' in o)) return { estimator: 'none', truncation: o.truncation, maskZeroAdvantage: false };
  return { ...estimatorPacking(o.advantage), truncation: o.truncation, maskZeroAdvantage: o.maskZeroAdvantage };
}

/** The environment kind a setup runs: the registry's (or its program's), with the options' turn limit and action length. */
export function configuredKind(
  { environment, options: o }: EpisodeSetup,
  services: KindServices = {},
): EnvironmentKind {
  let kind: EnvironmentKind;
  if (environment === 'program') {
    if (!('stepSeconds' in o) || !o.environment)
      throw new Error("environment 'program' needs the options' program (its file, tasks and wall)");
    kind = programKind({ ...o.environment, stepSeconds: o.stepSeconds }, services.companion ?? null);
  } else kind = resolveKind(environment, services);
  return { ...kind, maxTurns: o.maxTurns, maxActionTokens: o.maxNew };
}

/** One step of an episode run: the trained step (grpo-family.ts) with its tasks and episodes. */
export interface EpisodeStep extends TrainedStep {
  step: number;
  tasks: EnvTask[];
  episodes: CollectedEpisode[];
}

/** The session an episode trains as: `sessionOf`, or cancelled when its group was aborted. */
function trainingSession(e: CollectedEpisode): Session {
  const s = sessionOf(e.episode, e.group, e.task.id);
  if (!e.groupAborted || !trainable(s.status)) return s;
  return {
    ...s,
    status: 'cancelled',
    reward: null,
    detail: `group ${JSON.stringify(e.group)} aborted: another of its episodes failed or was cancelled`,
    termination: undefined,
  };
}

/** `episodes/*` metrics of a step: counts by status and termination, turns, resumed turns, aborted groups. */
function episodeMetrics(episodes: readonly CollectedEpisode[]): Record<string, number> {
  const n = episodes.length;
  const m: Record<string, number> = { 'episodes/count': n };
  for (const status of ['completed', 'truncated', 'error', 'cancelled'] as const)
    m[`episodes/${status}`] = episodes.filter((e) => e.episode.status === status).length;
  for (const e of episodes) {
    const t = e.episode.termination;
    if (t) m[`episodes/termination/${t}`] = (m[`episodes/termination/${t}`] ?? 0) + 1;
  }
  // The share the infrastructure failed (run health's `infrastructure` flag reads it).
  m['episodes/error_frac'] = n ? m['episodes/error'] / n : 0;
  m['episodes/turns_mean'] = n ? episodes.reduce((a, e) => a + e.episode.transitions.length, 0) / n : 0;
  m['episodes/resumed_turns'] = episodes.reduce((a, e) => a + e.resumed.filter(Boolean).length, 0);
  m['episodes/corrupt'] = episodes.filter((e) => e.corrupt).length;
  m['episodes/aborted_groups'] = new Set(episodes.filter((e) => e.groupAborted).map((e) => e.group)).size;
  return m;
}

/**
 * An episode run of the GRPO family: GRPO (or another outcome estimator) on the advantages pack
 * gives, or PPO with the config's critic (ppo-calc, ppo-env). The run base (grpo-family.ts) holds
 * the model, the scheduler, the update and the resume position.
 */
export class EpisodeRun extends GrpoFamilyRun<EpisodeRunOptions, EpisodeBatch> {
  readonly kind: EnvironmentKind;
  protected readonly stream: ReturnType<EnvironmentKind['trainTasks']>;
  private readonly heldOutTasks: EnvTask[];

  /** `journal`: commit every turn there, under run `runId`, as `writer` (recovery reads it back). */
  constructor(
    ops: Ops,
    setup: EpisodeSetup,
    base: LoadedCheckpoint,
    private readonly journal: { journal: EpisodeJournal; runId: string; writer: string } | null = null,
    services: KindServices = {},
  ) {
    const config = setup.options;
    super(ops, config, base, criticOf(config), services);
    this.kind = configuredKind(setup, services);
    this.stream = this.kind.trainTasks(config.seed);
    this.heldOutTasks = this.kind.heldOut(config.evalN);
  }

  /** The cohort seed of batch `step`: every action's sampler derives from it (rollout.ts `turnSeed`). */
  samplerSeed(step: number): number {
    return (this.config.seed * 100_003 + step) >>> 0;
  }

  /** Batch `batch`'s episodes, drawn by `policy` under `version` (more batches with dynamic sampling), journaled as that step's. */
  protected async collect(batch: number, version: number, policy: Model | EpisodeSampler): Promise<EpisodeBatch> {
    const c = this.config;
    const total = c.prompts * c.group;
    const seed = this.samplerSeed(batch);
    // A batch sampled ahead does not report: the step under way is another's.
    const progress = (...a: Parameters<PhaseReport>) => batch === this.step && this.onProgress?.(...a);
    const drawn: EnvTask[] = [];
    const episodeOf = new Map<Session, CollectedEpisode>();
    // Batch k of the step (dynamic sampling draws several): its own sampler seed and range of episode indices.
    const draw = async (k: number) => {
      const tasks = this.stream.take(c.prompts);
      drawn.push(...tasks);
      const batchSeed = k === 0 ? seed : (seed + Math.imul(k, 0x9e3779b1)) >>> 0;
      progress('sampling', 0, total, 'episodes');
      const collected = await collectEpisodes(policy, tasks, c.group, {
        kind: this.kind,
        tok: charTokenizer(this.base.tokenizer, 'an episode run'),
        maxContext: this.model.config.maxSeq,
        sampling: { temperature: c.temperature, topK: c.topK, topP: c.topP },
        seed: batchSeed,
        policyVersion: version,
        episodeOffset: k * total,
        ...(this.journal
          ? {
              journal: {
                journal: this.journal.journal,
                cohort: { runId: this.journal.runId, step: batch, policyVersion: version, samplerSeed: batchSeed },
              },
              writer: this.journal.writer,
            }
          : {}),
        onProgress: (_round, finished) => progress('sampling', finished, total, 'episodes'),
        // A batch sampled ahead of a run that ended, stopped or failed: its episodes stop at their next round.
        ...(batch !== this.step ? { shouldCancel: () => this.scheduler.closed } : {}),
        ...(this.kind.gradedUnit
          ? { onEnvSteps: (answered, steps) => progress('grading', answered, steps, this.kind.gradedUnit) }
          : {}),
      });
      // An environment that fails (most of) a batch stops the run, saying why, before another batch is drawn.
      checkInfrastructure(
        collected,
        this.envErrorLimit,
        k === 0 ? `step ${batch}` : `step ${batch} (batch ${k + 1} of its dynamic sampling)`,
        this.journal ? batch : null,
      );
      // The overlong budget is the whole episode's, as the verl export writes data.max_response_length.
      const sessions = punishOverlong(collected.map(trainingSession), c, c.maxNew * c.maxTurns);
      sessions.forEach((s, i) => episodeOf.set(s, collected[i]));
      return sessions;
    };
    const dynamic = dynamicSamplingOf(c);
    const filled = dynamic ? await fillBatch(c.prompts, dynamic, draw) : null;
    const sessions = filled ? filled.sessions : await draw(0);
    const kept = new Set(sessions.map((s) => s.task));
    return {
      sessions,
      episodes: sessions.map((s) => episodeOf.get(s)!),
      tasks: drawn.filter((t) => kept.has(t.id)),
      filterMetrics: filled?.metrics,
    };
  }

  async next(): Promise<EpisodeStep> {
    const c = this.config;
    const {
      batch: { sessions, episodes, tasks, filterMetrics },
      t0,
    } = await this.nextBatch();
    const tSample = performance.now();
    // Under a critic every session trains (no outcome estimator, no zero-advantage masking): GAE gives the advantages.
    const packed = packEpisodes(sessions, episodePacking(c), c.miniBatches);
    const trained = await this.train(sessions, packed, t0, tSample, {
      ...episodeMetrics(episodes),
      ...filterMetrics,
    });
    return { step: this.step, tasks, episodes, ...trained };
  }

  /** How many held-out tasks `evaluate()` scores: the config's evalN, or all the environment has when it has fewer (code: 62). */
  get heldOutCount(): number {
    return this.heldOutTasks.length;
  }

  private get envErrorLimit(): number {
    return this.config.envErrorLimit ?? ENV_ERROR_LIMIT_DEFAULT;
  }

  evaluate(n = this.heldOutTasks.length, progress?: EvalProgress): Promise<EvalResult> {
    const where = `the held-out evaluation ${this.step === 0 ? 'before step 1' : `after step ${this.step}`}`;
    return evaluateEpisodes(
      this.model,
      charTokenizer(this.base.tokenizer, 'an episode run'),
      this.kind,
      this.heldOutTasks.slice(0, n),
      64,
      sampledEvalOf(this.config),
      progress,
      (episodes) => checkInfrastructure(episodes, this.envErrorLimit, where, null),
    );
  }
}

/** Packs a step's sessions for the update (packForUpdate) into rows of twice the longest chain (two chains always fit). */
function packEpisodes(
  sessions: readonly Session[],
  options: ReturnType<typeof episodePacking>,
  miniBatches: number,
): PackedBatch {
  const longest = Math.max(
    1,
    ...sessions.flatMap((s) => s.calls.map((call) => call.promptIds.length + call.sampledIds.length)),
  );
  const packed = packForUpdate((o) => pack(sessions, 2 * longest, { ...options, ...o }), miniBatches);
  if (!packed.ok) throw new Error(`GRPO episode batch does not pack: ${packed.message}`);
  return packed;
}
