"""The `guess` environment (worker/episodes/guess.ts) as a JSON-lines program for the companion.

Guess a secret number in 1..63 from higher/lower feedback:

    <bos>1-63?  32<eos> <  16<eos> >  24<eos> <  20<eos>          (secret 20)

It speaks the protocol documented in companion/protocol.ts ("Environment sessions"): one JSON
request per line on stdin, one JSON reply per line on stdout, nothing else on stdout. Plain
Python 3, standard library only. Run by the companion as `python3 -I -S guess_env.py`.

Ids, not text, cross the wire, so this program must map between the two exactly as the worker's
tokenizer does. The simplest honest design: the worker sends its tokenizer's description (the
same JSON a checkpoint stores as tokenizer.json: `vocab[id]` is the symbol of `id`, plus the
special ids) in the reset request, and this program encodes and decodes with it. No vocabulary is
copied here, so it cannot drift from the worker's, and a vocabulary without a symbol this
environment needs is refused at reset with a detail naming the symbol.

Actions (the action's ids decoded, specials skipped; the request's `text` is the same string):
- an integer (ASCII digits only): on the secret, status done with reward 1 and no observation;
  otherwise observation `<` (the secret is lower than the guess) or `>` (higher), running.
- anything else: observation `?`, running, detail `invalid action`.
The worker's rollout ends an episode that runs out of turns and scores it itself.
"""
import json
import re
import sys

GUESS_MAX = 63
PROMPT = f"1-{GUESS_MAX}?"
DIGITS = re.compile(r"[0-9]+")


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

    def decode(self, ids):
        for i in ids:
            if not (isinstance(i, int) and 0 <= i < len(self.vocab)):
                raise ValueError(f"id {i!r} is not in the vocabulary (0..{len(self.vocab) - 1})")
        return "".join(self.vocab[i] for i in ids if i not in self.specials)


class Guess:
    def __init__(self, task, tokenizer):
        secret = task["data"].get("secret")
        if not (isinstance(secret, int) and 1 <= secret <= GUESS_MAX):
            raise ValueError(f"task {task['id']}: data.secret = {secret!r}; expected an integer in 1..{GUESS_MAX}")
        self.secret = secret
        self.tok = tokenizer
        # Encoded once: a vocabulary without `<`, `>` or `?` fails here, at reset.
        self.feedback = {s: tokenizer.encode(s) for s in "<>?"}
        self.done = False

    def reset(self):
        return {"context": [self.tok.bos] + self.tok.encode(PROMPT)}

    def step(self, action):
        if self.done:
            return {"status": "error", "detail": "step after the episode ended"}
        text = self.tok.decode(action["ids"])
        if not DIGITS.fullmatch(text):
            return {"observation": self.feedback["?"], "status": "running", "detail": "invalid action"}
        guess = int(text)
        if guess == self.secret:
            self.done = True
            return {"observation": [], "status": "done", "reward": 1, "detail": f"{text}: correct"}
        lower = self.secret < guess
        return {
            "observation": self.feedback["<" if lower else ">"],
            "status": "running",
            "detail": f"{text}: the secret is {'lower' if lower else 'higher'}",
        }


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
                env = Guess(request["task"], Tokenizer(request["tokenizer"]))
                reply = env.reset()
            elif op == "step" and env is not None:
                reply = env.step(request["action"])
            else:
                reply = {"status": "error", "detail": f"unexpected request {op!r} (reset first, then step)"}
        except Exception as e:  # reported to the rollout as the episode's error, never a reward
            reply = {"status": "error", "detail": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
