"""Dewpoint's built-in rewards in standard-library Python, for verl's and SkyRL's reward hooks.

A bundle (`dewpoint export RUN --to verl|skyrl`) ships this file as reward.py with the run's reward
set in REWARD below. verl calls `compute_score(data_source, solution_str, ground_truth, extra_info)`
from `custom_reward_function.path` (volcengine/verl @ b178a3c verl/trainer/ppo/reward.py
`get_custom_reward_fn`; the signature of its own `default_compute_score(data_source, solution_str,
ground_truth, extra_info=None, ...)` in verl/utils/reward_score/__init__.py); the score is
the one Dewpoint gave, bit for bit, because each function here is a line-by-line twin of its
TypeScript original:

- "math": MathReward (worker/rewards/math-reward.ts, worker/rewards/rational.ts): the last top-level
  closed box, exact rationals (fractions.Fraction, never floats).
- "exact": the trimmed completion equals the trimmed ground truth (worker/rewards/dataset-reward.ts).
- "regex": the last match of the person's pattern, its one group or the whole match, trimmed, equals
  the trimmed ground truth. The pattern is the JavaScript one translated by the exporter
  (worker/interop/reward-twin.ts `pythonPattern`), which refuses what it cannot translate exactly.
- "calc": the calculator environment's reward read back from the episode's record (worker/episodes/calc.ts
  `calcTranscriptReward`): a last action ended by EOS that is a box, as the environment's step scored
  it (the anchored box `^\\boxed\\{(.*)\\}$`); any other episode, the last box of the transcript
  (`verifyCalc`). Exactly the answer, either way.

JavaScript and Python differ where it matters here, so the twins never use Python's defaults:
whitespace is JavaScript's (`\\s` and String.prototype.trim), `\\d` and `\\w` are ASCII, and `$` is
the end of the text (Python's `$` also matches before a final newline).

`python3 reward.py check FILE.jsonl` scores each line's {solution_str, ground_truth, finish_reason} and compares it
with the line's `score` (Dewpoint's): it prints a JSON report and exits 1 on any difference.
"""

import json
import re
import sys
from fractions import Fraction

# Set by the exporter: {"kind": "math" | "exact" | "regex" | "calc", "pattern": Python pattern, "groups": 0 | 1}.
REWARD = {"kind": "math"}

# JavaScript's WhiteSpace and LineTerminator code points: what `\s` matches and trim() strips (ECMA-262).
JS_WS = "\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_TRIM = re.compile("^[%s]+|[%s]+\\Z" % (JS_WS, JS_WS))


def js_trim(text):
    """String.prototype.trim."""
    return _TRIM.sub("", text)


# ---- rational.ts ----
MAX_DIGITS = 1000
SIGN = "[+\\-\u2212]"
S = "[%s]" % JS_WS
DECIMAL = "(?:%s%s*)?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)" % (SIGN, S)
DECIMAL_RE = re.compile("^(?:(%s)%s*)?([0-9]*)(?:\\.([0-9]*))?\\Z" % (SIGN, S))
SLASH_RE = re.compile("^(%s)%s*/%s*(%s)\\Z" % (DECIMAL, S, S, DECIMAL))
LATEX_BRACED_RE = re.compile(
    "^(%s)?%s*\\\\[dt]?frac%s*\\{%s*(%s)%s*\\}%s*\\{%s*(%s)%s*\\}\\Z" % (SIGN, S, S, S, DECIMAL, S, S, S, DECIMAL, S)
)
LATEX_SHORT_RE = re.compile("^(%s)?%s*\\\\[dt]?frac%s*([0-9])%s*([0-9])\\Z" % (SIGN, S, S, S))


def parse_decimal(text):
    m = DECIMAL_RE.match(js_trim(text))
    if not m:
        return None
    sign, whole, frac = m.group(1), m.group(2), m.group(3) or ""
    if len(whole) + len(frac) == 0 or len(whole) + len(frac) > MAX_DIGITS:
        return None
    magnitude = int((whole or "0") + frac)
    return Fraction(magnitude if sign is None or sign == "+" else -magnitude, 10 ** len(frac))


def divide(a, b):
    return None if b == 0 else a / b


def parse_rational(text):
    t = js_trim(text)
    if len(t) == 0:
        return None
    decimal = parse_decimal(t)
    if decimal is not None:
        return decimal
    m = SLASH_RE.match(t)
    if m:
        a, b = parse_decimal(m.group(1)), parse_decimal(m.group(2))
        return divide(a, b) if a is not None and b is not None else None
    m = LATEX_BRACED_RE.match(t) or LATEX_SHORT_RE.match(t)
    if m:
        a, b = parse_decimal(m.group(2)), parse_decimal(m.group(3))
        if a is None or b is None:
            return None
        r = divide(a, b)
        return -r if r is not None and m.group(1) is not None and m.group(1) != "+" else r
    return None


