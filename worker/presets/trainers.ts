/**
 * What the step loop (worker/runs/loop.ts) and the CLI's `train` drive, whatever the objective:
 * a `Trainer` takes one step, evaluates, writes its checkpoint and continues from one; the
 * adapters here wrap each trainer of worker/train and worker/flow so that a step comes back with
 * the records the store keeps (groups, packed batch, sessions, a flow cloud) and a checkpoint is
 * the files of its kind (a language model's Hugging Face-style folder, or the flow policy's) with
 * the resume record beside them. The preset table (table.ts) picks the adapter per preset;
 * nothing here names a preset.
 */
import type { Ops } from '../../kernels/ops';
import type { EpisodeJournal } from '../episodes/journal';
import type { KindServices } from '../episodes/kinds';
import {
  FlowGrpoRun,
  flowCheckpointFiles,
  flowReward,
  importFlowCheckpoint,
  pretrainBase,
  validateFlowGrpoConfig,
} from '../flow/index';
import type { FlowGrpoConfig, PretrainOptions } from '../flow/index';
import type { CheckpointFiles, CheckpointTokenizer, LoadedCheckpoint } from '../model/checkpoint';
import { continuedWeights, exportCheckpoint, importCheckpoint } from '../model/checkpoint';
import type { Model } from '../model/model';
import type { BatchRecord, FlowCloud, GroupRecord, PhaseReport } from '../contract/records';
import type { Session } from '../rl/types';
import type { RunCheckpointFiles } from '../store/run-store';
import type { DpoRunOptions } from '../contract/options';
import { DpoRun } from '../train/dpo';
import type { EvalProgress, EvalResult } from '../train/evaluate';
import type { GrpoRun } from '../train/grpo';
import type { EpisodeRun } from '../train/grpo-episodes';
import type { PpoRun } from '../train/ppo';
import type { Resumable, ResumeRecord } from '../train/resume';
import { SftRun, type SftConfig } from '../train/sft';
import { batchRecord, groupRecords, pairRecords, pairSessions } from './records';

/** One step as the loop stores it. */
export interface TrainerStep {
  metrics: Record<string, number>;
  groups?: GroupRecord[];
  batch?: BatchRecord;
  sessions?: readonly Session[];
  flow?: FlowCloud;
}

/**
 * A checkpoint as a trainer writes it and continues from it: its files and, beside them, AdamW's
 * state and the trainer's position.
 */
interface TrainerCheckpoint {
  files: RunCheckpointFiles;
  resume: ResumeRecord;
}

/** What the loop needs of a run, whatever its objective. */
export interface Trainer {
  /** The trainer's config, as a checkpoint's dewpoint.json records it. */
  config: object;
  next(): Promise<TrainerStep>;
  /** Where the step under way is, for trainers that report it (GRPO); others report the whole step as `step`. */
  onProgress?: (report: PhaseReport | null) => void;
  /** Scores the held-out items, counting completions as they finish on `progress`. */
  evaluate(progress?: EvalProgress): Promise<EvalResult>;
  /**
   * How many held-out items `evaluate` scores, where the trainer knows it differs from the
   * options' evalN (an environment with fewer held-out tasks than asked: grpo-code has 62); absent: evalN.
   */
  evalCount?: number;
  /** How the run checkpoints and continues; absent: it keeps none and cannot be continued (no preset today). */
  checkpoints?: TrainerCheckpoints;
  /** Lets go of work begun for later steps (batches sampled ahead) when the run ends, stops or fails; absent: none. */
  close?(): void;
}

/** A trainer's own checkpoints, so that the loop writes and continues from them whatever their kind. */
interface TrainerCheckpoints {
  /**
   * The run's checkpoint where it stands (after its last step; `info` is the provenance its
   * dewpoint.json records): a trainer built from the same options continues from it exactly.
   */
  write(info: Record<string, unknown>): Promise<TrainerCheckpoint>;
  /** Continues from a checkpoint this kind of trainer wrote (on a freshly built trainer, before any step). */
  resume(from: TrainerCheckpoint): void;
}

/** The files of a language model's checkpoint, or an error naming what they are instead. */
export function modelCheckpointFiles(files: RunCheckpointFiles, what: string): CheckpointFiles {
  if ('tokenizer.json' in files) return files;
  throw new Error(`${what} is not a language model's checkpoint (it has ${Object.keys(files).join(', ')})`);
}

/** A language model's checkpoints: its Hugging Face-style folder, AdamW's state and the run's position beside it. */
function modelCheckpoints(model: Model, tok: CheckpointTokenizer, run: Resumable): TrainerCheckpoints {
  return {
    write: async (info) => ({
      files: await exportCheckpoint(model, tok, info),
      // With AdamW's state and the trainer's position, the checkpoint is one a run can continue from.
      resume: { optimizer: await model.getOptimizerState(), position: run.position() },
    }),
    resume: ({ files, resume }) =>
      run.resumeAt({
        ...resume,
        weights: continuedWeights(importCheckpoint(modelCheckpointFiles(files, 'the checkpoint'))),
      }),
  };
}

/**
 * What a preset's trainer is built from: the backend, the base checkpoint (null for a preset
 * that starts from nothing), what environments need from outside (the companion's code grader),
 * and where a multi-turn run journals its turns (null: nowhere).
 */
