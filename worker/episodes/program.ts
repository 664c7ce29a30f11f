/**
 * A person's environment program as an environment kind (grpo-env): the program (any language,
 * speaking the JSON-lines protocol of companion/protocol.ts "Environment sessions") runs in one
 * companion session per episode (companion-env.ts), on the tasks of a JSONL file. This module reads
 * and checks the two files (`loadEnvironment`: the first bad line named, nothing loaded on a bad
 * file), and makes the kind (`programKind`): the training stream (passes over the training tasks,
 * each in a fresh order seeded by the run), the held-out split (`splitTasks`: a fixed hash of each
 * task's prompt and data), the verifier of an episode the program did not
 * score (the last `\boxed{}` equals the task's `answer`, else 0), and the step deadline from the
 * program's wall. Not the protocol (the companion checks every reply) and not a trainer.
 *
 * A program has no demonstrations (the kind's `demonstrate` throws): an SFT base for its action
 * format is made elsewhere. Without a connected companion every episode fails at reset as an
 * infrastructure failure that says how to start one, as grpo-code's grading does.
 */
import type { EnvironmentLoadResult, EnvironmentPreview, FileProblem } from '../contract/models';
import type { EnvProgramRunOptions, EnvTaskRecord } from '../contract/options';
import type { CompanionClient } from '../companion-client/client';
import { COMPANION_SESSION_PLACES } from '../companion-client/client';
import { extractBoxed } from '../data/answer';
import { datasetStream, defaultHeldOut, problemMessage, splitDataset } from '../data/dataset';
import { jsonlRows, utf8Text } from '../data/jsonl';
import { sha256Hex } from '../data/sha256';
import { toolTokenizer } from '../data/tokenizer';
import { createCpuOps } from '../../kernels/backends/cpu';
import type { LoadedCheckpoint } from '../model/checkpoint';
import { Model } from '../model/model';
import { CompanionEnvironment, companionDeadlineMs, type CompanionEnvOptions } from './companion-env';
import type { EnvTask, EnvironmentKind } from './environment';
import { taskStream } from './environment';
import { stderrLines } from './infrastructure';
import { collectEpisodes } from './rollout';

/** The program, its tasks, and the companion's wall per request (`stepSeconds`): what a grpo-env config carries. */
export interface EnvProgramConfig extends EnvProgramRunOptions {
  stepSeconds: number;
}

/**
 * The command that starts a program by its file's extension: Python isolated from the
 * environment's variables and user site; Node without its JIT, whose startup reserves more
 * address space than the sandbox's default cap (limits.memoryBytes, 256 MiB) allows.
 */
export function defaultArgv(name: string): string[] | null {
  if (/\.py$/i.test(name)) return ['python3', '-I', name];
  if (/\.(m|c)?js$/i.test(name)) return ['node', '--jitless', name];
  if (/\.sh$/i.test(name)) return ['sh', name];
  return null;
}

/** A command line split on spaces (no quoting: a word with a space is not supported). */
export function argvOf(line: string): string[] {
  return line.trim().split(/\s+/).filter(Boolean);
}

const TASK_FIELDS = ['id', 'prompt', 'answer', 'data'];
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const shown = (v: unknown) => {
  const t = JSON.stringify(v) ?? String(v);
  return t.length > 40 ? `${t.slice(0, 37)}...` : t;
};

/**
 * The tasks of a JSONL text, or the first bad line: `id` (a string or an integer, unique), `prompt`
 * (a string), optional `answer` (a string or a number) and `data` (an object).
 */
export function parseEnvTasks(
  name: string,
  text: string,
): { ok: true; records: EnvTaskRecord[] } | { ok: false; problem: FileProblem } {
  const bad = (line: number | null, field: string | null, expected: string, got: string) => ({
    ok: false as const,
    problem: { file: name, line, unit: 'line' as const, field, expected, got },
  });
  const records: EnvTaskRecord[] = [];
  const seen = new Map<string, number>();
  for (const row of jsonlRows(text)) {
    if ('notJson' in row) return bad(row.at, null, 'one JSON object per line, a task', `is not JSON (${row.notJson})`);
    const r = row.raw;
    if (!isObject(r))
      return bad(row.at, null, 'one JSON object per line: {id, prompt, answer?, data?}', `is ${shown(r)}`);
    const extra = Object.keys(r).find((k) => !TASK_FIELDS.includes(k));
    if (extra !== undefined)
      return bad(row.at, extra, `only the fields ${TASK_FIELDS.join(', ')} (put anything else in data)`, 'is not one');
    const id = typeof r.id === 'number' && Number.isSafeInteger(r.id) ? String(r.id) : r.id;
    if (typeof id !== 'string' || id === '')
      return bad(
        row.at,
        'id',
        'a non-empty string or an integer',
        r.id === undefined ? 'is missing' : `is ${shown(r.id)}`,
      );
    if (seen.has(id))
      return bad(row.at, 'id', 'an id no other task has', `is ${shown(id)}, as on line ${seen.get(id)}`);
    seen.set(id, row.at);
    if (typeof r.prompt !== 'string')
      return bad(row.at, 'prompt', 'a string', r.prompt === undefined ? 'is missing' : `is ${shown(r.prompt)}`);
    const answer = r.answer ?? '';
    if (typeof answer !== 'string' && !(typeof answer === 'number' && Number.isFinite(answer)))
      return bad(row.at, 'answer', 'a string or a number', `is ${shown(answer)}`);
    const data = r.data ?? {};
    if (!isObject(data)) return bad(row.at, 'data', 'a JSON object', `is ${shown(data)}`);
    records.push({ id, prompt: r.prompt, answer: String(answer), data });
  }
  if (records.length === 0) return bad(null, null, 'at least one task, one JSON object per line', 'has none');
  return { ok: true, records };
}

