/**
 * Test-only: a real companion serving environment sessions (the process runner, one worker, a
 * token and an allowed origin), the worker's client for it, examples/guess_env.py,
 * examples/guess_env.mjs and examples/calc_env.py as programs, and the pieces of a seeded guess
 * policy, a seeded calc policy and a logged environment the companion-environment tests share.
 */
import { chmod, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProcessRunner } from '../../companion/process-runner';
import type { RunningCompanion } from '../../companion/server';
import { startCompanion } from '../../companion/server';
import { fetchWithOrigin } from '../env-program';
import { mulberry32 } from '../../kernels/common/random';
import { CompanionClient } from '../../worker/companion-client/client';
import { toolTokenizer } from '../../worker/data/tokenizer';
import type { EnvStep, EnvironmentKind } from '../../worker/episodes/environment';
import type { EpisodeSampler } from '../../worker/episodes/rollout';
import type { Generated } from '../../worker/rollout/generate';

export const TOKEN = 'companion-env-test';
const ORIGIN = 'http://localhost:5173';
const tok = toolTokenizer();

/** A companion with at most `max` environment sessions, its client, and the sessions' job root (delete it after). */
export async function serveEnvCompanion(
  max = 64,
): Promise<{ companion: RunningCompanion; client: CompanionClient; root: string }> {
  const root = await mkdtemp(join(tmpdir(), 'dewpoint-companion-env-'));
  // Programs may run as a uid of their own (the runner's jail, as root): they must pass through.
  await chmod(root, 0o711);
  const inner = new ProcessRunner();
  const companion = await startCompanion(
    {
      runner: { name: 'process', run: inner.run.bind(inner) },
      token: TOKEN,
      origins: [ORIGIN],
      workers: 1,
      queueLimit: 1,
      maxBodyBytes: 1 << 20,
      networkIsolation: false,
      sessions: { launcher: new ProcessRunner({ tmpRoot: root }), max },
    },
    0,
  );
  return { companion, client: new CompanionClient(companion.url, TOKEN, fetchWithOrigin(ORIGIN)), root };
}

/** examples/guess_env.py as a companion program. */
export async function guessEnvProgram() {
  return {
    files: { 'guess_env.py': await readFile(new URL('../../examples/guess_env.py', import.meta.url), 'utf8') },
    argv: ['python3', '-I', '-S', 'guess_env.py'],
    limits: { wallSeconds: 10 },
  };
}

/** examples/guess_env.mjs (the same environment in plain Node) as a companion program. */
export async function guessEnvNodeProgram() {
  return {
    files: { 'guess_env.mjs': await readFile(new URL('../../examples/guess_env.mjs', import.meta.url), 'utf8') },
    argv: ['node', '--jitless', 'guess_env.mjs'],
    limits: { wallSeconds: 10 },
  };
}

/** examples/calc_env.py (worker/episodes/calc.ts as a program) as a companion program, as `defaultArgv` starts a .py. */
export async function calcEnvProgram() {
  return {
    files: { 'calc_env.py': await readFile(new URL('../../examples/calc_env.py', import.meta.url), 'utf8') },
    argv: ['python3', '-I', 'calc_env.py'],
    limits: { wallSeconds: 10 },
  };
}

/** The range 1..63 narrowed by the `<` / `>` answers in a guess episode's context so far. */
export function guessBounds(context: ArrayLike<number>): { lo: number; hi: number } {
  let lo = 1;
  let hi = 63;
  for (const [, g, f] of tok
    .decode(context)
    .slice('1-63?'.length)
    .matchAll(/(\d+)([<>])/g)) {
    if (f === '<') hi = Math.min(hi, Number(g) - 1);
    else lo = Math.max(lo, Number(g) + 1);
  }
  return { lo, hi };
}

/** A sampled action with ids `ids` after `prompt` (EOS last: a stop), its log-probs different by position. */
export function sampledAction(prompt: ArrayLike<number>, ids: readonly number[]): Generated {
  return {
    promptIds: Int32Array.from(prompt),
    sampledIds: Int32Array.from(ids),
    behaviorLogProbs: Float64Array.from(ids, (_, k) => -0.1 * (k + 1)),
    rawLogProbs: Float64Array.from(ids, (_, k) => -0.2 * (k + 1)),
    finishReason: ids.at(-1) === tok.eos ? 'stop' : 'length',
  };
}

/**
 * A seeded stand-in for the policy, deterministic in each row's seed (so both runs draw the same
 * actions): mostly binary search on the feedback so far, else a random number, an invalid action,
 * or three digits without EOS (max_response_length).
 */
