/**
 * The companion protocol's validation: refused file names and limits name the field, defaults are
 * applied, unknown fields are refused.
 */
import { describe, expect, it } from 'vitest';
import { fieldName, fileNameProblem, parseWith, programSchema, sandboxLimitsSchema } from './protocol';

const problemsOf = (result: ReturnType<typeof parseWith>) => (result.ok ? [] : result.problems);

describe('programSchema', () => {
  it('accepts relative file names, nested ones included, and leaves argv and stdin optional', () => {
    const r = parseWith(programSchema, {
      files: { 'main.py': 'print(1)', 'lib/util.py': '', '.hidden': '', 'a b/ü.txt': '' },
    });
    expect(r).toEqual({
      ok: true,
      value: { files: { 'main.py': 'print(1)', 'lib/util.py': '', '.hidden': '', 'a b/ü.txt': '' } },
    });
  });

  it.each([
    ['../x', '../x', 'a .. segment'],
    ['a/../../x', 'a/../../x', 'a .. segment'],
    ['/etc/passwd', '/etc/passwd', 'not absolute'],
    ['an empty name', '', 'must not be empty'],
    ['a//b', 'a//b', 'empty segment'],
    ['dir/', 'dir/', 'empty segment'],
    ['./main.py', './main.py', 'a . segment'],
    ['a\\b', 'a\\b', 'backslash'],
    ['a NUL', 'a\0b', 'NUL'],
    ['a 256-byte segment', 'x'.repeat(256), 'at most 255 bytes'],
  ])('refuses %s as a file name, naming the field', (_label, name, why) => {
    const problems = problemsOf(parseWith(programSchema, { files: { [name]: '', 'main.py': '' } }));
    expect(problems).toHaveLength(1);
    expect(problems[0].startsWith(`files[${JSON.stringify(name)}]: `)).toBe(true);
    expect(problems[0]).toContain(why);
  });

  it('refuses a name that is both a file and the directory of another', () => {
    expect(problemsOf(parseWith(programSchema, { files: { a: '', 'a/b/c.py': '', 'a/b': '' } }))).toEqual([
      'files["a"]: this name is both a file and the directory of another file',
      'files["a/b"]: this name is both a file and the directory of another file',
    ]);
  });

  it('refuses a non-string file, an empty argv, NUL in argv and unknown fields, each by name', () => {
    expect(problemsOf(parseWith(programSchema, { files: { 'main.py': 3 }, argv: [], extra: true }, 'program'))).toEqual(
      [
        'program.files["main.py"]: Invalid input: expected string, received number',
        'program.argv: must name a program: at least one element',
        'program.extra: unknown field',
      ],
    );
    expect(problemsOf(parseWith(programSchema, { files: {}, argv: ['python3', 'a\0b'] }))).toEqual([
      'argv[1]: an argument must not contain NUL',
    ]);
  });
});

describe('sandboxLimitsSchema', () => {
  it('applies the defaults: 30 s wall, 10 s CPU, 256 MiB memory, 1 MiB of output', () => {
    expect(parseWith(sandboxLimitsSchema, {})).toEqual({
      ok: true,
      value: { wallSeconds: 30, cpuSeconds: 10, memoryBytes: 256 * 1024 ** 2, messageBytes: 1024 ** 2 },
    });
    expect(parseWith(sandboxLimitsSchema, { wallSeconds: 1.5 })).toMatchObject({
      ok: true,
      value: { wallSeconds: 1.5, cpuSeconds: 10 },
    });
  });

  it('refuses unknown fields, naming them', () => {
    expect(problemsOf(parseWith(sandboxLimitsSchema, { wallSeconds: 1, pids: 10 }, 'limits'))).toEqual([
      'limits.pids: unknown field',
    ]);
  });

  it('refuses out-of-range and mistyped limits with the field and the allowed range', () => {
    expect(
      problemsOf(
        parseWith(
          sandboxLimitsSchema,
          { wallSeconds: 0, cpuSeconds: 1.5, memoryBytes: '1G', messageBytes: 1e9 },
          'limits',
        ),
      ),
    ).toEqual([
      'limits.wallSeconds: must be a number in (0, 3600], got 0',
      'limits.cpuSeconds: must be an integer in 1..3600, got 1.5',
      'limits.memoryBytes: must be an integer in 16777216..68719476736, got "1G"',
      'limits.messageBytes: must be an integer in 1..67108864, got 1000000000',
    ]);
  });
});

describe('fieldName and fileNameProblem', () => {
  it('writes paths as a person reads them', () => {
    expect(fieldName(['files', 'main.py'])).toBe('files["main.py"]');
    expect(fieldName(['files', 'a'], 'program')).toBe('program.files["a"]');
    expect(fieldName(['argv', 0])).toBe('argv[0]');
    expect(fieldName([])).toBe('(body)');
  });

  it('accepts an ordinary name', () => {
    expect(fileNameProblem('src/main.py')).toBeNull();
  });
});