interface EnvironmentFiles {
  program: { name: string; text: string };
  tasks: { name: string; text: string };
  /** The command that starts it (default by the program's extension, `defaultArgv`). */
  argv?: string[];
  /** Held-out tasks (default `defaultHeldOut`: a tenth, at least 1 of 2 or more). */
  heldOut?: number;
}

/** The program and its tasks for a run's options (its hash computed), or the first problem with either file. */
export function loadEnvironment(f: EnvironmentFiles): EnvironmentLoadResult {
  const fail = (problem: FileProblem): EnvironmentLoadResult => ({
    ok: false,
    problem,
    message: problemMessage(problem),
  });
  const whole = (file: string, expected: string, got: string) =>
    fail({ file, line: null, unit: 'line', field: null, expected, got });
  const { program } = f;
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(program.name))
    return whole(program.name, 'a plain file name (letters, digits, . _ -)', 'has other characters; rename the file');
  if (program.text.trim() === '') return whole(program.name, "the program's text", 'is empty');
  if (new TextEncoder().encode(program.text).length > 1 << 20) return whole(program.name, 'at most 1 MiB', 'is larger');
  const argv = f.argv ?? defaultArgv(program.name);
  if (!argv || argv.length === 0)
    return whole(program.name, 'a .py, .js, .mjs or .sh file, or the command that starts it', 'has no known extension');
  const tasks = parseEnvTasks(f.tasks.name, f.tasks.text);
  if (!tasks.ok) return fail(tasks.problem);
  const n = tasks.records.length;
  const heldOut = f.heldOut ?? defaultHeldOut(n);
  if (!Number.isInteger(heldOut) || heldOut < 0 || heldOut > n - 1)
    return whole(f.tasks.name, `held-out tasks in 0..${n - 1} (a task must remain to train on)`, `asks ${heldOut}`);
  if (splitTasks(tasks.records, heldOut).train.length === 0)
    return whole(f.tasks.name, 'a task to train on that is not held out', `has every task equal to a held-out one`);
  return {
    ok: true,
    environment: {
      program: { name: program.name, text: program.text, sha256: sha256Hex(program.text), argv },
      tasks: { name: f.tasks.name, records: tasks.records, heldOut },
    },
  };
}

/**
 * The held-out split of a task file: `splitDataset`'s (the first `heldOut` by a fixed hash, a
 * training task equal to a held-out one dropped) over each task's prompt, with its `data` when it
 * has any, so tasks that share a prompt and differ in their data (guess's secrets) are different
 * tasks, and a file of distinct prompts splits as a dataset of those prompts would.
 */
export function splitTasks(records: readonly EnvTaskRecord[], heldOut: number): ReturnType<typeof splitDataset> {
  const key = (r: EnvTaskRecord) =>
    Object.keys(r.data).length ? `${r.prompt}\u0000${JSON.stringify(r.data)}` : r.prompt;
  return splitDataset(
    records.map((r) => ({ prompt: key(r) })),
    heldOut,
  );
}

/** The session request that runs `c`'s program: its one file, its command, its wall per request. */
function programRequest(c: EnvProgramConfig): CompanionEnvOptions['program'] {
  return { files: { [c.program.name]: c.program.text }, argv: c.program.argv, limits: { wallSeconds: c.stepSeconds } };
}

/** Reward of an episode the program did not score: 1 when the last `\boxed{}` is the task's answer (never for an empty answer). */
export function verifyProgramTask(task: EnvTask, transcript: string): number {
  return task.answer !== '' && extractBoxed(transcript) === task.answer ? 1 : 0;
}

export const NO_COMPANION =
  'no companion is connected: run npx dewpoint companion and open the link it prints (or paste it in System)';

/**
 * The kind of `c`'s program on its tasks, its episodes in sessions of `companion` (null: each
 * fails at reset, saying how to connect one). Turn limit and action length are the config's
 * (grpo-episodes.ts `configuredKind` sets them).
 */