export const guesser: EpisodeSampler = async (prompts, o) =>
  prompts.map((p, r) => {
    const rand = mulberry32(o.rowSeeds![r]);
    const { lo, hi } = guessBounds(p);
    const u = rand();
    const text =
      u < 0.55
        ? String(Math.floor((lo + hi) / 2))
        : u < 0.8
          ? String(Math.floor(rand() * 100))
          : u < 0.93
            ? ['?', 'a', '1c', '<'][Math.floor(rand() * 4)]
            : '123';
    return sampledAction(p, [...tok.encode(text), ...(text.length < o.maxNew ? [tok.eos] : [])].slice(0, o.maxNew));
  });

/** The calc actions that are not the expert's, by the path of the environment they take. */
export const CALC_DETOURS = {
  /** Malformed calls (`=?`); the 7-digit operands fit only an action of 16 ids or more. */
  malformed: ['calc(12+)', 'calc(3+4', 'calc()', 'calc(+5)', 'calc(1+2+3)', 'calc(1234567+1)', 'calc(1+9999999)'],
  /** Valid calls off the expert's path: a negative result, a product, leading zeros, 6-digit operands. */
  valid: ['calc(5-9)', 'calc(12*34)', 'calc(007+01)', 'calc(0-999999)', 'calc(999999*99)'],
  /** Not a call and not a box (`?`); '' is an action of EOS alone. */
  invalid: ['bold', 'calc', '?', '', 'a+b', '=5', 'calc)1+2(', '\\boxed{1'],
} as const;

/**
 * A seeded stand-in for the calc policy, deterministic in each row's seed (so both runs draw the
 * same actions). From the context so far (`<bos>a+b+c=` then the turns) it mostly does the
 * expert's next step (calc(a+b), then calc(s+c) with s the partial sum, then \boxed{a+b+c}), else
 * a wrong box, a malformed call, another valid call, an invalid action, or a call without EOS that
 * fills the action's ids (max_response_length). Only actions that fit the kind's `maxActionTokens`
 * (EOS included) are drawn.
 */
export const calculator: EpisodeSampler = async (prompts, o) =>
  prompts.map((p, r) => {
    const rand = mulberry32(o.rowSeeds![r]);
    const text = tok.decode(p);
    const m = /^(\d+)\+(\d+)\+(\d+)=/.exec(text);
    if (!m) throw new Error(`calculator: the context ${JSON.stringify(text)} is not a calc episode's`);
    const [a, b, c] = m.slice(1, 4).map(Number);
    const pick = (options: readonly string[]) => {
      const fit = options.filter((t) => t.length < o.maxNew);
      return fit[Math.floor(rand() * fit.length)];
    };
    const u = rand();
    if (u >= 0.93) {
      // No EOS: the action fills its ids and the rollout truncates the episode.
      return sampledAction(p, Array.from(tok.encode(`calc(${'9'.repeat(o.maxNew)}`).subarray(0, o.maxNew)));
    }
    const action =
      u < 0.5
        ? !text.includes(`calc(${a}+${b})=${a + b}`)
          ? `calc(${a}+${b})`
          : !text.includes(`calc(${a + b}+${c})=${a + b + c}`)
            ? `calc(${a + b}+${c})`
            : `\\boxed{${a + b + c}}`
        : u < 0.57
          ? `\\boxed{${a + b + c + 1 + Math.floor(rand() * 20)}}`
          : u < 0.69
            ? pick(CALC_DETOURS.malformed)
            : u < 0.81
              ? pick(CALC_DETOURS.valid)
              : pick(CALC_DETOURS.invalid);
    if (action.length >= o.maxNew) throw new Error(`calculator: ${action} does not fit ${o.maxNew} ids with EOS`);
    return sampledAction(p, [...tok.encode(action), tok.eos]);
  });

/** One step's answer as a logged environment records it (ids as plain arrays). */
export interface Turn {
  observation: number[];
  context?: number[];
  status: string;
  reward?: number;
  detail?: string;
}

/** What a logged environment answered: its reset context and its steps. */
export interface EnvLog {
  reset?: number[];
  steps: Turn[];
}

/** `kind` whose environments log what they answer, in the order the rollout creates them. */
export function logged(kind: EnvironmentKind, log: EnvLog[]): EnvironmentKind {
  return {
    ...kind,
    create(task) {
      const env = kind.create(task);
      const entry: EnvLog = { steps: [] };
      log.push(entry);
      return {
        reset: async () => {
          const ids = await env.reset();
          entry.reset = Array.from(ids);
          return ids;
        },
        step: async (action) => {
          const s: EnvStep = await env.step(action);
          entry.steps.push({
            observation: Array.from(s.observation),
            ...(s.context ? { context: Array.from(s.context) } : {}),
            status: s.status,
            ...(s.reward !== undefined ? { reward: s.reward } : {}),
            ...(s.detail !== undefined ? { detail: s.detail } : {}),
          });
          return s;
        },
        close: () => env.close?.(),
      };
    },
  };
}
