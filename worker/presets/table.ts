/**
 * The one table of presets. Each entry says everything the rest of Dewpoint needs of a preset:
 * its name, title and description (the Experiments view), its options' schema and defaults (the
 * form and the CLI, through the contract's schemas; the defaults are the trainer's), the base checkpoint it starts from, the
 * views it offers, whether it takes a person's dataset and model, its trainer, and how it maps to
 * verl and TRL. The run manager, the loop, the CLI, the exports and the app read these entries;
 * nothing outside this file compares preset names.
 *
 * Adding a preset: one entry here (its schema and config mapping reused or added beside it in
 * worker/contract/run-options/, its name a literal there), plus its trainer; docs/ARCHITECTURE.md says where.
 */
import { z } from 'zod';
import { FLOW_GRPO_2D, PRETRAIN_DEFAULTS, flowConfigOf, flowOptionsOf, type FlowGrpoConfig } from '../flow/index';
import type { CheckpointTokenizer, LoadedCheckpoint } from '../model/checkpoint';
import type {
  DatasetRewardOptions,
  FieldSpec,
  OptionProblem,
  PresetFamily,
  PresetInfo,
  PresetName,
  PresetSpeed,
  PresetView,
  RunOptions,
  DpoRunOptions,
  EnvRunOptions,
  EpisodeGrpoRunOptions,
  FlowRunOptions,
  GrpoRunOptions,
  PpoEnvRunOptions,
  PpoEpisodeRunOptions,
  PpoRunOptions,
  SftRunOptions,
} from '../contract/options';
import { DPO_ARITH } from '../train/dpo';
import { GRPO_ARITH, GrpoRun } from '../train/grpo';
import {
  GRPO_CALC,
  GRPO_CODE,
  GRPO_ENV,
  GRPO_GUESS,
  EpisodeRun,
  PPO_CALC,
  PPO_ENV,
  type EpisodeSetup,
} from '../train/grpo-episodes';
import type { EnvironmentName } from '../episodes/kinds';
import { PPO_ARITH, PpoRun } from '../train/ppo';
import { SFT_ARITH, sftConfigOf, sftOptionsOf, sftTokenizer } from '../train/sft';
import { fieldsOfSchema, problemsOf, labelAndPath, type FieldNamer } from './fields';
import {
  dpoSchema,
  episodeGrpoSchema,
  envSchema,
  flowSchema,
  grpoSchema,
  ppoEnvSchema,
  ppoEpisodeSchema,
  ppoSchema,
  sftSchema,
} from './schema';
import { dpoTrainer, flowTrainer, grpoFamilyTrainer, sftTrainer, type Trainer, type TrainerContext } from './trainers';

/** The shipped base checkpoints (public/checkpoints/NAME): arithmetic, and one per environment. */
export type BaseName = 'arith-base' | 'calc-base' | 'guess-base' | 'code-base';

/** How a preset maps onto verl and TRL (worker/interop): null where the target takes it, else why not. */
interface PresetExport {
  /** The task in the words an export's unmapped list uses (neither target's config names a task); null: not an RL task. */
  task: string | null;
  /**
   * What scores it: `math` MathReward on the last \boxed{} (verl's lighteval/MATH scorer is closest),
   * `code` the companion's test cases, `environment` a multi-turn environment's reward.
   */
  reward: 'math' | 'code' | 'environment';
  verl: string | null;
  trl: string | null;
  /** SkyRL's main_base (worker/interop/skyrl.ts): null where it takes it, else why not. */
  skyrl: string | null;
}

