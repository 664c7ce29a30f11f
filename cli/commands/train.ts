/**
 * `dewpoint train --preset NAME | --config FILE [flags]` (the flags and presets: `dewpoint train
 * --help`, from ./train-flags.ts and worker/presets/table.ts):
 * the preset's trainer (worker/presets/table.ts) driven in Node by the app's run loop
 * (worker/runs/loop.ts, over an in-memory store, without checkpoints), printing from its events
 * one line of metrics per step (JSON lines with --json) and held-out accuracy every
 * `--eval-every` steps (and before the first step). The
 * multi-turn presets start from their environment's base (public/checkpoints/calc-base,
 * guess-base) and, with `--journal DIR`, journal every turn there (cli/node-journal.ts) under the
 * run id printed at the start, for `dewpoint episodes export`. `--save DIR` keeps each step's
 * groups and rollouts there and the weights it ends with (cli/run-folder.ts), for `dewpoint export DIR --to verl|trl|skyrl`.
 * `--config` takes the run options as the Experiments view shows them ("Config as JSON"), or a
 * part of them: the options a config leaves out are its preset's defaults (merged as the view's
 * import merges them, worker/presets/config-import.ts), the same schema (worker/presets/schema.ts)
 * checks them, and the flags override their fields.
 * `--dataset FILE --reward math|exact|regex|code [--reward-pattern RE] [--held-out N]` (grpo-arith,
 * ppo-arith, dpo-arith) trains on a person's prompt file (.jsonl or .parquet, worker/data/dataset.ts)
 * instead of the arithmetic generator: read here, checked against the base's vocabulary, and
 * carried in the run options' `dataset`; `code` grades in this process as grpo-code does.
 * Run health (worker/runs/health.ts) is read over the steps so far: `health/<flag>` (1 or 0) on
 * every `--json` line, and each flag on stderr, with its reason, when it first fires. When the run
 * ends, the reward-hacking audit (worker/runs/audit.ts) over its steps goes to stderr.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseDataset, splitDataset } from '../../worker/data/dataset';
import type { LoadedCheckpoint } from '../../worker/model/checkpoint';
import { importCheckpoint } from '../../worker/model/checkpoint';
import type {
  DatasetRewardOptions,
  DatasetRunOptions,
  DpoRunOptions,
  EnvProgramRunOptions,
  EnvRunOptions,
  EpisodeGrpoRunOptions,
  FlowRunOptions,
  GrpoRunOptions,
  PpoEpisodeRunOptions,
  PpoRunOptions,
  RunEvent,
} from '../../worker/protocol';
import { withPresetDefaults } from '../../worker/presets/config-import';
import { labelAndPath } from '../../worker/presets/fields';
import { PRESETS, checkRunOptions, episodeRunConfigOf, presetOf, trainerOf } from '../../worker/presets/table';
import { modelCheckpointFiles, type TrainerContext } from '../../worker/presets/trainers';
import { auditLines, auditStep, rewardAudit, type AuditStep } from '../../worker/runs/audit';
import { healthFields, runHealth, withCommonestFailure, type StepMetrics } from '../../worker/runs/health';
import { commonestFailure } from '../../worker/episodes/infrastructure';
import { runLoop, type ActiveRun, type LoopServices } from '../../worker/runs/loop';
import { MemoryRunStore, type StepCommit } from '../../worker/store/run-store';
import { FileJournal } from '../node-journal';
import type { JournalRunFile } from './episodes';
import { RUN_FILE } from './episodes';
import { UsageError, parseFlags } from '../args';
import { TRAIN } from './train-flags';
import { cliBackend, describeBackend } from '../backend';
import { readCheckpointDir } from '../../worker/model/node-checkpoint-dir';
import { loadCheckpointDir } from '../../worker/hf/node-hf-dir';
import { localCodeGrader } from '../code-grader';
import { cliCompanion, cliEnvironment } from '../env-program';
import { threadSampler } from '../thread-sampler';
import { RunFolderWriter } from '../run-folder';
import { StepProgress, outputsLine } from '../progress';

/** The presets `train` offers (SFT is `dewpoint pretrain`), by name. */
const TRAIN_PRESETS = new Map(PRESETS.filter((p) => p.cli !== null).map((p) => [p.name as string, p]));

/** The presets that take `--dataset` (single-turn, from the arithmetic base). */
const DATASET_PRESETS = PRESETS.filter((p) => p.dataset !== null).map((p) => p.name);
const REWARD_KINDS = ['math', 'exact', 'regex', 'code'] as const;