# ---- math-reward.ts ----
BOX_OPEN = "\\\\boxed%s*\\{" % S
WHOLE_BOX = re.compile("^" + BOX_OPEN)
def closing_brace(text, start):
    depth = 1
    i = start
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 1
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def last_boxed(text):
    """('none', None), ('unclosed', None) or ('closed', content) for the last top-level box."""
    found = ("none", None)
    open_re = re.compile(BOX_OPEN)
    pos = 0
    while True:
        m = open_re.search(text, pos)
        if m is None:
            return found
        start = m.end()
        end = closing_brace(text, start)
        if end < 0:
            return ("unclosed", None)
        found = ("closed", text[start:end])
        pos = end + 1


def unwrap_boxes(content):
    t = js_trim(content)
    while True:
        m = WHOLE_BOX.match(t)
        if m is None:
            return t
        end = closing_brace(t, m.end())
        if end != len(t) - 1:
            return t
        t = js_trim(t[m.end() : end])


def math_reward(completion, reference):
    """MathReward with requireBoxed (its default, the only setting a run uses): no closed box, no answer."""
    status, content = last_boxed(completion)
    if status != "closed":
        return 0
    extracted = unwrap_boxes(content)
    value = parse_rational(extracted)
    ref = js_trim(reference)
    ref_value = parse_rational(ref)
    if ref_value is not None:
        return 1 if value is not None and value == ref_value else 0
    if ref == "":
        return 0
    return 1 if extracted == ref else 0


# ---- dataset-reward.ts ----
def exact_reward(completion, truth):
    return 1 if js_trim(completion) == js_trim(truth) else 0


def regex_reward(completion, truth, pattern, groups):
    last = None
    for m in re.finditer(pattern, completion):
        last = m
    if last is None:
        return 0
    got = (last.group(1) or "") if groups == 1 else last.group(0)
    return 1 if js_trim(got) == js_trim(truth) else 0


# ---- data/answer.ts extractBoxed, episodes/calc.ts verifyCalc ----
def extract_boxed(text):
    start = text.rfind("\\boxed{")
    if start < 0:
        return None
    depth = 1
    begin = start + len("\\boxed{")
    for i in range(begin, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[begin:i]
    return None


# What joins an episode's turns in its record (worker/episodes/environment.ts TURN_SEPARATOR), and the
# calculator's box action (worker/episodes/calc.ts BOXED, /^\\boxed\{(.*)\}$/: JavaScript's `.` stops
# at its four line terminators, and `$` is the end of the text).
TURN_SEPARATOR = " \u23ce "
CALC_BOXED = re.compile("\\\\boxed\\{([^\n\r\u2028\u2029]*)\\}\\Z")


def calc_reward(transcript, answer, finish_reason="stop"):
    """calc.ts calcTranscriptReward: a last action ended by EOS that is a box was scored by the
    environment's step (the anchored box: `\\boxed{1}}` boxes `1}`); any other episode (out of turns,
    or its last action cut at the length limit) by verifyCalc, the last box of the whole transcript."""
    turns = transcript.split(TURN_SEPARATOR)
    if finish_reason == "stop":
        m = CALC_BOXED.match(turns[-1])
        if m is not None:
            return 1 if m.group(1) == answer else 0
    return 1 if extract_boxed("\n".join(turns)) == answer else 0


def score(solution_str, ground_truth, reward=None, finish_reason="stop"):
    """The run's score; `finish_reason` ("stop" or "length": how the response's last action ended) is read by calc only."""
    r = REWARD if reward is None else reward
    kind = r["kind"]
    if kind == "math":
        return math_reward(solution_str, ground_truth)
    if kind == "exact":
        return exact_reward(solution_str, ground_truth)
    if kind == "regex":
        return regex_reward(solution_str, ground_truth, r["pattern"], r["groups"])
    if kind == "calc":
        return calc_reward(solution_str, ground_truth, finish_reason)
    raise ValueError("REWARD['kind'] = %r; expected one of math, exact, regex, calc" % (kind,))


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """verl's custom_reward_function signature (the data source does not change the reward: REWARD does).
    calc reads `extra_info["finish_reason"]` where the caller sets it ("length": the response was cut at
    its limit); without it the response is taken as ended by the model ("stop")."""
    finish = extra_info.get("finish_reason", "stop") if isinstance(extra_info, dict) else "stop"
    return float(score(solution_str, ground_truth, finish_reason=finish))


def check(path):
    """Score every line of `path` and compare with its Dewpoint score; the report as a dict."""
    rows = equal = 0
    differ = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            got = score(row["solution_str"], row["ground_truth"], finish_reason=row.get("finish_reason", "stop"))
            rows += 1
            if got == row["score"]:
                equal += 1
            elif len(differ) < 10:
                differ.append({"line": n, "python": got, "dewpoint": row["score"], "solution_str": row["solution_str"][:200]})
    return {"reward": REWARD["kind"], "rows": rows, "equal": equal, "differ": differ}


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "check":
        sys.stderr.write("usage: python3 reward.py check FILE.jsonl (lines of {solution_str, ground_truth, score, finish_reason?})\n")
        sys.exit(2)
    report = check(sys.argv[2])
    sys.stdout.write(json.dumps(report) + "\n")
    sys.exit(0 if report["equal"] == report["rows"] else 1)