interface PresetSpec<O extends RunOptions = RunOptions> {
  name: PresetName;
  title: string;
  description: string;
  family: PresetFamily;
  /** The zod schema of its options' shape (schema.ts, the contract's), which the table pins to `name`: validation and the form's fields. */
  schema: z.ZodObject;
  /** The options the form starts from, declared beside the trainer (GRPO_ARITH, GRPO_CALC, ...): the trainer reads them as they are. */
  defaults: O;
  /**
   * What the CLI's `train --preset` changes of `defaults` (no checkpoints: it keeps no store); null:
   * `train` does not offer it. Never the held-out n: the CLI and the app evaluate on the same tasks.
   */
  cli: Partial<O> | null;
  /** The shipped checkpoint it starts from; null: it starts from nothing (SFT) or pretrains its own policy (Flow-GRPO). */
  base: BaseName | null;
  /** The views that show its steps, besides the dashboard. */
  views: PresetView[];
  /** The dataset rewards it takes with a person's prompt file (and a person's model as its base); null: neither. */
  dataset: DatasetRewardOptions['kind'][] | null;
  /** Its rewards are graded by the companion, so the form says to connect one. */
  companion: boolean;
  /** It runs a person's environment program (the run options' `environment`), so the form offers its files. */
  environment?: boolean;
  /** Its measured speed and whether the first-visit guide suggests it (contract/options.ts `PresetTraits`). */
  speed?: PresetSpeed;
  firstStep?: { rank: number; why: string };
  /** The option that sets how many prompts (pairs, groups) a step samples: the CLI's `--prompts`. */
  promptsOption: 'prompts' | 'pairs' | 'groups' | null;
  /** A preset without a base checkpoint that still has tokens (SFT): its own vocabulary. */
  tokenizer?: (o: O) => CheckpointTokenizer;
  /** Multi-turn presets: the environment its episodes run (`program`: the options' own), which reading its journal needs too; absent otherwise. */
  episodes?: EnvironmentName | 'program';
  /** Flow-GRPO: its config, for the reward field; absent otherwise. */
  flow?: (o: O) => FlowGrpoConfig;
  /**
   * Why the run holds on to its starting weights (a reference policy), in words; null when it
   * does not. A run on a person's model continues from a checkpoint only where this is null.
   */
  reference(o: O): string | null;
  /** Its trainer, from the options and the context (whose `base` is null exactly when `base` above is). */
  trainer(o: O, context: TrainerContext): Trainer;
  export: PresetExport;
}

const ARITH_TASK =
  '2-digit addition prompts (47+35=) from public/checkpoints/arith-base, reward 1 for the exact \\boxed{} answer (MathReward)';
const CALC_TASK =
  'a+b+c problems with a calculator tool: the model writes calc(47+35), the environment appends =82, ' +
  'up to maxTurns actions, reward 1 for the right \\boxed{} answer';
/**
 * What `train --preset` changes of a preset's defaults: no checkpoints (the CLI keeps no store).
 * The held-out n stays the form's: the CLI once took the trainer config's 200 and reported other
 * accuracies than the app for the same base (33.5% on 200 against 32% on 100, issue 40).
 */
const CLI_CHANGES = { checkpointEvery: 0 };
const ALL_REWARDS: DatasetRewardOptions['kind'][] = ['math', 'exact', 'regex', 'code'];
const needsBase = (name: string, base: LoadedCheckpoint | null): LoadedCheckpoint => {
  if (!base) throw new Error(`${name}: no base checkpoint given`);
  return base;
};
/** The trainer of a multi-turn preset: an episode run of its options in `environment` from the base, journaled where the context says. */
const episodeTrainer =
  (name: PresetName, environment: EpisodeSetup['environment']) =>
  (o: EpisodeSetup['options'], c: TrainerContext): Trainer => {
    const base = needsBase(name, c.base);
    const run = new EpisodeRun(c.ops, { environment, options: o }, base, c.journal, c.services);
    return grpoFamilyTrainer(run, o, base.tokenizer);
  };
const klReference = (o: { beta: number; loraRank?: number }) =>
  o.beta > 0
    ? `KL β = ${o.beta} holds the run to the starting model${o.loraRank !== undefined ? ' (the base with its LoRA adapters off)' : ''}`
    : null;