/** The dataset's options named by their flags in a problem (the rest by label and path). */
const DATASET_FLAGS: Record<string, string> = {
  'dataset.reward.pattern': '--reward-pattern',
  'dataset.reward.kind': '--reward',
  'dataset.heldOut': '--held-out',
  dataset: '--dataset',
};
const cliNamer = (path: string, label: string | undefined) =>
  DATASET_FLAGS[path] ??
  (path.startsWith('dataset.') ? `--dataset ${path.slice('dataset.'.length)}` : labelAndPath(path, label));

/**
 * `--dataset FILE` read and checked against the base (`base()`: its tokenizer and positions), with
 * `--reward`, `--reward-pattern` and `--held-out`; undefined without `--dataset`. Every misuse of
 * these flags, an unreadable file and the file's first bad line are usage errors naming them.
 */
export async function cliDataset(
  f: Record<string, string | number | boolean | undefined>,
  base: () => LoadedCheckpoint,
): Promise<DatasetRunOptions | undefined> {
  if (f.dataset === undefined) {
    // --held-out is also a task file's (grpo-env, cli/env-program.ts).
    for (const flag of [
      'reward',
      'reward-pattern',
      ...(f.tasks !== undefined || f.config !== undefined ? [] : ['held-out']),
    ])
      if (f[flag] !== undefined)
        throw new UsageError(`dewpoint train: --${flag} is for --dataset FILE; give the dataset too`);
    return undefined;
  }
  if (f.preset !== undefined && !(DATASET_PRESETS as readonly string[]).includes(f.preset as string))
    throw new UsageError(
      `dewpoint train: --dataset is for the presets ${DATASET_PRESETS.join(', ')}, not ${String(f.preset)}`,
    );
  const kind = f.reward as string | undefined;
  if (kind === undefined)
    throw new UsageError(`dewpoint train: --dataset needs --reward: one of ${REWARD_KINDS.join(', ')}`);
  if (!(REWARD_KINDS as readonly string[]).includes(kind))
    throw new UsageError(`dewpoint train: --reward must be one of ${REWARD_KINDS.join(', ')}, got '${kind}'`);
  if (kind === 'regex' && f['reward-pattern'] === undefined)
    throw new UsageError(
      'dewpoint train: --reward regex needs --reward-pattern RE (one capture group, the answer, or none for the whole match)',
    );
  if (kind !== 'regex' && f['reward-pattern'] !== undefined)
    throw new UsageError(`dewpoint train: --reward-pattern is for --reward regex, not --reward ${kind}`);
  const reward: DatasetRewardOptions =
    kind === 'regex'
      ? { kind, pattern: f['reward-pattern'] as string }
      : { kind: kind as DatasetRewardOptions['kind'] };
  const file = f.dataset as string;
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    throw new UsageError(`dewpoint train: cannot read --dataset ${file}: ${(e as Error).message}`);
  }
  const b = base();
  const loaded = await parseDataset(basename(file), bytes, {
    tokenizer: b.tokenizer,
    maxPromptIds: b.config.maxSeq - 1,
    reward,
  });
  if (!loaded.ok) throw new UsageError(`dewpoint train: --dataset ${loaded.message}`);
  // --held-out is checked with the other options (the schema), so a bad count is named by its flag.
  return f['held-out'] === undefined ? loaded.dataset : { ...loaded.dataset, heldOut: f['held-out'] as number };
}

