/**
 * A character-level tokenizer over a fixed, documented vocabulary: one id per character, plus
 * three special ids (PAD = 0, BOS = 1, EOS = 2) that no text encodes to.
 *
 * Not a byte-level or BPE tokenizer, and not lossy: `encode` refuses (throws on) a character
 * outside the vocabulary instead of mapping it to an unknown id. The serialisable description
 * (`{ type: 'char', vocab, specials }`) is what a checkpoint stores beside its weights
 * (tokenizer.json); `tokenizerFromDescription` rebuilds and validates it.
 *
 * The arithmetic vocabulary (`ARITH_VOCAB`, 50 entries) is ordered so that its first 25 entries
 * are exactly the 25-symbol vocabulary of docs/calibration.md "Task" (specials, digits, `+ - * =`, the
 * characters of `\boxed{}`): a `bare` tokenizer is a prefix of the `words` one and ids agree.
 */

/** The names special ids decode to when `decode(ids, { specials: true })`. */
const PAD_TOKEN = '<pad>';
const BOS_TOKEN = '<bos>';
const EOS_TOKEN = '<eos>';

/** Fixed special ids of the arithmetic vocabulary. */
export const PAD_ID = 0;
export const BOS_ID = 1;
export const EOS_ID = 2;

/**
 * id → symbol. 0–2 specials; 3–12 digits; 13–16 `+ - * =`; 17–24 `\ b o x e d { }`; then 25–28
 * space `? , .`; 29–49 the other 21 lowercase letters. `-` is both the operator and the minus
 * sign of negative answers.
 */
export const ARITH_VOCAB: readonly string[] = Object.freeze([
  PAD_TOKEN,
  BOS_TOKEN,
  EOS_TOKEN,
  ...'0123456789',
  ...'+-*=',
  ...'\\boxed{}',
  ...' ?,.',
  ...'acfghijklmnpqrstuvwyz',
]);

/** Size of the `bare` vocabulary (the 25 symbols of docs/calibration.md "Task"): the first 25 entries of `ARITH_VOCAB`. */
export const BARE_VOCAB_SIZE = 25;

/**
 * The vocabulary of the tool-use environments (worker/episodes: `calc`, `guess`): the 25 `bare`
 * symbols (so ids of digits, `+ - * =` and `\\boxed{}` agree with the arithmetic base) plus the
 * characters of `calc(...)` calls and of the environments' answers: `c a l ( ) < > ?`.
 */
const TOOL_VOCAB: readonly string[] = Object.freeze([...ARITH_VOCAB.slice(0, BARE_VOCAB_SIZE), ...'cal()<>?']);

/**
 * The vocabulary of the `code` environment (worker/episodes/code.ts): specials, digits and
 * `+ - * =` as in arithmetic (ids 0–16), then the prompts' ` , :`, the programs' `( )`, the code
 * fence's backtick and newline, and the 26 lowercase letters.
 */
const CODE_VOCAB: readonly string[] = Object.freeze([
  ...ARITH_VOCAB.slice(0, 17),
  ...' ,:',
  ...'()`\n',
  ...'abcdefghijklmnopqrstuvwxyz',
]);

/** What a checkpoint stores as its tokenizer (tokenizer.json). */
export interface TokenizerDescription {
  type: 'char';
  /** id → symbol; a non-special entry is exactly one character, special entries are names such as `<pad>`. */
  vocab: string[];
  /** Ids of the special tokens, each in 0..vocab.length − 1 and distinct. */
  specials: { pad: number; bos: number; eos: number };
}

export interface DecodeOptions {
  /** Default false: special ids are skipped. True: they appear as their vocabulary names (`<eos>`). */
  specials?: boolean;
}

/**
 * What the training and sampling pipeline needs of any tokenizer: the char tokenizer here, or a
 * Hugging Face BPE/SentencePiece tokenizer (worker/model/hf-tokenizer.ts). `encode` never adds BOS or
 * EOS (the pipeline adds them, `encodePromptCompletion`). A `CharTokenizer` is a `TextTokenizer`
 * that can also `describe()` itself; code that never calls `describe` can take a `TextTokenizer`.
 */