export interface TrainerContext {
  ops: Ops;
  base: LoadedCheckpoint | null;
  services: KindServices;
  journal: { journal: EpisodeJournal; runId: string; writer: string } | null;
}

/** A GRPO or PPO run (single-turn or on episodes): each step stored with its groups, packed batch and sessions. */
export function grpoFamilyTrainer(
  grpo: GrpoRun | EpisodeRun | PpoRun,
  config: object,
  tok: CheckpointTokenizer,
): Trainer {
  return {
    config,
    next: async () => {
      const s = await grpo.next();
      return {
        metrics: s.metrics,
        groups: groupRecords(s, tok),
        batch: batchRecord(s, tok),
        sessions: s.sessions,
      };
    },
    evaluate: (progress) => grpo.evaluate(undefined, progress),
    ...('heldOutCount' in grpo ? { evalCount: grpo.heldOutCount } : {}),
    onProgress: (report) => (grpo.onProgress = report),
    checkpoints: modelCheckpoints(grpo.model, tok, grpo),
    close: () => grpo.close(),
  };
}

/** A DPO run: each step stored with its pairs as groups and their completions as sessions. */
export function dpoTrainer(ops: Ops, config: DpoRunOptions, base: LoadedCheckpoint): Trainer {
  const dpo = new DpoRun(ops, config, base);
  return {
    config,
    next: async () => {
      const s = await dpo.next();
      return {
        metrics: s.metrics,
        groups: pairRecords(s, base.tokenizer, config),
        sessions: pairSessions(s),
      };
    },
    evaluate: (progress) => dpo.evaluate(undefined, progress),
    onProgress: (report) => (dpo.onProgress = report),
    checkpoints: modelCheckpoints(dpo.model, base.tokenizer, dpo),
  };
}

/** Supervised training from scratch: metrics only. */
export function sftTrainer(ops: Ops, config: SftConfig): Trainer {
  const sft = new SftRun(ops, config);
  return {
    config: sft.config,
    next: async () => ({ metrics: { ...(await sft.next()) } }),
    evaluate: (progress) => sft.evaluate(undefined, progress),
    checkpoints: modelCheckpoints(sft.model, sft.tok, sft),
  };
}

/**
 * A Flow-GRPO run: the policy is pretrained (flow matching) on its first call, each step stores
 * its sample cloud, and the evaluation is the fraction of the fixed ODE preview inside the shape.
 * Its checkpoint is the flow policy's (flow/checkpoint.ts): the trained weights, and the
 * pretrained ones when β > 0 (the reference), so a continued run does not pretrain again; AdamW's
 * state and the batch count go in the resume record (every seed of a batch derives from it).
 */
export function flowTrainer(ops: Ops, config: FlowGrpoConfig, pretrain: PretrainOptions): Trainer {
  const problems = validateFlowGrpoConfig(config);
  if (problems.length) throw new Error(`flowgrpo-2d: ${problems.join('; ')}`);
  let report: PhaseReport | null = null;
  let flow: FlowGrpoRun | null = null;
  /** The starting weights: pretrained in this run, or a continued run's reference from its checkpoint. */
  let base: Map<string, Float32Array> | null = null;
  const ready = async (): Promise<FlowGrpoRun> => {
    if (flow) return flow;
    report?.('pretraining', 0, pretrain.iterations, 'steps');
    const { weights } = await pretrainBase(ops, config.model, pretrain, config.seed, (i) => {
      if ((i + 1) % 50 === 0) report?.('pretraining', i + 1, pretrain.iterations, 'steps');
    });
    base = weights;
    flow = new FlowGrpoRun(ops, config, weights);
    return flow;
  };
  return {
    config,
    next: async () => {
      const s = await (await ready()).next();
      report?.('storing');
      return {
        metrics: s.metrics,
        flow: {
          step: s.step,
          points: s.points,
          rewards: Float32Array.from(s.rewards),
          advantages: Float32Array.from(s.advantages),
          group: config.group,
        },
      };
    },
    evaluate: async () => {
      const points = await (await ready()).preview();
      const { inside } = flowReward(points, config.reward);
      return {
        n: inside.length,
        accuracy: inside.reduce((a, b) => a + b, 0) / inside.length,
        meanLength: 0,
        samples: [],
      };
    },
    onProgress: (r) => (report = r),
    checkpoints: {
      write: async (info) => {
        const run = await ready();
        return {
          files: flowCheckpointFiles(config.model, await run.model.getWeights(), config.beta > 0 ? base : null, info),
          resume: { optimizer: await run.model.getOptimizerState(), position: run.position() },
        };
      },
      resume: ({ files, resume }) => {
        if (flow) throw new Error('flowgrpo-2d: resume a freshly built trainer, before its first step');
        if ('tokenizer.json' in files)
          throw new Error("flowgrpo-2d: the checkpoint is a language model's, not a flow policy's");
        const loaded = importFlowCheckpoint(files, config.model);
        if (config.beta > 0 && !loaded.reference)
          throw new Error(
            `flowgrpo-2d: the checkpoint has no reference.safetensors, which the KL term (β = ${config.beta}) is measured to`,
          );
        // With β = 0 the starting weights matter to nothing once trained ones are loaded: those stand in.
        base = loaded.reference ?? loaded.weights;
        const run = new FlowGrpoRun(ops, config, base);
        run.resumeAt({ ...resume, weights: loaded.weights });
        flow = run;
      },
    },
  };
}
