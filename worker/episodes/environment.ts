/**
 * What an environment is to the episode rollout: `reset(task)` gives the first model context,
 * `step(action)` answers one model action with the ids to append (or a whole new context), a
 * status and optionally a reward; recoverable environments also snapshot and restore their state.
 *
 * Not the rollout (rollout.ts owns turns, budgets, timeouts and the journal) and not a tokenizer:
 * an environment speaks ids, and the tool environments decode them with `toolTokenizer()`.
 * Reference: dew `Environment`, `RecoverableEnvironment`, `Observation` (docs/rl-core.md "Data
 * model", "Journal and traces"). Deviation: dew's observation always carries the exact next
 * context; here an environment returns the ids it appends after the action (the common case, and
 * what keeps a turn's stored delta small), or `context` when it rewrites the context (compaction).
 */

import type { CharTokenizer } from '../data/tokenizer';
import type { CaseResult, InfrastructureFailure } from '../rl/types';

/**
 * Thrown by an environment whose host is gone (a companion that stopped answering): not one
 * episode's failure but the collection's, which stops without committing the round under way, as a
 * closed tab does, so that a continue re-runs that round from the journal with a host that answers.
 */
export class EnvironmentUnavailable extends Error {
  override readonly name = 'EnvironmentUnavailable';
}

/** A value or a promise of it: built-in environments answer at once, others (a companion process) later. */
type MaybePromise<T> = T | Promise<T>;

/** How an environment says the episode goes on: `running`, it ended (`done`), or it failed (`error`: an infrastructure failure, never a reward 0). */
type EnvStatus = 'running' | 'done' | 'error';

/** An environment's answer to one action. */
export interface EnvStep {
  /** Ids appended to the context after the action (its EOS included); empty when the episode ended. Ignored when `context` is given. */
  observation: ArrayLike<number>;
  /** The whole next model context instead of an append (the environment compacted or rewrote it). */
  context?: ArrayLike<number>;
  status: EnvStatus;
  /** The episode's reward, when the environment scores it itself (at `done`); otherwise the verifier's. */
  reward?: number;
  /** What happened, in words (`calc(47+35) = 82`, `invalid action`); stored with the turn. */
  detail?: string;
  /** With status `error`: which infrastructure failure it was (default `env_error`). */
  failure?: InfrastructureFailure;
  /** A code environment's per-case verdicts and outputs, stored with the turn (the views show them). */
  cases?: readonly CaseResult[];
}

/** One model action as the environment sees it: the sampled ids, EOS excluded, and its text. */
export interface EnvAction {
  ids: ArrayLike<number>;
  /** `tokenizer.decode(ids)`. */
  text: string;
  /** Whether the action ended on EOS (false: it ran out of its token budget). */
  terminated: boolean;
}

export interface Environment {
  /** The first model context (BOS and prompt ids). Called once, before any `step`. */
  reset(): MaybePromise<ArrayLike<number>>;
  step(action: EnvAction): MaybePromise<EnvStep>;
  /**
   * Recoverable environments: an opaque, JSON-safe snapshot of everything needed to go on after the
   * last step (journaled with it); undefined when it has none to give (a program that sends no state).
   */
  getState?(): string | undefined;
  /** Restores a snapshot taken by `getState` (on a fresh instance, after `reset`), without replaying any step. */
  setState?(state: string): MaybePromise<void>;
  /** Releases resources; called once when the episode ends, fails or is cancelled. */
  close?(): MaybePromise<void>;
  /**
   * An environment that is a program (a companion session): what it wrote to stderr since the last
   * call (its end), taken once; undefined when it wrote nothing. The rollout keeps it with the turn.
   */
  takeStderr?(): string | undefined;
}

/**
 * What replaces the transcript's newlines in a group record's completion (one line per episode).
 * The tool vocabulary (calc, guess) has neither a newline nor `⏎`, so their completions split back
 * into turns on it; a code episode's programs have newlines of their own.
 */
export const TURN_SEPARATOR = ' ⏎ ';

/** How much of an episode's stderr the rollout keeps (its end), characters: about the companion's 4 KiB a reply. */
export const EPISODE_STDERR_CHARS = 4096;

/** `kept` followed by `more`, cut to its last EPISODE_STDERR_CHARS characters. */
export function appendStderr(kept: string, more: string | undefined): string {
  if (!more) return kept;
  const all = kept + more;
  return all.length <= EPISODE_STDERR_CHARS ? all : all.slice(all.length - EPISODE_STDERR_CHARS);
}

/**
 * The snapshot calc and guess take: their task's id, the steps taken, the integers recorded so far
 * (under `key`: calc's `results`, guess's `guesses`) and whether the episode is done. `readTurnState`
 * checks one and names the bad field.
 */