/** Multi-turn GRPO on one of the environments (worker/episodes), journaled turn by turn. */
function episodeGrpo(
  defaults: EpisodeGrpoRunOptions,
  environment: EnvironmentName,
  base: BaseName,
  spec: Pick<PresetSpec, 'title' | 'description' | 'companion' | 'speed'> & {
    task: string;
    reward: PresetExport['reward'];
  },
): PresetSpec<EpisodeGrpoRunOptions> {
  const name = defaults.preset;
  return {
    name,
    title: spec.title,
    description: spec.description,
    family: 'grpo',
    schema: episodeGrpoSchema,
    defaults,
    cli: CLI_CHANGES,
    base,
    views: ['Groups', 'Batch', 'Episodes'],
    dataset: null,
    companion: spec.companion,
    ...(spec.speed ? { speed: spec.speed } : {}),
    promptsOption: 'prompts',
    episodes: environment,
    reference: klReference,
    trainer: episodeTrainer(name, environment),
    export: { task: spec.task, reward: spec.reward, verl: null, trl: null, skyrl: null },
  };
}

const ENV_TASK =
  "a person's environment program (JSON lines over stdin/stdout, run in companion sessions) on its task file";

/** The base the environment-program presets start from (its tool tokenizer and calc(…) / \boxed{} actions); a preview's first action is its. */
export const ENV_PROGRAM_BASE = 'calc-base' satisfies BaseName;

/**
 * A preset on a person's environment program (worker/episodes/program.ts), from calc-base: its
 * program rides in the options (`environment`), each episode runs in a companion session.
 */
function programPreset<O extends EnvRunOptions | PpoEnvRunOptions>(
  name: PresetName,
  spec: Pick<PresetSpec<O>, 'title' | 'description' | 'family' | 'schema' | 'defaults' | 'speed'>,
): PresetSpec<O> {
  return {
    name,
    ...spec,
    cli: CLI_CHANGES as Partial<O>,
    base: ENV_PROGRAM_BASE,
    views: ['Groups', 'Batch', 'Episodes'],
    dataset: null,
    companion: true,
    environment: true,
    promptsOption: 'prompts',
    episodes: 'program',
    reference: klReference,
    trainer: episodeTrainer(name, 'program'),
    export: { task: ENV_TASK, reward: 'environment', verl: null, trl: null, skyrl: null },
  };
}

const grpoEnv = programPreset('grpo-env', {
  title: 'GRPO on your own environment program (needs the companion)',
  description:
    'Multi-turn GRPO from public/checkpoints/calc-base on an environment you write: a program in any ' +
    'language that reads one JSON request per line and answers one JSON line (reset → the first ' +
    'context; step → the ids to append, running or done, and a reward), with a JSONL file of tasks ' +
    '({id, prompt, answer?, data?}). Each episode runs the program in its own companion session ' +
    '(sandboxed, killed at the end); a program that fails, hangs past the step deadline or prints a ' +
    'stray line ends its episode as an infrastructure error, masked, never a reward 0. Journaled turn ' +
    'by turn like grpo-calc; the run records the program’s SHA-256 and refuses a changed one. The ' +
    'example (examples/calc_env.py) is the calculator environment in Python; measured (README): greedy ' +
    '35% to 67–72% and pass@1 at T = 0.3 17% to 29–32% in 150 steps on 3 seeds. README: "Write your own environment".',
  family: 'grpo',
  schema: envSchema,
  defaults: GRPO_ENV,
  speed: {
    perStep: [7, 16],
    source: 'README "Write your own environment": "a step … took 7–16 s (10th–90th percentile …)"',
  },
});