/** The options to run: `--config FILE` or the preset's, with the flags written over them (and `dataset`, from `cliDataset`), checked by the schema. */
export function cliRunOptions(
  f: Record<string, string | number | boolean | undefined>,
  dataset?: DatasetRunOptions,
):
  | GrpoRunOptions
  | EpisodeGrpoRunOptions
  | EnvRunOptions
  | PpoRunOptions
  | PpoEpisodeRunOptions
  | DpoRunOptions
  | FlowRunOptions {
  let options: Record<string, unknown>;
  // Whether the config file itself names an environment program (a run's record), not the preset's example.
  let recordedEnvironment = false;
  if (f.config !== undefined) {
    if (f.preset !== undefined)
      throw new UsageError('dewpoint train: give --preset or --config, not both (the config names its preset)');
    let text: string;
    try {
      text = readFileSync(f.config as string, 'utf8');
    } catch (e) {
      throw new UsageError(`dewpoint train: cannot read --config ${f.config}: ${(e as Error).message}`);
    }
    let config: unknown;
    try {
      config = JSON.parse(text);
    } catch (e) {
      throw new UsageError(`dewpoint train: --config ${f.config} is not JSON: ${(e as Error).message}`);
    }
    const preset = (config as { preset?: unknown } | null)?.preset;
    if (!TRAIN_PRESETS.has(String(preset))) {
      throw new UsageError(
        `dewpoint train: the config's preset must be one of ${[...TRAIN_PRESETS.keys()].join(', ')}, got '${String(preset)}'`,
      );
    }
    // A partial config takes the preset's defaults for the rest, as the Experiments view's import does.
    options = withPresetDefaults(config)!;
    recordedEnvironment = (config as Record<string, unknown>).environment != null;
  } else {
    const name = (f.preset as string | undefined) ?? PRESETS.find((p) => p.cli !== null)!.name;
    const preset = TRAIN_PRESETS.get(name);
    if (!preset)
      throw new UsageError(
        `dewpoint train: --preset must be one of ${[...TRAIN_PRESETS.keys()].join(', ')}, got '${name}'`,
      );
    options = { ...structuredClone(preset.defaults), ...preset.cli };
  }
  const flagFields: Record<string, string> = {
    steps: 'steps',
    seed: 'seed',
    lr: 'lr',
    'max-grad-norm': 'maxGradNorm',
    'eval-every': 'evalEvery',
    'eval-n': 'evalN',
    'train-problems': 'trainProblems',
    staleness: 'staleness',
  };
  for (const [flag, field] of Object.entries(flagFields)) if (f[flag] !== undefined) options[field] = f[flag];
  const promptsOption = TRAIN_PRESETS.get(String(options.preset))!.promptsOption;
  if (f.prompts !== undefined && promptsOption) options[promptsOption] = f.prompts;
  const takesEnvironment = TRAIN_PRESETS.get(String(options.preset))!.environment === true;
  if (takesEnvironment)
    // A config's program is a run's record (its hash holds); a preset's default program is only the example.
    options.environment = cliEnvironment(
      f,
      options.environment as EnvProgramRunOptions | undefined,
      recordedEnvironment,
    );
  else
    for (const flag of ['env-program', 'env-argv', 'tasks', 'companion', 'token'])
      if (f[flag] !== undefined)
        throw new UsageError(
          `dewpoint train: --${flag} is for the environment-program presets (${PRESETS.filter((p) => p.environment)
            .map((p) => p.name)
            .join(', ')}), not ${String(options.preset)}`,
        );
  if (dataset) {
    if (!(DATASET_PRESETS as readonly string[]).includes(options.preset as string))
      throw new UsageError(
        `dewpoint train: --dataset is for the presets ${DATASET_PRESETS.join(', ')}, not ${String(options.preset)}`,
      );
    options.dataset = dataset;
  }
  // --sampler thread|model: the samplerWorker option (worker threads here, Web Workers in the app); absent: the config's.
  if (f.sampler !== undefined) {
    if (f.sampler !== 'model' && f.sampler !== 'thread')
      throw new UsageError(`dewpoint train: --sampler must be model or thread, got '${String(f.sampler)}'`);
    if (f.sampler === 'thread') options.samplerWorker = true;
    else delete options.samplerWorker;
  }
  const problems = checkRunOptions(options, cliNamer);
  if (problems.length)
    throw new UsageError(`dewpoint train: invalid run options:\n${problems.map((p) => `  ${p.message}`).join('\n')}`);
  // An app run's picked model lives in that tab's worker, not here: the folder itself is --checkpoint.
  if (options.base !== undefined)
    throw new UsageError(
      "dewpoint train: the config's base names a model picked in the app (kept in that tab's worker); give " +
        'its folder with --checkpoint DIR and drop base from the config',
    );
  return options as unknown as
    | GrpoRunOptions
    | EpisodeGrpoRunOptions
    | EnvRunOptions
    | PpoRunOptions
    | PpoEpisodeRunOptions
    | DpoRunOptions
    | FlowRunOptions;
}