export function programKind(c: EnvProgramConfig, companion: CompanionClient | null): EnvironmentKind {
  const records = c.tasks.records;
  const split = splitTasks(records, c.tasks.heldOut);
  const tok = toolTokenizer();
  const options = companion ? { client: companion, program: programRequest(c), tok } : null;
  return {
    name: 'program',
    title: `${c.program.name} on ${c.tasks.name}`,
    trainTasks: (seed) => {
      const stream = datasetStream(records, split.train, seed);
      return taskStream(() => taskAt(c, stream.next().record));
    },
    heldOut: (n) => split.heldOut.slice(0, n).map((i) => taskAt(c, i)),
    create: (task) =>
      options
        ? new CompanionEnvironment(task, options)
        : {
            reset: () => {
              throw new Error(NO_COMPANION);
            },
            step: () => ({ observation: [], status: 'error', failure: 'sandbox_error', detail: NO_COMPANION }),
          },
    verify: verifyProgramTask,
    maxTurns: 1,
    maxActionTokens: 1,
    demonstrate: () => {
      throw new Error(`${c.program.name}: an environment program has no demonstrations`);
    },
    stepTimeoutMs: companionDeadlineMs({ program: programRequest(c) }),
    maxOpen: COMPANION_SESSION_PLACES,
  };
}

/** `loadEnvironment` over the files' bytes (as a picker gives them): each must be UTF-8 text. */
export function loadEnvironmentBytes(
  files: { program: { name: string; bytes: Uint8Array }; tasks: { name: string; bytes: Uint8Array } },
  choice: { argv?: string[]; heldOut?: number } = {},
): EnvironmentLoadResult {
  const texts = [files.program, files.tasks].map((f) => ({ name: f.name, text: utf8Text(f.bytes) }));
  const bad = texts.find((f) => f.text === null);
  if (bad) {
    const problem: FileProblem = {
      file: bad.name,
      line: null,
      unit: 'line',
      field: null,
      expected: 'UTF-8 text',
      got: 'is not',
    };
    return { ok: false, problem, message: problemMessage(problem) };
  }
  const [program, tasks] = texts as { name: string; text: string }[];
  return loadEnvironment({ program, tasks, ...choice });
}

/**
 * The first task's reset and one step in a session of `companion` (then closed), through the same
 * rollout a run uses (so a failure reads in the same words): the first context, the greedy first
 * action of at most `maxNew` ids of `base` (the presets' base checkpoint, frozen on the CPU
 * reference kernels: the same action every time, no backend of the run's needed), and the
 * program's reply, with its stderr. The program's failure, a context the model cannot take, or no
 * companion is a message, not a throw.
 */
export async function previewEnvironment(
  companion: CompanionClient | null,
  c: EnvProgramConfig,
  base: LoadedCheckpoint,
  maxNew: number,
): Promise<EnvironmentPreview> {
  if (!companion) return { ok: false, message: NO_COMPANION };
  const policy = new Model(createCpuOps(), base.config, { frozen: true });
  policy.setWeights(base.weights);
  const tok = toolTokenizer();
  // One task, one episode, one turn: the round after the first is cancelled, so the reply's own status stays.
  let rounds = 0;
  const kind = { ...programKind(c, companion), maxTurns: 2, maxActionTokens: maxNew };
  const t0 = performance.now();
  const [e] = await collectEpisodes(policy, [taskAt(c, 0)], 1, {
    kind,
    tok,
    maxContext: policy.config.maxSeq,
    sampling: { temperature: 0 },
    seed: 0,
    policyVersion: 0,
    onProgress: (round) => (rounds = round),
    shouldCancel: () => rounds >= 1,
  });
  const stderr = e.stderr ?? '';
  const ep = e.episode;
  const turn = ep.transitions[0];
  if (ep.status === 'error' || !ep.initial || !turn)
    return {
      ok: false,
      message: (ep.detail || `the episode ended ${ep.status} before its first step`) + stderrLines(stderr),
      ...(stderr ? { stderr } : {}),
    };
  const context = Array.from(ep.initial.context);
  const tokens = Array.from(turn.action.tokens);
  const sampled = turn.action.terminated ? tokens.slice(0, -1) : tokens;
  const after = turn.action.context.length + tokens.length;
  const obs = turn.observation;
  const next = Array.from(obs.context);
  const text = tok.decode(next.length >= after ? next.slice(after) : next, { specials: true });
  const detail = obs.detail ?? '';
  // The reply in words, as the app and `env check` show it.
  const said = !turn.action.terminated
    ? `not sent (${detail})`
    : `the program answered ${obs.status === 'running' ? 'running' : 'done'}` +
      `${text ? `, appending ${JSON.stringify(text)}` : ''}${detail ? ` (${detail})` : ''}` +
      `${ep.reward !== null ? `, reward ${ep.reward}` : ''}`;
  return {
    ok: true,
    task: { id: e.task.id, prompt: e.task.prompt },
    context,
    text: tok.decode(context, { specials: true }),
    action: tok.decode(sampled),
    reply: {
      status: !turn.action.terminated ? 'not sent' : obs.status === 'running' ? 'running' : 'done',
      text,
      detail,
      reward: ep.reward,
      said,
    },
    stderr,
    ms: performance.now() - t0,
  };
}

/** Task `i` of the file, as an episode gets it. */
function taskAt(c: EnvProgramConfig, i: number): EnvTask {
  return { ...c.tasks.records[i], data: c.tasks.records[i].data };
}