const sftArith: PresetSpec<SftRunOptions> = {
  name: 'sft-arith',
  title: 'SFT: 2-digit addition',
  description:
    'Supervised fine-tuning of the small Llama-style model (2 layers, d 64, 102k parameters) on prompts ' +
    'like 47+35= with completions \\boxed{82}. Loss falls within the first steps; held-out exact-match ' +
    'accuracy climbs after ~500 steps (docs/calibration.md).',
  family: 'sft',
  schema: sftSchema,
  defaults: sftOptionsOf(SFT_ARITH, { evalN: 100, checkpointEvery: 100 }),
  cli: null, // `dewpoint pretrain` trains SFT
  base: null,
  views: [],
  dataset: null,
  companion: false,
  promptsOption: null,
  tokenizer: (o) => sftTokenizer(sftConfigOf(o, SFT_ARITH)),
  reference: () => null,
  trainer: (o, c) => sftTrainer(c.ops, sftConfigOf(o, SFT_ARITH)),
  export: {
    task: null,
    reward: 'math',
    verl:
      'sft-arith is supervised fine-tuning, not RL: verl.trainer.main_ppo has no SFT mode (verl ships a ' +
      'separate SFT trainer, which this export does not target)',
    trl:
      'sft-arith is supervised fine-tuning, not RL: use TRL SFTTrainer/SFTConfig on the addition pairs; ' +
      'this export targets the RL configs (GRPOConfig, DPOConfig, PPOConfig) only',
    skyrl:
      "sft-arith is supervised fine-tuning, not RL: SkyRL's main_base trains RL (SkyRL's SFT trainer, " +
      'skyrl/train/config/sft_config.py, is another entrypoint, which this export does not target)',
  },
};

const grpoArith: PresetSpec<GrpoRunOptions> = {
  name: 'grpo-arith',
  title: 'GRPO from the base checkpoint',
  description:
    'GRPO on 2-digit addition from public/checkpoints/arith-base: 16 prompts × 8 samples per step, ' +
    'MathReward (exact \\boxed{} answer), group-normalised advantages, PPO clip 0.2, token-mean, lr ' +
    '1e-4, β = 0. Reward and held-out accuracy rise over ~150 steps (docs/calibration.md).',
  family: 'grpo',
  schema: grpoSchema,
  defaults: GRPO_ARITH,
  cli: CLI_CHANGES,
  base: 'arith-base',
  views: ['Groups', 'Batch'],
  dataset: ALL_REWARDS,
  companion: false,
  speed: {
    perStep: [0.17, 0.17],
    source:
      'README "Backends and speed": in Chromium, auto (wasm, 2 threads), e2e/grpo-learns.spec.ts\'s median step 0.17 s',
  },
  firstStep: { rank: 1, why: 'GRPO from the shipped base: reward and held-out accuracy rise' },
  promptsOption: 'prompts',
  reference: klReference,
  trainer: (o, c) => {
    const base = needsBase('grpo-arith', c.base);
    return grpoFamilyTrainer(new GrpoRun(c.ops, o, base, c.services), o, base.tokenizer);
  },
  export: { task: ARITH_TASK, reward: 'math', verl: null, trl: null, skyrl: null },
};

const ppoArith: PresetSpec<PpoRunOptions> = {
  name: 'ppo-arith',
  title: 'PPO with a critic (value head, GAE)',
  description:
    'PPO on 2-digit addition from public/checkpoints/arith-base, on the same sample budget as grpo-arith ' +
    '(16 prompts × 8 completions): a value head on the last hidden state (zero-initialised) is trained ' +
    'with the policy on one loss (value coefficient 0.5, value clip 0.2); GAE with γ 1, λ 0.95 over each ' +
    "completion's tokens, whitened over the batch; PPO clip 0.2, token-mean, 2 epochs × 2 mini-batches " +
    'with old log-probs and values scored before the first update. Curves: value loss, explained ' +
    'variance, value clip fraction, returns and the advantage distribution; Batch shows per-token values ' +
    'and returns. Measured: +13.6 to +19.2 points held-out over 150 steps (3 seeds; GRPO +12.2 to +16.0, README).',
  family: 'ppo',
  schema: ppoSchema,
  defaults: PPO_ARITH,
  cli: CLI_CHANGES,
  base: 'arith-base',
  views: ['Groups', 'Batch'],
  dataset: ALL_REWARDS,
  companion: false,
  speed: {
    perStep: [0.52, 0.63],
    source: 'README "Measured learning outcomes": "A step takes 0.52–0.63 s on wasm (2 epochs × 2 mini-batches)"',
  },
  firstStep: { rank: 3, why: 'the same task with a critic: value loss, explained variance' },
  promptsOption: 'prompts',
  reference: klReference,
  trainer: (o, c) => {
    const base = needsBase('ppo-arith', c.base);
    return grpoFamilyTrainer(new PpoRun(c.ops, o, base, c.services), o, base.tokenizer);
  },
  export: { task: ARITH_TASK, reward: 'math', verl: null, trl: null, skyrl: null },
};

