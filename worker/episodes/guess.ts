/**
 * The `guess` environment: guess a secret number in 1..63 from feedback over several turns.
 *
 *   <bos>1-63?  32<eos> <  16<eos> >  24<eos> <  20<eos>          (secret 20)
 *
 * Actions (the text of the sampled ids, EOS excluded):
 * - an integer (digits only): on the secret, status done with reward 1 and no observation;
 *   otherwise observation `<` (the secret is lower than the guess) or `>` (higher), running.
 * - anything else: observation `?`, running, detail `invalid action`.
 * The rollout ends an episode that runs out of turns (`maxTurns` 7: binary search needs at most
 * 6); `verify` gives it 0 unless its last action was the secret.
 *
 * The task space is tiny: 63 tasks, one per secret. There is no held-out split: `heldOut(n)` is
 * the secrets 1..min(n, 63) in order and the training stream draws from the same 63, so
 * "held-out accuracy" here is the success rate over every secret (of the policy, not of
 * generalisation to unseen tasks). All draws come from `mulberry32`.
 */
import { mulberry32 } from '../../kernels/common/random';
import { toolTokenizer } from '../data/tokenizer';
import type { EnvAction, EnvStep, EnvTask, Environment, EnvironmentKind } from './environment';
import { readTurnState, taskStream, writeTurnState } from './environment';

/** The payload of a guess task (`EnvTask.data`). */
type GuessTaskData = {
  secret: number;
};

/** Secrets are 1..GUESS_MAX. */
export const GUESS_MAX = 63;
export const GUESS_PROMPT = `1-${GUESS_MAX}?`;

const tok = toolTokenizer();

export function guessTask(secret: number): EnvTask {
  if (!Number.isInteger(secret) || secret < 1 || secret > GUESS_MAX)
    throw new Error(`guessTask: secret = ${secret}; expected an integer in 1..${GUESS_MAX}`);
  const data: GuessTaskData = { secret };
  return { id: `guess/${secret}`, prompt: GUESS_PROMPT, answer: String(secret), data };
}

/** The secret of a guess task; throws when the payload is not one. */
function guessSecret(task: EnvTask): number {
  const s = (task.data as Partial<GuessTaskData>).secret;
  if (typeof s !== 'number' || !Number.isInteger(s))
    throw new Error(`guess task ${task.id}: data.secret = ${JSON.stringify(s)}; expected an integer`);
  return s;
}

/** Training tasks from `seed`: secrets uniform in 1..63. Same seed, same tasks; `skip` draws and discards. */
export function guessTrainTasks(seed: number): {
  take(n: number): EnvTask[];
  readonly position: number;
  skip(n: number): void;
} {
  const rand = mulberry32(seed);
  return taskStream(() => guessTask(1 + Math.floor(rand() * GUESS_MAX)));
}

/** The secrets 1..min(n, 63) in order: `guessHeldOut(63)` is every task there is. */
export function guessHeldOut(n: number): EnvTask[] {
  if (!Number.isInteger(n) || n < 0) throw new Error(`heldOut: n = ${n}; expected a non-negative integer`);
  return Array.from({ length: Math.min(n, GUESS_MAX) }, (_, i) => guessTask(i + 1));
}

class GuessEnvironment implements Environment {
  private readonly secret: number;
  private turns = 0;
  private guesses: number[] = [];
  private done = false;

  constructor(readonly task: EnvTask) {
    this.secret = guessSecret(task);
  }

  reset(): Int32Array {
    return Int32Array.from([tok.bos, ...tok.encode(GUESS_PROMPT)]);
  }

  step(action: EnvAction): EnvStep {
    if (this.done)
      throw new Error(
        `guess: step after the episode ended (task ${this.task.id}, turn ${this.turns + 1}); the rollout stops at status done`,
      );
    this.turns++;
    const text = action.text;
    if (!/^\d+$/.test(text)) return { observation: tok.encode('?'), status: 'running', detail: 'invalid action' };
    const g = Number(text);
    this.guesses.push(g);
    if (g === this.secret) {
      this.done = true;
      return { observation: new Int32Array(0), status: 'done', reward: 1, detail: `${text}: correct` };
    }
    const lower = this.secret < g;
    return {
      observation: tok.encode(lower ? '<' : '>'),
      status: 'running',
      detail: `${text}: the secret is ${lower ? 'lower' : 'higher'}`,
    };
  }

  getState(): string {
    return writeTurnState('guesses', { task: this.task.id, turns: this.turns, values: this.guesses, done: this.done });
  }

  setState(state: string): void {
    const s = readTurnState('guess', 'guesses', state, this.task.id);
    this.turns = s.turns;
    this.guesses = s.values;
    this.done = s.done;
  }
}

/** Special-token names a transcript may show (`<eos>`): removed before reading it, since `<` and `>` are feedback here. */
const SPECIAL_NAMES = /<(?:bos|eos|pad)>/g;

/**
 * Reward of an episode the environment did not score (it ran out of turns): 1 only when the
 * transcript (the episode's decoded turns, action then observation, as rollout.ts joins them with
 * newlines; special names and trailing whitespace ignored) ends with an action that
 * is the secret; an episode whose last action was answered (`<`, `>`, `?`) ends on feedback and gets 0.
 */
function verifyGuess(task: EnvTask, transcript: string): number {
  const m = /(\d+)$/.exec(transcript.replace(SPECIAL_NAMES, '').trimEnd());
  return m !== null && Number(m[1]) === guessSecret(task) ? 1 : 0;
}

/** The expert: binary search, guessing mid = floor((lo + hi) / 2) of the interval left, until the secret. */
function demonstrateGuess(task: EnvTask): string[] {
  const secret = guessSecret(task);
  const out: string[] = [];
  let lo = 1;
  let hi = GUESS_MAX;
  for (;;) {
    const mid = Math.floor((lo + hi) / 2);
    out.push(String(mid));
    if (mid === secret) return out;
    if (secret < mid) hi = mid - 1;
    else lo = mid + 1;
  }
}

export const GUESS: EnvironmentKind = {
  name: 'guess',
  title: 'Guess a number in 1..63 from higher/lower feedback',
  trainTasks: guessTrainTasks,
  heldOut: guessHeldOut,
  create: (task) => new GuessEnvironment(task),
  verify: verifyGuess,
  maxTurns: 7,
  // Two digits + EOS.
  maxActionTokens: 3,
  demonstrate: demonstrateGuess,
};