export interface TextTokenizer {
  /** id → symbol (a character, a special's name, or a BPE piece such as `▁Hello`), length V. */
  readonly vocab: readonly string[];
  /** V, the vocabulary size (the model's `vocab_size`). */
  readonly size: number;
  readonly pad: number;
  readonly bos: number;
  readonly eos: number;
  /** The ids of `text`, without BOS or EOS. */
  encode(text: string): Int32Array;
  /** The text of `ids`; throws on an id outside 0..V − 1. */
  decode(ids: ArrayLike<number>, options?: DecodeOptions): string;
  /** True when `id` is a special token (PAD, BOS, EOS, and for HF tokenizers every special added token). */
  isSpecial(id: number): boolean;
}

export interface CharTokenizer extends TextTokenizer {
  /** One id per character; throws on a character outside the vocabulary, naming it and its index. */
  encode(text: string): Int32Array;
  /** True when `id` is PAD, BOS or EOS. */
  isSpecial(id: number): boolean;
  /** A fresh, JSON-serialisable description (`tokenizerFromDescription` inverts it). */
  describe(): TokenizerDescription;
}

const FIELD = 'tokenizer description';

/**
 * Every problem with `desc` (an imported tokenizer.json, say), each naming the field at fault;
 * empty when it is valid.
 */
export function validateTokenizerDescription(desc: unknown): string[] {
  if (desc === null || typeof desc !== 'object')
    return [`${FIELD}: expected an object, got ${desc === null ? 'null' : typeof desc}`];
  const d = desc as Record<string, unknown>;
  const problems: string[] = [];
  if (d.type !== 'char') problems.push(`${FIELD}: type = ${JSON.stringify(d.type)}; expected "char"`);
  const vocab = d.vocab;
  const V = Array.isArray(vocab) ? vocab.length : 0;
  if (!Array.isArray(vocab))
    problems.push(`${FIELD}: vocab is ${vocab === undefined ? 'missing' : typeof vocab}; expected an array of strings`);
  else if (V === 0) problems.push(`${FIELD}: vocab is empty; expected at least the three specials`);
  const specials = d.specials;
  const ids: number[] = [];
  if (specials === null || typeof specials !== 'object') {
    problems.push(`${FIELD}: specials is ${specials === null ? 'null' : typeof specials}; expected { pad, bos, eos }`);
  } else {
    const s = specials as Record<string, unknown>;
    for (const name of ['pad', 'bos', 'eos']) {
      const id = s[name];
      if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || (V > 0 && id >= V)) {
        problems.push(
          `${FIELD}: specials.${name} = ${JSON.stringify(id)}; expected an integer id in 0..${Math.max(V - 1, 0)}`,
        );
      } else if (ids.includes(id)) {
        problems.push(`${FIELD}: specials.${name} = ${id} is also another special's id; expected three distinct ids`);
      } else ids.push(id);
    }
  }
  if (Array.isArray(vocab)) {
    const seen = new Map<string, number>();
    vocab.forEach((entry: unknown, id) => {
      if (typeof entry !== 'string') {
        problems.push(`${FIELD}: vocab[${id}] = ${JSON.stringify(entry)}; expected a string`);
        return;
      }
      if (ids.includes(id)) {
        if (entry.length === 0)
          problems.push(`${FIELD}: vocab[${id}] (a special) is empty; expected a name such as "<eos>"`);
        return;
      }
      if ([...entry].length !== 1) {
        problems.push(
          `${FIELD}: vocab[${id}] = ${JSON.stringify(entry)}; a non-special entry must be exactly one character`,
        );
        return;
      }
      const first = seen.get(entry);
      if (first !== undefined)
        problems.push(
          `${FIELD}: vocab[${id}] = ${JSON.stringify(entry)} repeats vocab[${first}]; entries must be unique`,
        );
      else seen.set(entry, id);
    });
  }
  return problems;
}

/** The tokenizer a description defines; throws with every problem (each naming its field) when invalid. */
export function tokenizerFromDescription(desc: TokenizerDescription): CharTokenizer {
  const problems = validateTokenizerDescription(desc);
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return build(desc.vocab, desc.specials);
}

