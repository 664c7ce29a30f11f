import { describe, expect, it } from 'vitest';
import {
  ARITH_VOCAB,
  arithTokenizer,
  BARE_VOCAB_SIZE,
  BOS_ID,
  encodePromptCompletion,
  EOS_ID,
  PAD_ID,
  tokenizerFromDescription,
  validateTokenizerDescription,
  type TokenizerDescription,
} from './tokenizer';

describe('arith vocabulary', () => {
  it('has 50 entries with PAD = 0, BOS = 1, EOS = 2, and unique symbols', () => {
    expect(ARITH_VOCAB.length).toBe(50);
    expect([PAD_ID, BOS_ID, EOS_ID]).toEqual([0, 1, 2]);
    expect(ARITH_VOCAB.slice(0, 3)).toEqual(['<pad>', '<bos>', '<eos>']);
    expect(new Set(ARITH_VOCAB).size).toBe(50);
    for (const s of ARITH_VOCAB.slice(3)) expect([...s]).toHaveLength(1);
  });

  it('covers digits, + - * = ? space, the characters of \\boxed{}, and the lowercase alphabet', () => {
    const tok = arithTokenizer();
    const text = '0123456789 +-*=?,.\\boxed{} abcdefghijklmnopqrstuvwxyz';
    expect(tok.decode(tok.encode(text))).toBe(text);
  });

  it('digits sit at ids 3..12, so id = digit + 3', () => {
    const tok = arithTokenizer();
    expect(Array.from(tok.encode('0379'))).toEqual([3, 6, 10, 12]);
  });

  it('bare is the 25-symbol prefix of docs/calibration.md, with the same ids', () => {
    const bare = arithTokenizer('bare');
    const words = arithTokenizer('words');
    expect(bare.size).toBe(BARE_VOCAB_SIZE);
    expect(bare.size).toBe(25);
    expect(words.vocab.slice(0, 25)).toEqual(bare.vocab);
    const text = '47+35=\\boxed{82}-9*3';
    expect(Array.from(bare.encode(text))).toEqual(Array.from(words.encode(text)));
    expect(() => bare.encode('what is 4?')).toThrow(/"w" \(U\+0077\) at index 0/);
  });
});

describe('encode / decode', () => {
  const tok = arithTokenizer();

  it('round-trips text', () => {
    for (const text of ['', '47+35=\\boxed{82}', 'what is 12 minus 40?', 'tom has 3 apples, gets 4.']) {
      const ids = tok.encode(text);
      expect(ids).toBeInstanceOf(Int32Array);
      expect(ids.length).toBe(text.length);
      expect(tok.decode(ids)).toBe(text);
    }
  });

  it('refuses a character outside the vocabulary, naming it and its index', () => {
    expect(() => tok.encode('12+3=X')).toThrow(
      'encode: character "X" (U+0058) at index 5 of "12+3=X" is not in the vocabulary of 50 symbols',
    );
    expect(() => tok.encode('ab\n')).toThrow(/"\\n" \(U\+000A\) at index 2/);
    expect(() => tok.encode('1😀2é')).toThrow(/U\+1F600\) at index 1/);
    expect(() => tok.encode('12é')).toThrow(/"é" \(U\+00E9\) at index 2/);
  });

  it('never encodes text to a special id, even a special name', () => {
    expect(() => tok.encode('<eos>')).toThrow(/"<" \(U\+003C\) at index 0/);
  });

  it('decode skips specials by default and shows them on request', () => {
    const ids = [BOS_ID, 7, 16, EOS_ID, PAD_ID, PAD_ID];
    expect(tok.decode(ids)).toBe('4=');
    expect(tok.decode(ids, { specials: true })).toBe('<bos>4=<eos><pad><pad>');
    expect(tok.isSpecial(EOS_ID)).toBe(true);
    expect(tok.isSpecial(3)).toBe(false);
  });

  it('decode refuses an id out of range', () => {
    expect(() => tok.decode([3, 50])).toThrow('decode: ids[1] = 50; expected an integer id in 0..49');
    expect(() => tok.decode([-1])).toThrow(/ids\[0\] = -1/);
    expect(() => tok.decode([1.5])).toThrow(/ids\[0\] = 1.5/);
  });

  it('encodePromptCompletion puts BOS first and EOS last', () => {
    const { promptIds, completionIds } = encodePromptCompletion(tok, '1+2=', '\\boxed{3}');
    expect(promptIds[0]).toBe(BOS_ID);
    expect(promptIds.length).toBe(5);
    expect(completionIds[completionIds.length - 1]).toBe(EOS_ID);
    expect(completionIds.length).toBe(10);
    expect(tok.decode([...promptIds, ...completionIds], { specials: true })).toBe('<bos>1+2=\\boxed{3}<eos>');
  });
});

