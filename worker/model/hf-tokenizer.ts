/**
 * A Hugging Face tokenizer (tokenizer.json + tokenizer_config.json: BPE, SentencePiece-style BPE
 * with byte fallback as in Llama and Mistral, Unigram, WordPiece) behind the pipeline's
 * TextTokenizer interface (worker/data/tokenizer.ts), built with `@huggingface/tokenizers`.
 *
 * - `encode(text)` never adds BOS/EOS (transformers' `add_special_tokens=False`); the pipeline
 *   adds BOS itself (`encodePromptCompletion`). Special tokens written in the text (`</s>`) are
 *   matched as tokens, as in transformers.
 * - `size` is the model's vocab_size, which may exceed the tokenizer's own `tokenCount` (padding
 *   rows of the embedding): ids tokenCount..size − 1 have no token, their `vocab` entry is '' and
 *   `decode` renders them as nothing.
 * - Specials: each from tokenizer_config.json (`bos_token`, `eos_token`, `pad_token`), else
 *   generation_config.json, else config.json (`*_token_id`; the first of a list); PAD falls back
 *   to EOS when none names one (Llama 2 has no pad token), and `specialSources` says so.
 *   `stopIds` collects every EOS id the three files name (Llama 3 lists several).
 * - `isSpecial` is true for PAD, BOS, EOS and every added token marked `special`, and
 *   `decode(ids)` skips exactly those unless `{ specials: true }`.
 * Not a char tokenizer: it has no `describe()` (its description is its tokenizer.json). In model/,
 * beside hf-config.ts, because a checkpoint (checkpoint.ts) reads it back; worker/hf/ (the
 * folders) builds on model/.
 */
import { Tokenizer } from '@huggingface/tokenizers';
import type { DecodeOptions, TextTokenizer } from '../data/tokenizer';
import type { HfProblem } from './hf-errors';
import { HfFolderError } from './hf-errors';

export interface HfTokenizer extends TextTokenizer {
  readonly kind: 'hf';
  /** Ids the tokenizer defines (its highest id + 1, added tokens included); ≤ size. */
  readonly tokenCount: number;
  /** Every id that ends a generation: EOS and the eos_token_id lists of generation_config.json and config.json. */
  readonly stopIds: readonly number[];
  /** The token strings of the specials (`<s>`, `</s>`, and PAD's, which may be EOS's). */
  readonly specialTokens: { readonly pad: string; readonly bos: string; readonly eos: string };
  /** Where each special id came from, e.g. `tokenizer_config.json bos_token`, or `eos (no pad token named)`. */
  readonly specialSources: { readonly pad: string; readonly bos: string; readonly eos: string };
  /** tokenizer_config.json `add_bos_token` (what transformers' encode would do); `encode` here never adds BOS. */
  readonly addsBos: boolean;
  /** The files it was built from, as parsed (a checkpoint writes them back: worker/model/checkpoint.ts). */
  readonly sources: Readonly<HfTokenizerSources>;
}

interface HfTokenizerSources {
  /** tokenizer.json, parsed. */
  tokenizerJson: Record<string, unknown>;
  /** tokenizer_config.json, parsed, when the folder has one. */
  tokenizerConfig?: Record<string, unknown>;
  /** config.json, for `bos_token_id` / `eos_token_id` / `pad_token_id`. */
  config?: Record<string, unknown>;
  /** generation_config.json, for the same ids (it overrides config.json, as in transformers' generate). */
  generationConfig?: Record<string, unknown>;
  /** The model's vocab_size; default: the tokenizer's own tokenCount. A tokenizer larger than it is refused. */
  vocabSize?: number;
}

const TOKENIZER = 'tokenizer.json';
const TOKENIZER_CONFIG = 'tokenizer_config.json';