const ppoCalc: PresetSpec<PpoEpisodeRunOptions> = {
  name: 'ppo-calc',
  title: 'PPO with a critic on the calculator episodes (multi-turn)',
  description:
    "grpo-calc's episodes from public/checkpoints/calc-base (8 tasks × 8 episodes, up to 4 turns) " +
    "trained with ppo-arith's critic: a value head on every action id, GAE (γ 1, λ 0.95) over each " +
    "episode's action ids (the environment's ids are skipped), whitened, clipped value loss, 2 epochs × " +
    '2 mini-batches. Journaled and replayable like grpo-calc; Groups, Batch and the inspector show each ' +
    "id's value, return and advantage. Samples at T = 0.3 with dynamic sampling, as grpo-calc. Measured " +
    '(README): greedy 29% to 59–72% and pass@1 at T = 0.3 16% to 29–39% in 150 steps on 3 seeds.',
  family: 'ppo',
  schema: ppoEpisodeSchema,
  defaults: PPO_CALC,
  cli: CLI_CHANGES,
  base: 'calc-base',
  views: ['Groups', 'Batch', 'Episodes'],
  dataset: null,
  companion: false,
  speed: { perStep: [0.8, 1.4], source: 'README "ppo-calc": "A step takes ~1 s (0.8–1.4 s measured"' },
  promptsOption: 'prompts',
  episodes: 'calc',
  reference: klReference,
  trainer: episodeTrainer('ppo-calc', 'calc'),
  export: { task: CALC_TASK, reward: 'environment', verl: null, trl: null, skyrl: null },
};

const ppoEnv = programPreset('ppo-env', {
  title: 'PPO with a critic on your own environment program (needs the companion)',
  description:
    "grpo-env's environment program and tasks (the example: examples/calc_env.py) trained with " +
    "ppo-calc's critic: a value head on every action id, GAE over each episode's action ids, clipped " +
    'value loss, 2 epochs × 2 mini-batches. The program runs in the companion, one sandboxed session per ' +
    'episode, as for grpo-env. README: "Write your own environment".',
  family: 'ppo',
  schema: ppoEnvSchema,
  defaults: PPO_ENV,
});

const dpoArith: PresetSpec<DpoRunOptions> = {
  name: 'dpo-arith',
  title: 'DPO from the base checkpoint',
  description:
    "DPO on pairs from the base model's own samples (8 per prompt at T = 1; chosen = a correct " +
    'completion, rejected = an incorrect one), the frozen base as reference, β = 0.1, plus an NLL term ' +
    'on the chosen completion (weight 1, TRL rpo_alpha): plain DPO collapses accuracy here (docs/calibration.md).',
  family: 'dpo',
  schema: dpoSchema,
  defaults: DPO_ARITH,
  cli: CLI_CHANGES,
  base: 'arith-base',
  views: ['Groups'],
  dataset: ['math', 'exact', 'regex'],
  companion: false,
  promptsOption: 'pairs',
  reference: () => 'DPO samples its pairs from the starting model and scores them against it',
  trainer: (o, c) => dpoTrainer(c.ops, o, needsBase('dpo-arith', c.base)),
  export: {
    task: ARITH_TASK,
    reward: 'math',
    verl: 'dpo-arith is DPO: verl.trainer.main_ppo trains PPO-family objectives only; export it to TRL (DPOConfig) instead',
    trl: null,
    // NovaSky-AI/SkyRL @ a956457: no DPO loss (PolicyLossType) nor DPO trainer anywhere in skyrl/.
    skyrl:
      'dpo-arith is DPO: SkyRL has no DPO trainer (its main_base trains PPO-family objectives); export it to TRL (DPOConfig) instead',
  },
};

