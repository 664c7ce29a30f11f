import { describe, expect, it } from 'vitest';
import { codeBlock, fencedBlocks } from './code-block';

const fence = (tag: string, body: string, marks = '```'): string => `${marks}${tag}\n${body}\n${marks}`;

describe('codeBlock', () => {
  it('returns the content of a python block without the fences or a final newline', () => {
    expect(codeBlock(`Here:\n${fence('python', 'print(1)\nprint(2)')}\nDone.`)).toBe('print(1)\nprint(2)');
  });

  it('takes the last block tagged with the language', () => {
    const text = [fence('python', 'a = 1'), 'then', fence('python', 'b = 2'), fence('', 'c = 3')].join('\n');
    expect(codeBlock(text)).toBe('b = 2');
  });

  it('prefers a tagged block over a later untagged one', () => {
    expect(codeBlock([fence('python', 'x'), fence('', 'y')].join('\n'))).toBe('x');
  });

  it('falls back to the last untagged block', () => {
    const text = [fence('', 'first'), fence('js', 'console.log(1)'), fence('', 'last')].join('\n');
    expect(codeBlock(text)).toBe('last');
  });

  it('returns null when only other languages are fenced, or nothing is', () => {
    expect(codeBlock(fence('js', 'x'))).toBeNull();
    expect(codeBlock(fence('python3', 'x'))).toBeNull();
    expect(codeBlock('print(1)')).toBeNull();
    expect(codeBlock('')).toBeNull();
  });

  it('honours the language argument', () => {
    const text = [fence('python', 'p'), fence('cpp', 'c'), fence('', 'u')].join('\n');
    expect(codeBlock(text, 'cpp')).toBe('c');
    expect(codeBlock(text, 'rust')).toBe('u');
    expect(codeBlock(text, 'PYTHON')).toBe('p');
  });

  it('compares the tag case-insensitively and reads only its first word', () => {
    expect(codeBlock(fence('Python', 'x = 1'))).toBe('x = 1');
    expect(codeBlock(fence(' python {.numberLines}', 'y = 2'))).toBe('y = 2');
  });

  it('does not treat py as python', () => {
    expect(codeBlock(fence('py', 'x'))).toBeNull();
  });

  it('returns an empty block as "" (a block, not null)', () => {
    expect(codeBlock('```python\n```')).toBe('');
  });

  it('ignores an unclosed last block and keeps earlier closed ones', () => {
    expect(codeBlock(`${fence('python', 'done = 1')}\n\`\`\`python\nhalf = `)).toBe('done = 1');
    expect(codeBlock('```python\nhalf = ')).toBeNull();
  });

  it('keeps shorter fences and fences with info strings inside a longer fence', () => {
    const inner = 'md = """\n```python\nx\n```\n"""';
    expect(codeBlock(fence('python', inner, '````'))).toBe(inner);
  });

  it('closes only on the same fence character', () => {
    expect(codeBlock('~~~python\na\n```\nb\n~~~')).toBe('a\n```\nb');
  });

  it('does not take an inline triple-backtick span as a block', () => {
    expect(codeBlock('Run ```python print(1)``` now')).toBeNull();
  });

  it('reads CRLF line endings and strips the opener indentation', () => {
    expect(codeBlock('1. Code:\r\n   ```python\r\n   if x:\r\n       y()\r\n   ```\r\n')).toBe('if x:\n    y()');
  });

  it('never throws on hostile input', () => {
    const hostile = ['`'.repeat(100_000), '```\n'.repeat(20_001), '~~~python\n'.repeat(10_000), '\r\n'.repeat(50_000)];
    for (const text of hostile) expect(() => codeBlock(text)).not.toThrow();
    expect(codeBlock('```\n'.repeat(20_001))).toBe('');
  });
});

describe('fencedBlocks', () => {
  it('lists every closed block with its lowercased tag, in order', () => {
    const text = [fence('Python', 'a'), fence('', 'b'), fence('js', 'c')].join('\ntext\n');
    expect(fencedBlocks(text)).toEqual([
      { tag: 'python', content: 'a' },
      { tag: '', content: 'b' },
      { tag: 'js', content: 'c' },
    ]);
  });
});
