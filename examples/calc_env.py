"""A calculator-tool environment: a JSON-lines program for `dewpoint train --preset grpo-env`.

Each task is a sum of three numbers. The model may call a calculator on two numbers at a time
and ends the episode by boxing its answer:

    <bos>47+35+19=  calc(47+35)<eos> =82  calc(82+19)<eos> =101  \\boxed{101}<eos>

This is worker/episodes/calc.ts written as a program (it gives the same episodes, turn for turn),
so the shipped calc-base, which grpo-env starts from, already speaks its actions.

The protocol (companion/protocol.ts "Environment sessions"; README "Write your own environment"):
one JSON request per line on stdin, one JSON reply per line on stdout, nothing else on stdout
(diagnostics go to stderr). Requests, in order: one `reset`, then `step`s, then `close`.

    {"op":"reset","task":{"id":...,"prompt":"47+35+19=","answer":"101","data":{}},"tokenizer":{...}}
      -> {"context":[1, ...]}                                  the first model context, BOS first
    {"op":"step","action":{"ids":[...],"text":"calc(47+35)","terminated":true}}
      -> {"observation":[...],"status":"running","detail":"calc(47+35) = 82"}
      -> {"observation":[],"status":"done","reward":1}         the episode ended, with its reward
      -> {"status":"error","detail":"..."}                     an infrastructure failure, never a reward 0
    {"op":"close"}                                              no reply: exit

Optional state: a reply may carry "state", a string that is everything needed to go on from that
point (this program sends its turn count and whether the episode ended). The trainer journals it
with the turn; after a closed tab it resets a fresh session on the same task and sends
{"op":"set_state","state":"..."} (-> {"status":"running"}), so no committed turn runs twice. A
program without state is resumed by replaying its journaled actions instead.

Ids, not text, cross the wire: the reset request carries the policy's tokenizer (`vocab[id]` is
the symbol of `id`, plus the special ids), so this program encodes and decodes exactly as the
trainer does without a copy of the vocabulary. Plain Python 3, standard library only; the
companion runs it as `python3 -I calc_env.py` in a fresh job directory per episode.

Actions (the action's text, EOS excluded):
- `calc(X+Y)`, `calc(X-Y)`, `calc(X*Y)`, X and Y non-negative integers of at most 6 digits:
  observation `=R`, running. Any other text starting with `calc(`: observation `=?`, running.
- `\\boxed{N}`: done, reward 1 when N is exactly the task's answer, else 0.
- anything else: observation `?`, running, detail `invalid action`.
The trainer ends an episode that runs out of turns and scores it itself (its last \\boxed{}).
"""
import json
import re
import sys

MAX_OPERAND_DIGITS = 6
CALL = re.compile(r"^(\d+)([+\-*])(\d+)$", re.ASCII)
BOXED = re.compile(r"^\\boxed\{(.*)\}$", re.S)


class Tokenizer:
    """A char tokenizer from its description: one id per symbol, specials excluded from text."""

    def __init__(self, desc):
        self.vocab = desc["vocab"]
        specials = desc["specials"]
        self.specials = {specials["pad"], specials["bos"], specials["eos"]}
        self.bos = specials["bos"]
        self.id_of = {s: i for i, s in enumerate(self.vocab) if i not in self.specials}

    def encode(self, text):
        missing = [ch for ch in text if ch not in self.id_of]
        if missing:
            raise ValueError(f"the tokenizer has no symbol {missing[0]!r} (needed for {text!r})")
        return [self.id_of[ch] for ch in text]


def calculate(expr):
    """The result of `X+Y`, `X-Y` or `X*Y`, or why the call is malformed."""
    m = CALL.match(expr)
    if not m:
        return None, "expected two non-negative integers joined by +, - or *"
    xs, op, ys = m.groups()
    if len(xs) > MAX_OPERAND_DIGITS or len(ys) > MAX_OPERAND_DIGITS:
        return None, f"operands may have at most {MAX_OPERAND_DIGITS} digits"
    x, y = int(xs), int(ys)
    return (x + y if op == "+" else x - y if op == "-" else x * y), None


class Calc:
    def __init__(self, task, tokenizer):
        self.task = task
        self.answer = str(task["answer"])
        self.tok = tokenizer
        self.turns = 0
        self.done = False

    def state(self):
        return json.dumps({"turns": self.turns, "done": self.done})

    def set_state(self, state):
        s = json.loads(state)
        self.turns, self.done = int(s["turns"]), bool(s["done"])

    def reset(self):
        return {"context": [self.tok.bos] + self.tok.encode(self.task["prompt"])}

    def step(self, action):
        if self.done:
            return {"status": "error", "detail": "step after the episode ended"}
        self.turns += 1
        text = action["text"]
        boxed = BOXED.match(text)
        if boxed:
            self.done = True
            correct = boxed.group(1) == self.answer
            detail = f"{text}: correct" if correct else f"{text}: incorrect (answer {self.answer})"
            return {"observation": [], "status": "done", "reward": 1 if correct else 0, "detail": detail}
        if text.startswith("calc("):
            result, why = calculate(text[5:-1]) if text.endswith(")") else (None, "unclosed: expected calc(X+Y)")
            if result is None:
                return {"observation": self.tok.encode("=?"), "status": "running", "detail": f"{text}: malformed, {why}"}
            return {"observation": self.tok.encode(f"={result}"), "status": "running", "detail": f"{text} = {result}"}
        return {"observation": self.tok.encode("?"), "status": "running", "detail": "invalid action"}


def main():
    env = None
    while True:
        line = sys.stdin.readline()
        if not line:
            return  # EOF: the companion is gone
        request = json.loads(line)
        op = request.get("op")
        if op == "close":
            return
        try:
            if op == "reset":
                env = Calc(request["task"], Tokenizer(request["tokenizer"]))
                reply = {**env.reset(), "state": env.state()}
            elif op == "step" and env is not None:
                reply = env.step(request["action"])
                if reply["status"] != "error":
                    reply["state"] = env.state()
            elif op == "set_state" and env is not None:
                env.set_state(request["state"])
                reply = {"status": "running"}
            else:
                reply = {"status": "error", "detail": f"unexpected request {op!r} (reset first, then step)"}
        except Exception as e:  # the episode's error, never a reward
            reply = {"status": "error", "detail": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