/** The tokenizer the files define; throws an HfFolderError naming the file and field of every problem. */
export function hfTokenizer(sources: HfTokenizerSources): HfTokenizer {
  const { tokenizerJson, tokenizerConfig = {} } = sources;
  if (tokenizerJson.model === null || typeof tokenizerJson.model !== 'object') {
    throw new HfFolderError({
      file: TOKENIZER,
      field: 'model',
      detail: `got ${JSON.stringify(tokenizerJson.model)}; expected the tokenizer model object (BPE, Unigram, WordPiece)`,
    });
  }
  let tok: Tokenizer;
  try {
    tok = new Tokenizer(tokenizerJson, tokenizerConfig);
  } catch (e) {
    throw new HfFolderError(
      { file: TOKENIZER, field: 'model', detail: `@huggingface/tokenizers cannot build it: ${(e as Error).message}` },
      { cause: e },
    );
  }
  const all = tok.get_vocab(true);
  let tokenCount = 0;
  for (const id of all.values()) tokenCount = Math.max(tokenCount, id + 1);
  const V = sources.vocabSize ?? tokenCount;
  if (tokenCount > V) {
    const model = tokenizerJson.model as { vocab?: unknown };
    const modelVocab = Array.isArray(model.vocab)
      ? model.vocab.length
      : model.vocab && typeof model.vocab === 'object'
        ? Object.keys(model.vocab).length
        : 0;
    const added = Array.isArray(tokenizerJson.added_tokens) ? tokenizerJson.added_tokens.length : 0;
    throw new HfFolderError({
      file: TOKENIZER,
      field: 'model.vocab + added_tokens',
      detail: `the tokenizer has ids up to ${tokenCount - 1} (${modelVocab} entries in model.vocab, ${added} added_tokens): ${tokenCount} ids, but config.json vocab_size is ${V}; expected at most vocab_size ids (the embedding may have padding rows, never fewer rows than tokens)`,
    });
  }

  const problems: HfProblem[] = [];
  const resolve = (name: 'bos' | 'eos' | 'pad'): { id: number; source: string } | null => {
    const key = `${name}_token`;
    const content = tokenContent(tokenizerConfig[key]);
    if (content !== null) {
      const id = tok.token_to_id(content);
      if (id !== undefined) return { id, source: `${TOKENIZER_CONFIG} ${key}` };
      problems.push({
        file: TOKENIZER_CONFIG,
        field: key,
        detail: `${JSON.stringify(content)} is not a token of ${TOKENIZER}; expected one of its tokens`,
      });
      return null;
    }
    for (const [file, json] of [
      ['generation_config.json', sources.generationConfig],
      ['config.json', sources.config],
    ] as const) {
      const ids = idList(json?.[`${key}_id`]);
      if (ids === null) continue;
      const id = ids[0];
      if (!Number.isInteger(id) || id < 0 || id >= tokenCount) {
        problems.push({
          file,
          field: `${key}_id`,
          detail: `got ${JSON.stringify(json?.[`${key}_id`])}; expected a token id in 0..${tokenCount - 1}`,
        });
        return null;
      }
      return { id, source: `${file} ${key}_id` };
    }
    return null;
  };
  const bos = resolve('bos');
  const eos = resolve('eos');
  let pad = resolve('pad');
  for (const [name, found] of [
    ['bos', bos],
    ['eos', eos],
  ] as const) {
    if (found === null && !problems.some((p) => p.field.startsWith(name))) {
      problems.push({
        file: TOKENIZER_CONFIG,
        field: `${name}_token`,
        detail: `absent, as are generation_config.json and config.json ${name}_token_id; expected one of them (the pipeline ${name === 'bos' ? 'starts every sequence with BOS' : 'ends every completion with EOS'})`,
      });
    }
  }
  if (problems.length) throw new HfFolderError(problems);
  if (pad === null)
    pad = {
      id: eos!.id,
      source: 'eos (no pad token named in tokenizer_config.json, generation_config.json or config.json)',
    };

  const stop = new Set<number>([eos!.id]);
  for (const json of [sources.generationConfig, sources.config]) {
    for (const id of idList(json?.eos_token_id) ?? [])
      if (Number.isInteger(id) && id >= 0 && id < tokenCount) stop.add(id);
  }
  const specialIds = new Set<number>([pad.id, bos!.id, eos!.id]);
  for (const [id, added] of tok.get_added_tokens_decoder()) if (added.special) specialIds.add(id);
  const vocab = Object.freeze(
    Array.from({ length: V }, (_, id) => (id < tokenCount ? (tok.id_to_token(id) ?? '') : '')),
  );
  const isSpecial = (id: number) => specialIds.has(id);

  return {
    kind: 'hf',
    vocab,
    size: V,
    tokenCount,
    pad: pad.id,
    bos: bos!.id,
    eos: eos!.id,
    stopIds: Object.freeze([...stop]),
    specialTokens: Object.freeze({ pad: vocab[pad.id], bos: vocab[bos!.id], eos: vocab[eos!.id] }),
    specialSources: Object.freeze({ pad: pad.source, bos: bos!.source, eos: eos!.source }),
    addsBos: tokenizerConfig.add_bos_token === true,
    sources: Object.freeze({ ...sources }),
    isSpecial,
    encode(text: string): Int32Array {
      return Int32Array.from(tok.encode(text, { add_special_tokens: false }).ids);
    },
    decode(ids: ArrayLike<number>, options: DecodeOptions = {}): string {
      const kept: number[] = [];
      for (let k = 0; k < ids.length; k++) {
        const id = ids[k];
        if (!Number.isInteger(id) || id < 0 || id >= V)
          throw new Error(`decode: ids[${k}] = ${id}; expected an integer id in 0..${V - 1}`);
        if (id >= tokenCount || (!options.specials && specialIds.has(id))) continue;
        kept.push(id);
      }
      return tok.decode(kept, { skip_special_tokens: false });
    },
  };
}

/** A tokenizer_config special: a string, an AddedToken object `{content}`, or null/absent. */
function tokenContent(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { content?: unknown }).content === 'string')
    return (value as { content: string }).content;
  return null;
}

/** A `*_token_id` value as a list (null when absent or null). */
function idList(value: unknown): number[] | null {
  if (value === undefined || value === null) return null;
  return Array.isArray(value) ? (value as number[]) : [value as number];
}