/**
 * The arithmetic tokenizer. `format` (default `'words'`): `'words'` is the full 50-entry
 * `ARITH_VOCAB` (covers both prompt formats); `'bare'` is its 25-entry prefix, enough for
 * `47+35=` prompts only (docs/calibration.md "Task").
 */
export function arithTokenizer(format: 'words' | 'bare' = 'words'): CharTokenizer {
  const vocab = format === 'bare' ? ARITH_VOCAB.slice(0, BARE_VOCAB_SIZE) : ARITH_VOCAB;
  return build(vocab, { pad: PAD_ID, bos: BOS_ID, eos: EOS_ID });
}

/** The tokenizer of the tool-use environments (`TOOL_VOCAB`, 33 ids, specials as in arithmetic). */
export function toolTokenizer(): CharTokenizer {
  return build(TOOL_VOCAB, { pad: PAD_ID, bos: BOS_ID, eos: EOS_ID });
}

/** The tokenizer of the `code` environment (`CODE_VOCAB`, 50 ids, specials as in arithmetic). */
export function codeTokenizer(): CharTokenizer {
  return build(CODE_VOCAB, { pad: PAD_ID, bos: BOS_ID, eos: EOS_ID });
}

function describeChar(ch: string): string {
  const code = ch.codePointAt(0)!;
  return `${JSON.stringify(ch)} (U+${code.toString(16).toUpperCase().padStart(4, '0')})`;
}

function build(vocab: readonly string[], specials: { pad: number; bos: number; eos: number }): CharTokenizer {
  const V = vocab.length;
  const { pad, bos, eos } = specials;
  const isSpecial = (id: number) => id === pad || id === bos || id === eos;
  const idOf = new Map<string, number>();
  vocab.forEach((s, id) => {
    if (!isSpecial(id)) idOf.set(s, id);
  });
  const frozen = Object.freeze([...vocab]);
  return {
    vocab: frozen,
    size: V,
    pad,
    bos,
    eos,
    isSpecial,
    encode(text: string): Int32Array {
      const out = new Int32Array(text.length);
      let n = 0;
      let index = 0; // UTF-16 index of `ch` in `text`
      for (const ch of text) {
        const id = idOf.get(ch);
        if (id === undefined) {
          throw new Error(
            `encode: character ${describeChar(ch)} at index ${index} of ${JSON.stringify(text.length > 60 ? text.slice(0, 60) + '…' : text)} is not in the vocabulary of ${V} symbols`,
          );
        }
        out[n++] = id;
        index += ch.length;
      }
      return n === out.length ? out : out.slice(0, n);
    },
    decode(ids: ArrayLike<number>, options: DecodeOptions = {}): string {
      let s = '';
      for (let k = 0; k < ids.length; k++) {
        const id = ids[k];
        if (!Number.isInteger(id) || id < 0 || id >= V)
          throw new Error(`decode: ids[${k}] = ${id}; expected an integer id in 0..${V - 1}`);
        if (isSpecial(id) && !options.specials) continue;
        s += frozen[id];
      }
      return s;
    },
    describe(): TokenizerDescription {
      return { type: 'char', vocab: [...frozen], specials: { pad, bos, eos } };
    },
  };
}

/** A prompt/completion pair as ids: `promptIds` starts with BOS, `completionIds` ends with EOS. */
export interface EncodedExample {
  promptIds: Int32Array;
  completionIds: Int32Array;
}

/** BOS + encode(prompt), encode(completion) + EOS: the SFT and RL boundary between given and generated ids. */
export function encodePromptCompletion(tok: TextTokenizer, prompt: string, completion: string): EncodedExample {
  const p = tok.encode(prompt);
  const c = tok.encode(completion);
  const promptIds = new Int32Array(p.length + 1);
  promptIds[0] = tok.bos;
  promptIds.set(p, 1);
  const completionIds = new Int32Array(c.length + 1);
  completionIds.set(c, 0);
  completionIds[c.length] = tok.eos;
  return { promptIds, completionIds };
}
