/**
 * A run's reward as a standard-library Python file (reward_twin.py, written into a bundle as
 * reward.py) that verl calls as `custom_reward_function` and that gives the scores Dewpoint gave:
 * which twin a run takes (`twinRewardOf`), the person's JavaScript pattern translated to a Python
 * one that matches the same text (`pythonPattern`), the file with the run's reward set
 * (`rewardPy`), and the TypeScript score each twin must reproduce (`dewpointScore`).
 *
 * Not the rewards themselves (worker/rewards/) and not a general regex translator: a pattern
 * that uses what Python's `re` reads differently and this translation does not rewrite is refused
 * with the construct named, so a bundle never carries a reward that scores differently there.
 */
import type { RunOptions } from '../contract/options';
import { calcTranscriptReward } from '../episodes/calc';
import { TURN_SEPARATOR } from '../episodes/environment';
import { presetOf } from '../presets/table';
import { compileRewardPattern, exactReward, regexReward } from '../rewards/dataset-reward';
import { mathReward } from '../rewards/math-reward';
import source from './reward_twin.py?raw';

/** The twins reward_twin.py has; `pattern` is Python's (translated), `jsPattern` the run's own. */
export type TwinReward =
  | { kind: 'math' }
  | { kind: 'exact' }
  | { kind: 'regex'; pattern: string; jsPattern: string; groups: 0 | 1 }
  | { kind: 'calc' };

type Refusal = { ok: false; reason: string };

/** JavaScript's `\s` (WhiteSpace and LineTerminator, ECMA-262), as class members in a Python pattern. */
const JS_WS = '\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

/**
 * The Python `re` pattern that finds the same matches as `new RegExp(js, 'g')` (no flags, not
 * unicode mode) and captures the same group: `(?a)` makes `\d \w \b` ASCII as JavaScript's are;
 * `\s`, `\S` become JavaScript's whitespace class, `.` excludes JavaScript's four line terminators,
 * `$` is `\Z` (Python's `$` also matches before a final newline), `(?<name>` is `(?P<name>`,
 * `[]` and `[^]` become never and anything, a class holding `\S` an alternative. Refused, naming
 * the construct: lookbehind (Python takes fixed widths only), backreferences (JavaScript matches
 * an unset group's as empty, Python fails), `{,n}` (a literal in JavaScript, a quantifier in Python 3.11), and
 * escapes of letters JavaScript reads as the letter itself (`\a` is `a` there, a bell in Python).
 */