describe('description', () => {
  it('round-trips through JSON', () => {
    const tok = arithTokenizer();
    const desc = JSON.parse(JSON.stringify(tok.describe())) as TokenizerDescription;
    expect(desc).toEqual({ type: 'char', vocab: [...ARITH_VOCAB], specials: { pad: 0, bos: 1, eos: 2 } });
    const back = tokenizerFromDescription(desc);
    expect(back.vocab).toEqual(tok.vocab);
    expect([back.pad, back.bos, back.eos]).toEqual([0, 1, 2]);
    const text = 'what is 9 times 8?\\boxed{72}';
    expect(Array.from(back.encode(text))).toEqual(Array.from(tok.encode(text)));
  });

  it('describe returns a copy that callers cannot use to change the tokenizer', () => {
    const tok = arithTokenizer();
    const desc = tok.describe();
    desc.vocab[3] = 'Z';
    expect(tok.decode([3])).toBe('0');
  });

  it('supports specials at other ids', () => {
    const tok = tokenizerFromDescription({
      type: 'char',
      vocab: ['a', 'b', '[E]', '[P]', '[B]'],
      specials: { pad: 3, bos: 4, eos: 2 },
    });
    expect(Array.from(tok.encode('ba'))).toEqual([1, 0]);
    expect(tok.decode([4, 1, 0, 2, 3])).toBe('ba');
    expect(tok.decode([4, 1, 2], { specials: true })).toBe('[B]b[E]');
  });

  it('reports each problem naming its field', () => {
    expect(validateTokenizerDescription(null)).toEqual(['tokenizer description: expected an object, got null']);
    const problems = validateTokenizerDescription({
      type: 'bpe',
      vocab: ['<pad>', '<bos>', '<eos>', 'a', 'ab', 'a', 7],
      specials: { pad: 0, bos: 0, eos: 9 },
    });
    expect(problems).toEqual([
      'tokenizer description: type = "bpe"; expected "char"',
      "tokenizer description: specials.bos = 0 is also another special's id; expected three distinct ids",
      'tokenizer description: specials.eos = 9; expected an integer id in 0..6',
      'tokenizer description: vocab[1] = "<bos>"; a non-special entry must be exactly one character',
      'tokenizer description: vocab[2] = "<eos>"; a non-special entry must be exactly one character',
      'tokenizer description: vocab[4] = "ab"; a non-special entry must be exactly one character',
      'tokenizer description: vocab[5] = "a" repeats vocab[3]; entries must be unique',
      'tokenizer description: vocab[6] = 7; expected a string',
    ]);
    expect(validateTokenizerDescription({ type: 'char', specials: { pad: 0, bos: 1, eos: 2 } })).toContain(
      'tokenizer description: vocab is missing; expected an array of strings',
    );
    expect(validateTokenizerDescription({ type: 'char', vocab: ['<p>', '<b>', '<e>'] })).toContain(
      'tokenizer description: specials is undefined; expected { pad, bos, eos }',
    );
    expect(validateTokenizerDescription(arithTokenizer().describe())).toEqual([]);
  });

  it('tokenizerFromDescription throws with every problem', () => {
    const bad = {
      type: 'char',
      vocab: ['<p>', '<b>', '<e>', 'xy'],
      specials: { pad: 0, bos: 1, eos: 1.5 },
    } as unknown as TokenizerDescription;
    expect(() => tokenizerFromDescription(bad)).toThrow(
      /specials\.eos = 1\.5[\s\S]*vocab\[2\] = "<e>"[\s\S]*vocab\[3\] = "xy"/,
    );
  });
});