const flowConfig = (o: FlowRunOptions) => flowConfigOf(o, FLOW_GRPO_2D).config;
const flowNotLm = (target: string) =>
  `flowgrpo-2d trains a 2-D rectified-flow policy (an MLP velocity field over points, Flow-GRPO on SDE ` +
  `samples): ${target} train language models, so there is no equivalent run to export`;
const flowGrpo2d: PresetSpec<FlowRunOptions> = {
  name: 'flowgrpo-2d',
  title: 'Flow-GRPO: land 2-D points inside a shape',
  description:
    'A rectified-flow policy over 2-D points (an MLP velocity field, 3 × 64, time-conditioned) is first ' +
    'pretrained by flow matching to carry N(0, I) to three blobs, then trained with Flow-GRPO: 8 groups ' +
    '× 8 samples per step drawn with the SDE sampler (10 denoising steps, a Gaussian log-probability per ' +
    'step), reward 1 inside the shape (the ring 0.75 ≤ |p| ≤ 0.9) and exp(−(d/0.15)²) outside, group ' +
    'advantages (population std, 1e-4), clip 0.05 per transition. The Flow view shows the sample cloud ' +
    'of any step over the reward field; the accuracy is the fraction of 256 fixed ODE samples inside the ' +
    'shape. A checkpoint keeps the policy (and, with KL β > 0, the pretrained reference) with its AdamW ' +
    'state: a stopped or reloaded run continues exactly where it was, without pretraining again. ' +
    'Measured: 1–6% of the preview inside the ring at the start, 90–97% after 200 steps (3 seeds, README).',
  family: 'flow',
  schema: flowSchema,
  defaults: flowOptionsOf(FLOW_GRPO_2D, PRETRAIN_DEFAULTS, { checkpointEvery: 20 }),
  cli: CLI_CHANGES,
  base: null,
  views: ['Flow'],
  dataset: null,
  companion: false,
  speed: {
    run: { steps: 200, seconds: 15, what: 'pretraining included' },
    source: 'README "Flow-GRPO": "Outcome, 200 steps × 3 seeds (… wasm, ~15 s each)"',
  },
  firstStep: { rank: 2, why: '2-D points learn to land inside a ring (the Flow view)' },
  promptsOption: 'groups',
  flow: flowConfig,
  reference: () => null,
  trainer: (o, c) => {
    const { config, pretrain } = flowConfigOf(o, FLOW_GRPO_2D);
    return flowTrainer(c.ops, config, pretrain);
  },
  export: {
    task: null,
    reward: 'math',
    verl: flowNotLm("verl's main_ppo"),
    trl: flowNotLm("TRL's trainers"),
    skyrl: flowNotLm("SkyRL's main_base"),
  },
};