export function pythonPattern(js: string): { ok: true; pattern: string } | Refusal {
  const refuse = (what: string, why: string): Refusal => ({
    ok: false,
    reason: `dataset.reward.pattern uses ${what}, which Python's re reads differently (${why}); rewrite it without`,
  });
  let out = '(?a)';
  let cls: { negated: boolean; body: string; nonSpace: boolean } | null = null;
  for (let i = 0; i < js.length; i++) {
    const c = js[i];
    const emit = (text: string) => (cls ? (cls.body += text) : (out += text));
    if (c === '\\') {
      const e = js[++i];
      if (e === undefined) return refuse('a trailing backslash', 'an incomplete escape');
      if (e === 's') emit(cls ? JS_WS : `[${JS_WS}]`);
      else if (e === 'S') {
        if (cls) cls.nonSpace = true;
        else out += `[^${JS_WS}]`;
      } else if (e === 'B' && cls) {
        return refuse('\\B inside a class', "JavaScript reads it as 'B'");
      } else if ('dDwWbBfnrtv0'.includes(e)) {
        if (e === '0' && /[0-9]/.test(js[i + 1] ?? '')) return refuse('\\0 followed by a digit', 'an octal escape');
        emit(`\\${e}`);
      } else if (/[1-9]/.test(e) || (e === 'k' && !cls)) {
        return refuse(`the backreference \\${e}`, "JavaScript matches an unset group's backreference as empty");
      } else if (e === 'x' && /^[0-9A-Fa-f]{2}$/.test(js.slice(i + 1, i + 3))) {
        emit(`\\x${js.slice(i + 1, i + 3)}`);
        i += 2;
      } else if (e === 'u' && /^[0-9A-Fa-f]{4}$/.test(js.slice(i + 1, i + 5))) {
        emit(`\\u${js.slice(i + 1, i + 5)}`);
        i += 4;
      } else if (e === 'c' && /[A-Za-z]/.test(js[i + 1] ?? '')) {
        emit(`\\x${(js.charCodeAt(++i) % 32).toString(16).padStart(2, '0')}`);
      } else if (/[A-Za-z0-9]/.test(e)) {
        return refuse(`the escape \\${e}`, `JavaScript reads it as '${e}'`);
      } else emit(`\\${e}`);
    } else if (cls) {
      if (c !== ']') {
        cls.body += c === '[' ? '\\[' : c;
        continue;
      }
      // `\S` in a class: Python cannot negate a class inside one, so the class becomes an alternative.
      const { negated, body, nonSpace } = cls;
      cls = null;
      if (!nonSpace) out += `[${negated ? '^' : ''}${body}]`;
      else if (negated) out += body ? `(?![${body}])[${JS_WS}]` : `[${JS_WS}]`;
      else out += body ? `(?:[${body}]|[^${JS_WS}])` : `[^${JS_WS}]`;
    } else if (c === '[') {
      if (js.startsWith('[]', i)) {
        out += '(?!)';
        i += 1;
      } else if (js.startsWith('[^]', i)) {
        out += '(?s:.)';
        i += 2;
      } else {
        cls = { negated: js[i + 1] === '^', body: '', nonSpace: false };
        if (cls.negated) i++;
      }
    } else if (c === '.') out += '[^\\n\\r\\u2028\\u2029]';
    else if (c === '$') out += '\\Z';
    else if (c === '{' && js[i + 1] === ',') return refuse('{,', 'a literal in JavaScript, a quantifier in Python');
    else if (c === '(' && js.startsWith('(?<', i)) {
      if (js[i + 3] === '=' || js[i + 3] === '!')
        return refuse('a lookbehind', 'Python takes fixed-width lookbehinds only');
      const name = /^\(\?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(js.slice(i));
      if (!name) return refuse('a group name outside [A-Za-z_][A-Za-z0-9_]*', 'Python names are identifiers');
      out += `(?P<${name[1]}>`;
      i += name[0].length - 1;
    } else out += c;
  }
  if (cls) return refuse('an unclosed [', 'an incomplete class');
  return { ok: true, pattern: out };
}

/** The twin of the run's reward, or why the bundle has none (the reward the run used is named). */
export function twinRewardOf(options: RunOptions): { ok: true; reward: TwinReward } | Refusal {
  const dataset = 'dataset' in options ? options.dataset : undefined;
  if (dataset) {
    const r = dataset.reward;
    if (r.kind === 'math' || r.kind === 'exact') return { ok: true, reward: { kind: r.kind } };
    if (r.kind === 'regex') {
      const js = compileRewardPattern(r.pattern ?? '');
      if (!js.ok) return { ok: false, reason: `dataset.reward.pattern ${js.reason}` };
      const py = pythonPattern(r.pattern ?? '');
      if (!py.ok) return py;
      return {
        ok: true,
        reward: { kind: 'regex', pattern: py.pattern, jsPattern: r.pattern!, groups: js.pattern.groups },
      };
    }
    return {
      ok: false,
      reason: "dataset.reward.kind 'code' grades programs in the companion's sandbox: reward.py has no twin of it",
    };
  }
  const preset = presetOf(options);
  if (preset.episodes === 'calc') return { ok: true, reward: { kind: 'calc' } };
  if (preset.export.reward === 'math' && !preset.episodes) return { ok: true, reward: { kind: 'math' } };
  return {
    ok: false,
    reason:
      preset.export.reward === 'code'
        ? `${options.preset} grades programs in the companion's sandbox: reward.py has no twin of it`
        : `${options.preset}'s reward is its environment's (${preset.episodes}): reward.py has twins of math, exact, regex and calc only`,
  };
}

/** The line of reward_twin.py that the exporter replaces with the run's reward. */
const REWARD_LINE = 'REWARD = {"kind": "math"}\n';

/** reward_twin.py with REWARD set to `reward` (JSON read by `json.loads`, so any pattern text is safe). */
export function rewardPy(reward: TwinReward): string {
  if (!source.includes(REWARD_LINE)) throw new Error(`reward_twin.py lost its line ${JSON.stringify(REWARD_LINE)}`);
  const value =
    reward.kind === 'regex' ? { kind: 'regex', pattern: reward.pattern, groups: reward.groups } : { kind: reward.kind };
  return source.replace(REWARD_LINE, `REWARD = json.loads(${JSON.stringify(JSON.stringify(value))})\n`);
}

/**
 * Dewpoint's own score of `completion` against `truth` under the twin's reward (what reward.py must
 * give). calc reads an episode's record (turns joined by TURN_SEPARATOR) and how its last action
 * ended (a rollout row's `finish_reason`), as the environment scored it (calc.ts `calcTranscriptReward`).
 */
export function dewpointScore(
  reward: TwinReward,
  completion: string,
  truth: string,
  finishReason: 'stop' | 'length' = 'stop',
): number {
  if (reward.kind === 'math') return mathReward(completion, truth).score;
  if (reward.kind === 'exact') return exactReward(completion, truth).score;
  if (reward.kind === 'calc') return calcTranscriptReward(completion.split(TURN_SEPARATOR), truth, finishReason);
  const p = compileRewardPattern(reward.jsPattern);
  if (!p.ok) throw new Error(`dewpointScore: the pattern ${reward.jsPattern} ${p.reason}`);
  return regexReward(completion, truth, p.pattern).score;
}