type TurnState<K extends string> = { task: string; turns: number; done: boolean } & Record<K, number[]>;

export function writeTurnState<K extends string>(
  key: K,
  s: { task: string; turns: number; values: readonly number[]; done: boolean },
): string {
  return JSON.stringify({ task: s.task, turns: s.turns, [key]: [...s.values], done: s.done });
}

export function readTurnState<K extends string>(
  env: string,
  key: K,
  state: string,
  taskId: string,
): { turns: number; values: number[]; done: boolean } {
  const s = JSON.parse(state) as Partial<TurnState<K>>;
  const values = s[key] as unknown;
  if (s.task !== taskId)
    throw new Error(
      `${env} setState: the snapshot is of task ${JSON.stringify(s.task)}, this environment's is ${taskId}`,
    );
  if (!Number.isInteger(s.turns) || s.turns! < 0)
    throw new Error(`${env} setState: turns = ${JSON.stringify(s.turns)}; expected a non-negative integer`);
  if (!Array.isArray(values) || !values.every((r) => Number.isInteger(r)))
    throw new Error(`${env} setState: ${key} = ${JSON.stringify(values)}; expected a list of integers`);
  if (typeof s.done !== 'boolean')
    throw new Error(`${env} setState: done = ${JSON.stringify(s.done)}; expected a boolean`);
  return { turns: s.turns!, values: [...(values as number[])], done: s.done };
}

/** A task of an environment: an id and its payload (what the verifier and the views read). */
export interface EnvTask {
  id: string;
  /** The prompt in words, for the views (`47+35+19=`). */
  prompt: string;
  /** The expected answer, for the views and the verifier (`101`). */
  answer: string;
  data: Readonly<Record<string, unknown>>;
}

/** Makes one environment for one episode of a task. */
export type EnvironmentFactory = (task: EnvTask) => Environment;

/**
 * Scores a finished (completed or truncated) episode; used when the environment gave no reward.
 * `transcript`: each turn's action text (EOS excluded) followed by its observation text, turns
 * joined by a newline (`calc(47+35)=82\ncalc(82+19)=101\n\\boxed{101}`).
 */
type Verifier = (task: EnvTask, transcript: string) => number;

/**
 * An environment kind as the presets name it (`calc`, `guess`): how to draw its tasks, make its
 * environments and score its episodes. `demonstrate` gives an expert's actions (texts, EOS
 * excluded) for a task: the SFT data of its base checkpoint.
 */
export interface EnvironmentKind {
  name: string;
  /** A line for the UI. */
  title: string;
  /** Training tasks, a seeded stream: the n-th call returns the same tasks for the same seed. */
  trainTasks(seed: number): { take(n: number): EnvTask[]; readonly position: number; skip(n: number): void };
  /** Held-out tasks, disjoint from the training ones. */
  heldOut(n: number): EnvTask[];
  create: EnvironmentFactory;
  /** Reward of an episode the environment did not score itself. */
  verify: Verifier;
  /** Turn limit of its episodes. */
  maxTurns: number;
  /** Sampled ids per action, EOS included. */
  maxActionTokens: number;
  demonstrate(task: EnvTask): string[];
  /** The tokenizer its environments encode with (default `toolTokenizer()`): its base checkpoint's. */
  tokenizer?: () => CharTokenizer;
  /**
   * What one step grades when its steps are graded outside the worker and take long enough to
   * report ('programs': code, run in the companion); a run reports them as the `grading` phase.
   * Absent: its steps answer at once.
   */
  gradedUnit?: string;
  /**
   * Deadline of one reset or step of its environments, ms, when the rollout is given none; absent:
   * the rollout's 5000. A companion program's is above the companion's wall (companion-env.ts).
   */
  stepTimeoutMs?: number;
  /**
   * Its environments open at once, at most (a companion's session places): a collection of more
   * episodes runs in waves of whole groups (rollout.ts). Absent: no bound.
   */
  maxOpen?: number;
}

/** A kind's training task stream over `draw` (one seeded draw per task): `take`, `position` (tasks drawn) and `skip`. */
export function taskStream(draw: () => EnvTask): ReturnType<EnvironmentKind['trainTasks']> {
  let position = 0;
  const next = (): EnvTask => {
    position++;
    return draw();
  };
  return {
    take: (n) => Array.from({ length: n }, next),
    get position() {
      return position;
    },
    skip(n) {
      if (!Number.isInteger(n) || n < 0) throw new Error(`skip: n = ${n}; expected a non-negative integer`);
      for (let k = 0; k < n; k++) next();
    },
  };
}