/** Every preset, in the order the Experiments view offers them. */
export const PRESETS: readonly PresetSpec[] = [
  sftArith,
  grpoArith,
  episodeGrpo(GRPO_CALC, 'calc', 'calc-base', {
    title: 'GRPO with a calculator tool (multi-turn)',
    description:
      'Multi-turn GRPO from public/checkpoints/calc-base on a+b+c problems: the model calls calc(47+35), ' +
      'reads the answer the environment appends (=82), calls again and finishes with \\boxed{101}, up to 4 ' +
      "turns. 8 tasks × 8 episodes per step; the environment's tokens are context, masked from the loss; " +
      'reward 1 for the right boxed answer. Every turn is journaled: close the tab mid-run and Continue, ' +
      'then open any episode in Episodes and replay it. Samples at T = 0.3 (at T = 1 this base solves ~1% of ' +
      'its episodes and collapsed) with dynamic sampling: batches until 8 groups vary. Measured (README): ' +
      'greedy 29% to 52–58% and pass@1 at T = 0.3 16% to 22–26% in 150 steps on 3 seeds.',
    companion: false,
    speed: { perStep: [0.47, 0.65], source: 'README "Multi-turn episodes": "took 0.47–0.65 s (grpo-calc)"' },
    task: CALC_TASK,
    reward: 'environment',
  }),
  episodeGrpo(GRPO_GUESS, 'guess', 'guess-base', {
    title: 'GRPO on guess-a-number (multi-turn feedback)',
    description:
      'Multi-turn GRPO from public/checkpoints/guess-base: find a secret in 1..63 from higher (>) and ' +
      'lower (<) answers in at most 7 guesses. 8 secrets × 8 episodes per step, reward 1 when found. ' +
      'Journaled like grpo-calc; samples at T = 0.3 with dynamic sampling. Measured (README): greedy 57% to ' +
      '75–76% and pass@1 at T = 0.3 57% to 69–73% in 150 steps on 3 seeds.',
    companion: false,
    speed: { perStep: [0.7, 1.2], source: 'README "Multi-turn episodes": "0.7–1.2 s (grpo-guess)"' },
    task: 'guess a secret in 1..63 from higher/lower answers, up to maxTurns guesses, reward 1 when found',
    reward: 'environment',
  }),
  episodeGrpo(GRPO_CODE, 'code', 'code-base', {
    title: 'GRPO with code rewards (needs the companion)',
    description:
      'GRPO from public/checkpoints/code-base on one-turn tasks such as "add 3, mul 5:": the model writes ' +
      'a fenced Python program (x=int(input()), then x=x+3 and x=x*5, then print(x)), and the companion ' +
      'runs it in its sandbox on three inputs; the reward is the fraction of cases whose stdout matches. 8 ' +
      "tasks × 8 samples per step; the Groups view shows each case's verdict, the session panel its " +
      'stdout and stderr. Needs a companion: run npx dewpoint companion and open the link it prints (or ' +
      'paste it in System); without one every episode fails as an infrastructure failure (masked, never ' +
      'reward 0). Samples at T = 0.3 with dynamic sampling, as grpo-calc. Measured: greedy 53.2% on the 62 held-out ' +
      'tasks rises to 59.7–67.7% in 150 steps on 3 seeds, never below the start (README).',
    companion: true,
    speed: { perStep: [3, 4], source: 'README "Code rewards": "A step takes 3–4 s here, most of it grading"' },
    task: 'write a Python program for tasks like "add 3, mul 5:", graded in the companion sandbox on three stdin/stdout cases (reward: the fraction passed)',
    reward: 'code',
  }),
  grpoEnv,
  ppoArith,
  ppoCalc,
  ppoEnv,
  dpoArith,
  flowGrpo2d,
] as unknown as readonly PresetSpec[];

const BY_NAME = new Map<string, PresetSpec>(PRESETS.map((p) => [p.name, p]));

/** The entry of preset `name`, or undefined for a name no preset has (an imported run's `verl-import`). */
export function findPreset(name: string): PresetSpec | undefined {
  return BY_NAME.get(name);
}

/** The entry of a run's preset (its options were validated, so it has one). */
export function presetOf<O extends RunOptions>(o: O): PresetSpec<O> {
  const p = BY_NAME.get(o.preset);
  if (!p) throw new Error(`no preset '${o.preset}': expected one of ${[...BY_NAME.keys()].join(', ')}`);
  return p as unknown as PresetSpec<O>;
}

