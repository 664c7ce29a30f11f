/**
 * The `code` environment: write a Python program that computes a described function of its
 * input; the program runs in the companion's sandbox on three test cases (stdin → stdout).
 *
 *   <bos>add 3, mul 5:```⏎x=int(input())⏎x=x+3⏎x=x*5⏎print(x)⏎```<eos>
 *
 * A task is one or two steps applied to x in order: `add N` / `sub N` (N in 1..9), `mul N` (2..9),
 * `sq` (square). The expert writes one assignment per step (`x=x+3`, `x=x*5`, `x=x*x`), then
 * `print(x)`: a line per step, so a model that learned the steps can compose unseen pairs (a
 * single expression with the fewest parentheses, `(x+3)*5`, left the small model at ~5% on
 * held-out pairs after 330 SFT steps, measured). The task's answer is that expression. The episode is one turn: the action is the completion; the
 * environment grades its code block (companion/code-block.ts: the last ```python block, else the
 * last untagged one) with the code reward on x = −3, 2 and 11, and ends the episode with the
 * fraction of cases that pass as its reward and each case's verdict, stdout and stderr on the turn.
 * A grader that cannot grade (no companion, unreachable, 5xx) ends it as an infrastructure
 * failure (`sandbox_error`, masked from training), never a reward 0. A completion that runs out of
 * its token budget never reaches the grader: `verify` scores it 0.
 *
 * 27 single steps and 729 pairs: 756 tasks, a task held out when a fixed hash of its steps is
 * 0 mod 10 (as arith and calc split theirs). All draws come from `mulberry32`.
 */
import { mulberry32 } from '../../kernels/common/random';
import { fmix32 } from '../data/arith';
import { codeTokenizer } from '../data/tokenizer';
import type { CodeGrader } from '../rewards/code-grader';
import { GraderUnavailable } from '../rewards/code-grader';
import type { EnvAction, EnvStep, EnvTask, Environment, EnvironmentKind } from './environment';
import { taskStream } from './environment';

export type CodeStep = { op: 'add' | 'sub' | 'mul'; n: number } | { op: 'sq' };

/** The payload of a code task (`EnvTask.data`): its steps and its cases (the grader's ground truth). */
type CodeTaskData = {
  steps: CodeStep[];
  cases: { stdin: string; stdout: string }[];
};

/** The inputs every task is graded on. */
export const CODE_INPUTS: readonly number[] = [-3, 2, 11];
const CODE_HELD_OUT_MODULUS = 10;
/** Why a code episode failed when no grader is connected: what the person must do. */
export const NO_COMPANION =
  'code rewards run in the companion: start one with `npx dewpoint companion` and open the link it prints (or paste it in System)';

const tok = codeTokenizer();

/** Every single step, in a fixed order: add 1..9, sub 1..9, mul 2..9, sq. */
export const CODE_STEPS: readonly CodeStep[] = Object.freeze([
  ...Array.from({ length: 9 }, (_, i) => ({ op: 'add' as const, n: i + 1 })),
  ...Array.from({ length: 9 }, (_, i) => ({ op: 'sub' as const, n: i + 1 })),
  ...Array.from({ length: 8 }, (_, i) => ({ op: 'mul' as const, n: i + 2 })),
  { op: 'sq' as const },
]);

const stepText = (s: CodeStep) => (s.op === 'sq' ? 'sq' : `${s.op} ${s.n}`);

/** The prompt: the steps joined by `, `, then `:` (`add 3, mul 5:`). */
function codePrompt(steps: readonly CodeStep[]): string {
  return `${steps.map(stepText).join(', ')}:`;
}

/** The expression of the steps applied to x, with the fewest parentheses: `(x+3)*5`. */
export function codeExpression(steps: readonly CodeStep[]): string {
  let expr = 'x';
  let sum = false; // whether expr's top level is a + or −
  for (const s of steps) {
    if (s.op === 'add' || s.op === 'sub') {
      expr += `${s.op === 'add' ? '+' : '-'}${s.n}`;
      sum = true;
    } else if (s.op === 'mul') {
      expr = `${sum ? `(${expr})` : expr}*${s.n}`;
      sum = false;
    } else {
      expr = `${expr === 'x' ? expr : `(${expr})`}**2`;
      sum = false;
    }
  }
  return expr;
}

/** f(x) of the steps, exactly (bigint: no rounding at any size). */
export function codeValue(steps: readonly CodeStep[], x: number): bigint {
  let v = BigInt(x);
  for (const s of steps)
    v = s.op === 'add' ? v + BigInt(s.n) : s.op === 'sub' ? v - BigInt(s.n) : s.op === 'mul' ? v * BigInt(s.n) : v * v;
  return v;
}

const stepLine = (s: CodeStep) =>
  s.op === 'sq' ? 'x=x*x' : `x=x${s.op === 'add' ? '+' : s.op === 'sub' ? '-' : '*'}${s.n}`;

/** The expert's completion: a fenced program reading x, applying each step, printing x. */
export function codeSolution(steps: readonly CodeStep[]): string {
  return ['```', 'x=int(input())', ...steps.map(stepLine), 'print(x)', '```'].join('\n');
}

function stepIndex(s: CodeStep): number {
  return CODE_STEPS.findIndex((t) => t.op === s.op && (s.op === 'sq' || (t as { n: number }).n === s.n));
}

