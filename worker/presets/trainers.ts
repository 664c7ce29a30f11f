/**
 * What the step loop (worker/runs/loop.ts) and the CLI's `train` drive, whatever the objective:
 * a `Trainer` takes one step, evaluates, and says where it is; the adapters here wrap each
 * trainer of worker/train and worker/flow so that a step comes back with the records the store
 * keeps (groups, packed batch, sessions, a flow cloud). The preset table (table.ts) picks the
 * adapter per preset; nothing here names a preset.
 */
import type { Ops } from '../../kernels/ops';
import type { EpisodeJournal } from '../episodes/journal';
import type { KindServices } from '../episodes/kinds';
import { FlowGrpoRun, flowReward, pretrainBase, validateFlowGrpoConfig } from '../flow/index';
import type { FlowGrpoConfig, PretrainOptions } from '../flow/index';
import type { CheckpointTokenizer, LoadedCheckpoint } from '../model/checkpoint';
import type { Model } from '../model/model';
import type { BatchRecord, FlowCloud, GroupRecord, PhaseReport } from '../contract/records';
import type { Session } from '../rl/types';
import { DpoRun, type DpoConfig } from '../train/dpo';
import type { EvalResult } from '../train/evaluate';
import type { GrpoRun } from '../train/grpo';
import type { GrpoEpisodeRun } from '../train/grpo-episodes';
import type { PpoRun } from '../train/ppo';
import type { Resumable } from '../train/resume';
import { SftRun, type SftConfig } from '../train/sft';
import { batchRecord, groupRecords, pairRecords, pairSessions, type GroupsConfig } from './records';

/** One step as the loop stores it. */
export interface TrainerStep {
  metrics: Record<string, number>;
  groups?: GroupRecord[];
  batch?: BatchRecord;
  sessions?: readonly Session[];
  flow?: FlowCloud;
}

/** What the loop needs of a run, whatever its objective. */
export interface Trainer {
  /** The language model and its tokenizer, checkpointed as a Hugging Face folder; null: the run keeps no checkpoint (Flow-GRPO). */
  model: Model | null;
  tok: CheckpointTokenizer | null;
  /** The trainer's config, as a checkpoint's dewpoint.json records it. */
  config: object;
  next(): Promise<TrainerStep>;
  /** Where the step under way is, for trainers that report it (GRPO); others report the whole step as `step`. */
  onProgress?: (report: PhaseReport | null) => void;
  evaluate(): Promise<EvalResult>;
  /** The run itself, to store its position with each checkpoint and to continue from one. */
  run: Resumable;
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
export function grpoTrainer(
  grpo: GrpoRun | GrpoEpisodeRun | PpoRun,
  config: GroupsConfig,
  tok: CheckpointTokenizer,
): Trainer {
  return {
    model: grpo.model,
    tok,
    config,
    next: async () => {
      const s = await grpo.next();
      return {
        metrics: s.metrics,
        groups: groupRecords(s, tok, config),
        batch: batchRecord(s, tok),
        sessions: s.sessions,
      };
    },
    evaluate: () => grpo.evaluate(),
    onProgress: (report) => (grpo.onProgress = report),
    run: grpo,
  };
}

/** A DPO run: each step stored with its pairs as groups and their completions as sessions. */
export function dpoTrainer(ops: Ops, config: DpoConfig, base: LoadedCheckpoint): Trainer {
  const dpo = new DpoRun(ops, config, base);
  return {
    model: dpo.model,
    tok: base.tokenizer,
    config,
    next: async () => {
      const s = await dpo.next();
      return {
        metrics: s.metrics,
        groups: pairRecords(s, base.tokenizer, config),
        sessions: pairSessions(s, base.tokenizer, config),
      };
    },
    evaluate: () => dpo.evaluate(),
    onProgress: (report) => (dpo.onProgress = report),
    run: dpo,
  };
}

/** Supervised training from scratch: metrics only. */
export function sftTrainer(ops: Ops, config: SftConfig): Trainer {
  const sft = new SftRun(ops, config);
  return {
    model: sft.model,
    tok: sft.tok,
    config: sft.config,
    next: async () => ({ metrics: { ...(await sft.next()) } }),
    evaluate: () => sft.evaluate(),
    run: sft,
  };
}

/**
 * A Flow-GRPO run: the policy is pretrained (flow matching) on its first call, each step stores
 * its sample cloud, and the evaluation is the fraction of the fixed ODE preview inside the shape.
 * It keeps no checkpoint (there is no language model to export).
 */
export function flowTrainer(ops: Ops, config: FlowGrpoConfig, pretrain: PretrainOptions): Trainer {
  const problems = validateFlowGrpoConfig(config);
  if (problems.length) throw new Error(`flowgrpo-2d: ${problems.join('; ')}`);
  let report: PhaseReport | null = null;
  let flow: FlowGrpoRun | null = null;
  const ready = async (): Promise<FlowGrpoRun> => {
    if (flow) return flow;
    report?.('pretraining', 0, pretrain.iterations, 'steps');
    const { weights } = await pretrainBase(ops, config.model, pretrain, config.seed, (i) => {
      if ((i + 1) % 50 === 0) report?.('pretraining', i + 1, pretrain.iterations, 'steps');
    });
    flow = new FlowGrpoRun(ops, config, weights);
    return flow;
  };
  return {
    model: null,
    tok: null,
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
    run: {
      position: () => ({ step: flow?.step ?? 0, tasksDrawn: 0 }),
      resumeAt: () => {
        throw new Error('flowgrpo-2d runs keep no checkpoint: start a new run');
      },
    },
  };
}