export async function trainCommand(argv: string[]): Promise<number> {
  const f = parseFlags(TRAIN.name, argv, TRAIN.flags);
  // The dataset presets all start from the arithmetic base: read it once, for the dataset's checks and the run.
  // --checkpoint: a Dewpoint checkpoint or a Hugging Face Llama/Mistral folder, read (and checked) before anything runs.
  let given: LoadedCheckpoint | null = null;
  if (f.checkpoint !== undefined) {
    try {
      given = await loadCheckpointDir(f.checkpoint as string);
    } catch (e) {
      throw new UsageError(`dewpoint train: --checkpoint ${String(f.checkpoint)}: ${(e as Error).message}`);
    }
  }
  let arithBase: LoadedCheckpoint | null = given;
  const readArithBase = () => (arithBase ??= importCheckpoint(readCheckpointDir('public/checkpoints/arith-base')));
  const options = cliRunOptions(f, await cliDataset(f, readArithBase));
  const name = options.preset;
  const preset = presetOf(options);
  const episodic = episodeRunConfigOf(options) !== null;
  if (f.journal !== undefined && !episodic)
    throw new UsageError(
      `dewpoint train: --journal is for the episode presets (${PRESETS.filter((p) => p.episodes)
        .map((p) => p.name)
        .join(', ')}), not ${name}`,
    );
  const baseName = preset.base;
  if (baseName === null && f.checkpoint !== undefined)
    throw new UsageError(
      `dewpoint train: ${name} starts from no checkpoint (its policy is pretrained in the run); drop --checkpoint`,
    );
  const dir = (f.checkpoint as string | undefined) ?? `public/checkpoints/${baseName}`;
  const loaded =
    baseName === null
      ? null
      : (given ?? (baseName === 'arith-base' && arithBase ? arithBase : importCheckpoint(readCheckpointDir(dir))));
  const { ops, info } = await cliBackend(f.backend);
  // Progress on stderr (cli/progress.ts): cleared before each line of metrics, so a terminal's step line never runs into one.
  const progress = new StepProgress(`train ${name}`, options.steps);
  const print = (x: Record<string, unknown>) => {
    progress.clear();
    process.stdout.write(
      `${
        f.json
          ? JSON.stringify(x)
          : Object.entries(x)
              .map(([k, v]) => `${k}=${typeof v === 'number' ? +v.toPrecision(4) : v}`)
              .join(' ')
      }\n`,
    );
  };
  // --save keeps each step's records (groups, batch, sessions) as the app's store keeps them (worker/presets/records.ts), for `dewpoint export`.
  if (f.save !== undefined && preset.export.verl !== null && preset.export.trl !== null)
    throw new UsageError(
      `dewpoint train: --save keeps rollouts for dewpoint export, and ${name} exports to neither verl nor TRL (${preset.export.trl})`,
    );
  const { steps, evalEvery, evalN } = options;
  // grpo-code (and a dataset's code reward) grades in this process with the companion's runner (cli/code-grader.ts).
  const dataset = 'dataset' in options ? options.dataset : undefined;
  const local = (preset.companion && !preset.environment) || dataset?.reward.kind === 'code' ? localCodeGrader() : null;
  // grpo-env: the program's sessions open in a companion (this process's own, or --companion URL).
  const companion = preset.environment ? await cliCompanion(f) : null;
  if (companion) {
    const env = (options as EnvRunOptions).environment!;
    process.stderr.write(
      `train ${name}: environment ${env.program.name} (sha256 ${env.program.sha256}, ${env.program.argv.join(' ')}) on ` +
        `${env.tasks.name} (${env.tasks.records.length} tasks, ${env.tasks.heldOut} held out), sessions in ${companion.where}\n`,
    );
  }
  if (dataset) {
    const split = splitDataset(dataset.records, dataset.heldOut);
    process.stderr.write(
      `train ${name}: dataset ${dataset.name} (${dataset.records.length} records: ${split.train.length} to ` +
        `train on, ${split.heldOut.length} held out), reward ${dataset.reward.kind}${dataset.reward.kind === 'regex' ? ` /${dataset.reward.pattern}/` : ''}\n`,
    );
  }
  // The run's id (the journal's, the loop's) and this process as the journal's writer.
  const runId = `cli-${name}-${Date.now().toString(36)}`;
  const writer = `${runId}/cli`;
  let journal: TrainerContext['journal'] = null;
  if (f.journal !== undefined) {
    const files = new FileJournal(f.journal as string);
    journal = { journal: files, runId, writer };
    const file: JournalRunFile = { runId, options: options as JournalRunFile['options'], checkpoint: dir };
    mkdirSync(files.runDir(runId), { recursive: true });
    writeFileSync(join(files.runDir(runId), RUN_FILE), JSON.stringify(file, null, 2));
    process.stderr.write(`train ${name}: journaling every turn to ${f.journal} as run ${runId}\n`);
  }
  if ('samplerWorker' in options && options.samplerWorker)
    process.stderr.write(`train ${name}: sampling ahead on worker threads (one-thread wasm each)\n`);
  // The preset's trainer, built here so that a problem building it ends the command as before any step (a Flow-GRPO policy is pretrained on the first step).
  const run = trainerOf(options, {
    ops,
    base: loaded,
    services: {
      codeGrader: local?.grader ?? null,
      companion: companion?.client ?? null,
      remoteSampler: threadSampler, // for the samplerWorker option (cli/thread-sampler.ts)
    },
    journal,
  });
  const saver = f.save !== undefined ? new RunFolderWriter(f.save as string, options) : null;
  if (saver)
    process.stderr.write(
      `train ${name}: saving each step's groups and rollouts to ${saver.dir} (for dewpoint export ${saver.dir} --to verl|trl)\n`,
    );
  process.stderr.write(
    `train ${name}: ${describeBackend(info)}, from ${loaded ? dir : 'a policy pretrained in the run'}, ${steps} steps\n`,
  );
  process.stderr.write(
    outputsLine(`train ${name}`, {
      runId: journal?.runId,
      journal: f.journal as string | undefined,
      save: saver?.dir,
      json: f.json === true,
    }),
  );
  // The run as the app's run manager drives it (worker/runs/loop.ts): this prints from its events.
  const store = new CliRunStore();
  const active: ActiveRun = { id: runId, status: 'running', wake: null, done: null, ended: false };
  const events = cliEvents({ name, progress, print, json: f.json === true, evalN, store, saver });
  const services: LoopServices = {
    store,
    ops: () => ops,
    backendChoice: () => null,
    trainer: async () => run,
    checkpoints: false,
  };
  try {
    await runLoop(services, active, options, events.receive, null, writer);
  } finally {
    progress.end();
    await local?.close();
    await companion?.close();
  }
  // A run that failed ends the command as its error did (bin/dewpoint.mjs prints `dewpoint: Name: message`, exit 1).
  const failed = events.failure();
  if (failed) throw failed;
  // The weights the run ended with, beside its steps: what `dewpoint export RUN --to verl|skyrl` bundles.
  if (saver && run.checkpoints) {
    const ck = await run.checkpoints.write({ run: runId, preset: name, steps, from: loaded ? dir : null });
    saver.model(modelCheckpointFiles(ck.files, `${name}'s checkpoint`));
  }
  if (evalEvery > 0) process.stderr.write(`train ${name}: ${events.accuracyLine()}\n`);
  for (const line of events.auditLines()) process.stderr.write(`train ${name}: ${line}\n`);
  if (local)
    process.stderr.write(
      `train ${name}: ${local.grader.misses} completions graded, ${local.grader.hits} repeats answered from the cache\n`,
    );
  return 0;
}