/** The options of the GRPO-family, PPO-family, ... presets. */
interface FamilyOptions {
  sft: SftRunOptions;
  grpo: GrpoRunOptions | EpisodeGrpoRunOptions | EnvRunOptions;
  ppo: PpoRunOptions | PpoEpisodeRunOptions | PpoEnvRunOptions;
  dpo: DpoRunOptions;
  flow: FlowRunOptions;
}

/** Whether a run's preset is of `family` (narrowing its options). */
export function isFamily<F extends PresetFamily>(o: RunOptions, family: F): o is FamilyOptions[F] & RunOptions {
  return presetOf(o).family === family;
}

/** The episode setup of a multi-turn run (its environment and options), or null for a single-turn one. */
export function episodeRunConfigOf(o: RunOptions): EpisodeSetup | null {
  const environment = presetOf(o).episodes;
  return environment ? { environment, options: o as EpisodeSetup['options'] } : null;
}

/** A Flow-GRPO run's config (its reward field), or null for another run. */
export function flowRunConfigOf(o: RunOptions): FlowGrpoConfig | null {
  const flow = presetOf(o).flow as ((o: RunOptions) => FlowGrpoConfig) | undefined;
  return flow ? flow(o) : null;
}

/** Why a run holds on to its starting weights (the preset's `reference`), or null. */
export function referenceOf(o: RunOptions): string | null {
  return (presetOf(o).reference as (o: RunOptions) => string | null)(o);
}

/** The vocabulary of a run whose preset starts from no checkpoint but has tokens (SFT), or null. */
export function ownTokenizerOf(o: RunOptions): CheckpointTokenizer | null {
  const tokenizer = presetOf(o).tokenizer as ((o: RunOptions) => CheckpointTokenizer) | undefined;
  return tokenizer ? tokenizer(o) : null;
}

/** The trainer of a run's options. */
export function trainerOf(o: RunOptions, context: TrainerContext): Trainer {
  return (presetOf(o).trainer as (o: RunOptions, c: TrainerContext) => Trainer)(o, context);
}

/** Every preset's options: its shape's schema pinned to its name, one union by the name. */
export const runOptionsSchema = z.discriminatedUnion(
  'preset',
  PRESETS.map((p) => p.schema.safeExtend({ preset: z.literal(p.name) })) as unknown as [z.ZodObject, ...z.ZodObject[]],
);

const FIELDS = new Map<string, FieldSpec[]>(PRESETS.map((p) => [p.name, fieldsOfSchema(p.schema)]));

/** The form fields of a preset's options: the common ones first, then by section, each as in the schema. */
export function optionFields(preset: PresetName): FieldSpec[] {
  return structuredClone(FIELDS.get(preset) ?? []);
}

/**
 * Problems with `options`, each naming the field (by `name`: its label and path unless told
 * otherwise, e.g. the CLI's flags) and its allowed range or values; empty when they are valid.
 */
export function checkRunOptions(options: unknown, name: FieldNamer = labelAndPath): OptionProblem[] {
  const result = runOptionsSchema.safeParse(options);
  if (result.success) return [];
  const preset = (options as { preset?: unknown } | null)?.preset;
  return problemsOf(options, result.error, FIELDS.get(String(preset)) ?? [], name);
}

/** The presets as the app sees them (PresetInfo): the entries less their functions and schema. */
export const PRESET_INFOS: PresetInfo[] = PRESETS.map(
  (p) =>
    ({
      name: p.name,
      title: p.title,
      description: p.description,
      defaults: p.defaults,
      fields: optionFields(p.name),
      family: p.family,
      base: p.base,
      views: p.views,
      dataset: p.dataset,
      companion: p.companion,
      ...(p.environment ? { environment: true } : {}),
      ...(p.speed ? { speed: p.speed } : {}),
      ...(p.firstStep ? { firstStep: p.firstStep } : {}),
    }) as PresetInfo,
);
