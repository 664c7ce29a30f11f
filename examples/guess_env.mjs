/**
 * The `guess` environment (worker/episodes/guess.ts) as a JSON-lines program for the companion,
 * in plain Node: the same environment as examples/guess_env.py, reply for reply, to show that the
 * protocol does not care which language an environment is written in.
 *
 * Guess a secret number in 1..63 from higher/lower feedback:
 *
 *     <bos>1-63?  32<eos> <  16<eos> >  24<eos> <  20<eos>          (secret 20)
 *
 * It speaks the protocol documented in companion/protocol.ts ("Environment sessions"): one JSON
 * request per line on stdin, one JSON reply per line on stdout, nothing else on stdout
 * (diagnostics go to stderr). Requests come in order: one `reset` (the task and the tokenizer),
 * then `step`s (the model's action), then `close` (no reply: exit). An ES module, Node built-ins
 * only, no dependencies. Run by the companion as `node --jitless guess_env.mjs`: the sandbox caps a
 * program's address space (limits.memoryBytes, 256 MiB by default), and Node's JIT reserves more
 * than that at startup (it dies with "Failed to reserve virtual memory for CodeRange"); without the
 * JIT it starts well inside the cap.
 *
 * Ids, not text, cross the wire, so this program must map between the two exactly as the worker's
 * tokenizer does. The reset request carries the tokenizer's description (the same JSON a
 * checkpoint stores as tokenizer.json: `vocab[id]` is the symbol of `id`, plus the special ids),
 * and this program encodes and decodes with it. No vocabulary is copied here, so it cannot drift
 * from the worker's, and a vocabulary without a symbol this environment needs is refused at reset
 * with a detail naming the symbol.
 *
 * Actions (the action's ids decoded, specials skipped; the request's `text` is the same string):
 * - an integer (ASCII digits only): on the secret, status done with reward 1 and no observation;
 *   otherwise observation `<` (the secret is lower than the guess) or `>` (higher), running.
 * - anything else: observation `?`, running, detail `invalid action`.
 * The worker's rollout ends an episode that runs out of turns and scores it itself.
 *
 * Errors are replies, `{"status":"error","detail":"ValueError: ..."}`, worded as guess_env.py's
 * (Python's exception names and value reprs), so both programs answer the same bytes of detail.
 */
import { createInterface } from 'node:readline';

const GUESS_MAX = 63;
const PROMPT = `1-${GUESS_MAX}?`;
const DIGITS = /^[0-9]+$/;

/** Errors named as Python names them, so that details read as guess_env.py's do. */
class ValueError extends Error {
  name = 'ValueError';
}
class KeyError extends Error {
  name = 'KeyError';
  constructor(key) {
    super(repr(key));
  }
}

/** A JSON value as Python's repr() writes it (`None`, `True`, `'text'`), for error details. */
function repr(value) {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'string') {
    const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
    const escaped = value
      .replaceAll('\\', '\\\\')
      .replaceAll(quote, `\\${quote}`)
      .replaceAll('\n', '\\n')
      .replaceAll('\r', '\\r')
      .replaceAll('\t', '\\t');
    return quote + escaped + quote;
  }
  if (Array.isArray(value)) return `[${value.map(repr).join(', ')}]`;
  if (typeof value === 'object')
    return `{${Object.entries(value)
      .map(([k, v]) => `${repr(k)}: ${repr(v)}`)
      .join(', ')}}`;
  return String(value);
}

/** `object[key]`, or a KeyError as Python's `object[key]` raises. */
function need(object, key) {
  if (!Object.hasOwn(object, key)) throw new KeyError(key);
  return object[key];
}

/** A char tokenizer from its description: one id per symbol, specials excluded from text. */
class Tokenizer {
  constructor(desc) {
    this.vocab = need(desc, 'vocab');
    const specials = need(desc, 'specials');
    this.specials = new Set([need(specials, 'pad'), need(specials, 'bos'), need(specials, 'eos')]);
    this.bos = need(specials, 'bos');
    this.idOf = new Map();
    this.vocab.forEach((symbol, id) => {
      if (!this.specials.has(id)) this.idOf.set(symbol, id);
    });
  }

  encode(text) {
    const chars = [...text]; // code points, as Python iterates a string
    const missing = chars.filter((ch) => !this.idOf.has(ch));
    if (missing.length > 0)
      throw new ValueError(`the tokenizer has no symbol ${repr(missing[0])} (needed for ${repr(text)})`);
    return chars.map((ch) => this.idOf.get(ch));
  }

  decode(ids) {
    for (const i of ids) {
      if (!(Number.isInteger(i) && i >= 0 && i < this.vocab.length))
        throw new ValueError(`id ${repr(i)} is not in the vocabulary (0..${this.vocab.length - 1})`);
    }
    return ids
      .filter((i) => !this.specials.has(i))
      .map((i) => this.vocab[i])
      .join('');
  }
}

class Guess {
  constructor(task, tokenizer) {
    const secret = need(task, 'data').secret;
    if (!(Number.isInteger(secret) && secret >= 1 && secret <= GUESS_MAX))
      throw new ValueError(
        `task ${need(task, 'id')}: data.secret = ${repr(secret)}; expected an integer in 1..${GUESS_MAX}`,
      );
    this.secret = secret;
    this.tok = tokenizer;
    // Encoded once: a vocabulary without `<`, `>` or `?` fails here, at reset.
    this.feedback = Object.fromEntries([...'<>?'].map((s) => [s, tokenizer.encode(s)]));
    this.done = false;
  }

  reset() {
    return { context: [this.tok.bos, ...this.tok.encode(PROMPT)] };
  }

  step(action) {
    if (this.done) return { status: 'error', detail: 'step after the episode ended' };
    const text = this.tok.decode(need(action, 'ids'));
    if (!DIGITS.test(text)) return { observation: this.feedback['?'], status: 'running', detail: 'invalid action' };
    const guess = Number(text);
    if (guess === this.secret) {
      this.done = true;
      return { observation: [], status: 'done', reward: 1, detail: `${text}: correct` };
    }
    const lower = this.secret < guess;
    return {
      observation: this.feedback[lower ? '<' : '>'],
      status: 'running',
      detail: `${text}: the secret is ${lower ? 'lower' : 'higher'}`,
    };
  }
}

async function main() {
  let env = null;
  // One request per line; a last line without `\n` still counts, and the loop ends at EOF (the companion is gone).
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    const request = JSON.parse(line); // not JSON: a crash (to stderr), as in guess_env.py
    const op = request.op;
    if (op === 'close') break;
    let reply;
    try {
      if (op === 'reset') {
        env = new Guess(need(request, 'task'), new Tokenizer(need(request, 'tokenizer')));
        reply = env.reset();
      } else if (op === 'step' && env !== null) {
        reply = env.step(need(request, 'action'));
      } else {
        reply = { status: 'error', detail: `unexpected request ${repr(op)} (reset first, then step)` };
      }
    } catch (e) {
      // Reported to the rollout as the episode's error, never a reward.
      reply = { status: 'error', detail: `${e.name}: ${e.message}` };
    }
    process.stdout.write(JSON.stringify(reply) + '\n');
  }
  // At `close`, stdin may still be open: leave without waiting for it (stdout to a pipe is written synchronously).
  process.exit(0);
}

await main();