/**
 * The CLI run's store: in memory (worker/store/run-store.ts), keeping what the loop commits of a
 * step (metrics, evaluation, time) but not its records (groups, batch, sessions, flow cloud): those
 * are `latest` until the next commit, read by the step's event (the run folder, the infrastructure
 * flag), so a run of thousands of steps does not hold every rollout in memory.
 */
class CliRunStore extends MemoryRunStore {
  /** The last step committed, with its records. */
  latest: StepCommit | null = null;

  override async commitStep(runId: string, commit: StepCommit): Promise<number> {
    const { step, ms, metrics, evaluation } = commit;
    const t = await super.commitStep(runId, {
      step,
      metrics,
      ...(ms !== undefined ? { ms } : {}),
      ...(evaluation ? { evaluation } : {}),
    });
    this.latest = commit;
    return t;
  }
}

/**
 * The metric families a plain-text step line shows (`--json` has every metric): the reward, the
 * losses, the policy update, the critic, the episodes, the gradient, the responses, the timings,
 * and a step's own held-out figures (the flow policy's `eval/inside_frac`); of each only its own
 * keys (`critic/vf_loss`, not the nested `critic/values/mean`). The detail families (batch/,
 * sessions/, filter/, mismatch/, logps/, dpo/, async/) stay in `--json`; the health flags on
 * stderr say when one of them matters (`mismatch` reads mismatch/kl). Families, not keys: a
 * trainer's new metric in one of them prints without a change here, and no key list goes stale.
 */
const PLAIN_FAMILIES = new Set([
  'reward',
  'rewards',
  'loss',
  'rl',
  'critic',
  'episodes',
  'opt',
  'response',
  'perf',
  'eval',
]);