/** The fixed hash of a task's steps the split is defined by. Changing it changes the split: don't. */
export function codeHash(steps: readonly CodeStep[]): number {
  return steps.reduce((h, s) => fmix32(h ^ (stepIndex(s) + 1)), fmix32(0xc0de));
}

export function codeTask(steps: readonly CodeStep[]): EnvTask {
  if (steps.length < 1 || steps.length > 2 || steps.some((s) => stepIndex(s) < 0))
    throw new Error(
      `codeTask: steps = ${JSON.stringify(steps)}; expected one or two of ${CODE_STEPS.map(stepText).join(', ')}`,
    );
  const data: CodeTaskData = {
    steps: [...steps],
    cases: CODE_INPUTS.map((x) => ({ stdin: `${x}\n`, stdout: `${codeValue(steps, x)}\n` })),
  };
  return {
    id: `code/${steps.map(stepText).join(',').replace(/ /g, '')}`,
    prompt: codePrompt(steps),
    answer: codeExpression(steps),
    data,
  };
}

/** The test cases of a code task; throws when its payload is not one. */
function codeCases(task: EnvTask): CodeTaskData['cases'] {
  const cases = (task.data as Partial<CodeTaskData>).cases;
  if (!Array.isArray(cases) || cases.length === 0)
    throw new Error(
      `code task ${task.id}: data.cases = ${JSON.stringify(cases)}; expected a non-empty list of {stdin, stdout}`,
    );
  return cases;
}

/** Every task, singles then pairs, in CODE_STEPS order. */
function allTasks(): CodeStep[][] {
  return [...CODE_STEPS.map((s) => [s]), ...CODE_STEPS.flatMap((a) => CODE_STEPS.map((b) => [a, b]))];
}

const isHeldOut = (steps: readonly CodeStep[]) => codeHash(steps) % CODE_HELD_OUT_MODULUS === 0;
let split: { train: CodeStep[][]; heldOut: CodeStep[][] } | null = null;
function theSplit() {
  if (!split) {
    const all = allTasks();
    split = { train: all.filter((s) => !isHeldOut(s)), heldOut: all.filter(isHeldOut) };
  }
  return split;
}

/** Training tasks from `seed`: uniform over the training split. Same seed, same tasks; `skip` draws and discards. */
export function codeTrainTasks(seed: number): {
  take(n: number): EnvTask[];
  readonly position: number;
  skip(n: number): void;
} {
  const rand = mulberry32(seed);
  const { train } = theSplit();
  return taskStream(() => codeTask(train[Math.floor(rand() * train.length)]));
}

/** The first n held-out tasks, in a fixed order (every one of them for n ≥ their count). */
export function codeHeldOut(n: number): EnvTask[] {
  if (!Number.isInteger(n) || n < 0) throw new Error(`heldOut: n = ${n}; expected a non-negative integer`);
  return theSplit().heldOut.slice(0, n).map(codeTask);
}

export class CodeEnvironment implements Environment {
  private done = false;

  constructor(
    readonly task: EnvTask,
    private readonly grader: CodeGrader | null,
  ) {}

  reset(): Int32Array {
    return Int32Array.from([tok.bos, ...tok.encode(this.task.prompt)]);
  }

  async step(action: EnvAction): Promise<EnvStep> {
    if (this.done) throw new Error(`code: step after the episode ended (task ${this.task.id}); an episode is one turn`);
    this.done = true;
    const none = new Int32Array(0);
    if (!this.grader) return { observation: none, status: 'error', failure: 'sandbox_error', detail: NO_COMPANION };
    try {
      const r = await this.grader({ completion: action.text, cases: codeCases(this.task) });
      const passed = r.cases.filter((c) => c.passed).length;
      const detail = r.program === null ? 'no code block' : `${passed} of ${r.cases.length} cases pass`;
      return { observation: none, status: 'done', reward: r.reward, detail, cases: r.cases };
    } catch (e) {
      if (e instanceof GraderUnavailable)
        return { observation: none, status: 'error', failure: 'sandbox_error', detail: e.message };
      throw e;
    }
  }
}

/** A completion the grader never saw (it ran out of its token budget): 0. */
const verifyCode = () => 0;

/** The kind without a grader: every episode fails with NO_COMPANION. `codeKind(grader)` connects one. */
export const CODE: EnvironmentKind = codeKind(null);

export function codeKind(grader: CodeGrader | null): EnvironmentKind {
  return {
    name: 'code',
    title: 'Write a Python program for a described function, graded in the companion',
    trainTasks: codeTrainTasks,
    heldOut: codeHeldOut,
    create: (task) => new CodeEnvironment(task, grader),
    verify: verifyCode,
    maxTurns: 1,
    // The longest solution, ```⏎x=int(input())⏎x=x+9⏎x=x*9⏎print(x)⏎```, is 43 characters; + EOS and slack.
    maxActionTokens: 50,
    demonstrate: (task) => [codeSolution((task.data as CodeTaskData).steps)],
    tokenizer: codeTokenizer,
    gradedUnit: 'programs',
    // A step waits its turn in the grader's queue: a batch queues its 64 programs at once, and
    // batches sampled ahead (a staleness bound) queue theirs behind them. The sandbox's limits bound
    // each run (a program that loops is the grader's TIMEOUT), so the rollout's 5 s, which counted
    // the queue too, ended episodes of a busy grader as errors.
    stepTimeoutMs: 300_000,
  };
}