/** Whether a plain-text step line shows the metric `key` (`PLAIN_FAMILIES`). */
function plainKey(key: string): boolean {
  const parts = key.split('/');
  return parts.length === 2 && PLAIN_FAMILIES.has(parts[0]);
}

/**
 * What `dewpoint train` prints of a run, from the loop's events: each evaluation's line (eval/*
 * and its pass rates), each step's metrics (every one with their health/* fields in `--json`, the
 * `PLAIN_FAMILIES` otherwise) and the progress line, each health flag on stderr when it first
 * fires, and each step's records to the run folder (`--save`). The loop tells a step's evaluation
 * before the step (it stores them together): its line prints after the step's, as the step ran first.
 */
function cliEvents(c: {
  name: string;
  progress: StepProgress;
  print: (x: Record<string, unknown>) => void;
  json: boolean;
  evalN: number;
  store: CliRunStore;
  saver: RunFolderWriter | null;
}) {
  // Run health (worker/runs/health.ts) over the steps so far: health/* in --json, each flag on stderr when it first fires.
  const history: StepMetrics[] = [];
  // The reward-hacking audit (worker/runs/audit.ts): each step's metrics and within-group sums, printed when the run ends.
  const audits: AuditStep[] = [];
  const raised = new Set<string>();
  let first = NaN;
  let last = NaN;
  let evaluated = c.evalN;
  let pending: EvalEvent | null = null;
  let failed: StatusEvent | null = null;
  const printEval = (e: EvalEvent) => {
    evaluated = e.n;
    if (e.step === 0) first = e.accuracy;
    last = e.accuracy;
    c.print({
      step: e.step,
      'eval/accuracy': e.accuracy,
      'eval/mean_length': e.meanLength,
      'eval/n': e.n,
      ...e.metrics,
    });
  };
  const stepped = (e: StepEvent) => {
    // The step's own metrics: the loop stores its evaluation's (pass rates) with it; they print on the evaluation's line.
    const own = pending?.metrics;
    const metrics = own ? Object.fromEntries(Object.entries(e.metrics).filter(([k]) => !(k in own))) : e.metrics;
    const records = c.store.latest?.step === e.step ? c.store.latest : null;
    if (c.saver && records) c.saver.add(e.step, records, metrics);
    history.push({ step: e.step, metrics });
    audits.push(auditStep(e.step, metrics, records?.groups ?? null));
    // The infrastructure flag names this step's commonest failure (it fires at the step that failed).
    const failures = (records?.sessions ?? []).filter((x) => x.status === 'failed');
    for (const flag of withCommonestFailure(runHealth(history), commonestFailure(failures))) {
      if (raised.has(flag.id)) continue;
      raised.add(flag.id);
      c.progress.note(`train ${c.name}: health: ${flag.id} from step ${flag.step}: ${flag.reason}\n`);
    }
    c.print({
      step: e.step,
      ...(c.json
        ? { ...metrics, ...healthFields(history) }
        : Object.fromEntries(Object.entries(metrics).filter(([k]) => plainKey(k)))),
    });
    c.progress.step(e.step);
    if (pending) printEval(pending);
    pending = null;
  };
  return {
    receive: (e: RunEvent) => {
      if (e.type === 'status') {
        // The steps start after the evaluation before training (step 0): the ETA leaves it out.
        if (e.status === 'running') c.progress.begin();
        if (e.status === 'failed') failed = e;
      } else if (e.type === 'eval') {
        if (e.step > 0) pending = e;
        else {
          printEval(e);
          c.progress.begin();
        }
      } else if (e.type === 'step') stepped(e);
    },
    /** The reward-hacking audit's lines over the steps run (runs/audit.ts). */
    auditLines: () => auditLines(rewardAudit(audits), audits.length),
    /** The error a failed run ended with, by its name and message; null unless it failed. */
    failure: (): Error | null =>
      failed && Object.assign(new Error(failed.message ?? 'the run failed'), { name: failed.errorName ?? 'Error' }),
    /** The held-out accuracy before training and after the last evaluation. */
    accuracyLine: () =>
      `held-out accuracy ${(first * 100).toFixed(1)}% -> ${(last * 100).toFixed(1)}% (${evaluated} tasks)`,
  };
}

type EvalEvent = Extract<RunEvent, { type: 'eval' }>;
type StepEvent = Extract<RunEvent, { type: 'step' }>;
type StatusEvent = Extract<RunEvent, { type: 'status' }>;
