import { parquetWriteBuffer } from 'hyparquet-writer';
import { describe, expect, it } from 'vitest';
import type { DatasetLoadResult } from '../contract/models';
import type { DatasetRunOptions } from '../contract/options';
import { datasetStream, defaultHeldOut, parseDataset, promptHash, splitDataset } from './dataset';
import { arithTokenizer } from './tokenizer';

const enc = (text: string) => new TextEncoder().encode(text);
const jsonl = (...rows: unknown[]) => enc(rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n'));
const bare = arithTokenizer('bare');

function ok(r: DatasetLoadResult): DatasetRunOptions {
  if (!r.ok) throw new Error(`expected a dataset, got: ${r.message}`);
  return r.dataset;
}
function bad(r: DatasetLoadResult): string {
  if (r.ok) throw new Error(`expected a problem, got ${r.dataset.records.length} records`);
  expect(r).not.toHaveProperty('dataset'); // nothing half-loaded
  return r.message;
}

type SchemaElement = Record<string, unknown>;
const str = (name: string, repetition = 'REQUIRED'): SchemaElement => ({
  name,
  type: 'BYTE_ARRAY',
  converted_type: 'UTF8',
  repetition_type: repetition,
});
const struct = (name: string, fields: SchemaElement[], repetition = 'OPTIONAL'): SchemaElement[] => [
  { name, repetition_type: repetition, num_children: fields.length },
  ...fields,
];
/** pyarrow's three-level LIST (`name.list.element`), as verl's parquet files have. */
const list = (name: string, element: SchemaElement[]): SchemaElement[] => [
  { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  ...element,
];

function parquet(columns: { name: string; data: unknown[]; schema: SchemaElement[] }[]): Uint8Array {
  const schema = [{ name: 'root', num_children: columns.length }, ...columns.flatMap((c) => c.schema)];
  return new Uint8Array(
    parquetWriteBuffer({ columnData: columns.map((c) => ({ name: c.name, data: c.data })), schema: schema as never }),
  );
}

describe('parseDataset: JSONL', () => {
  it('reads string and chat-list prompts, every ground-truth field name, and keeps the rest as metadata', async () => {
    const d = ok(
      await parseDataset(
        'train.jsonl',
        jsonl(
          { prompt: '12+7=', ground_truth: '19', data_source: 'mine' },
          '',
          {
            prompt: [
              { role: 'system', content: 'be brief' },
              { role: 'user', content: '3+4=' },
            ],
            reward_model: { style: 'rule', ground_truth: 7 },
            extra_info: { index: 1 },
          },
          '   ',
          { prompt: '1+1=', solution: '2', answer: 'not this one' },
          {
            prompt: [
              { role: 'user', content: '2+2=' },
              { role: 'assistant', content: 'x' },
              { role: 'user', content: 'sure?' },
            ],
            answer: 4,
          },
        ),
      ),
    );
    expect(d).toMatchObject({ name: 'train.jsonl', format: 'jsonl', reward: { kind: 'math' } });
    expect(d.records).toEqual([
      { prompt: '12+7=', answer: '19', metadata: { data_source: 'mine' } },
      {
        prompt: '3+4=',
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: '3+4=' },
        ],
        answer: '7',
        metadata: { reward_model: { style: 'rule' }, extra_info: { index: 1 } },
      },
      { prompt: '1+1=', answer: '2', metadata: { answer: 'not this one' } },
      // A chat list's prompt text: its user turns joined by a newline; its turns kept for a chat template.
      {
        prompt: '2+2=\nsure?',
        messages: [
          { role: 'user', content: '2+2=' },
          { role: 'assistant', content: 'x' },
          { role: 'user', content: 'sure?' },
        ],
        answer: '4',
      },
    ]);
  });

  it('takes CRLF line ends and a byte-order mark; a code ground truth (a list) is kept as JSON text', async () => {
    const text =
      '\uFEFF' + JSON.stringify({ prompt: 'p', ground_truth: [{ stdin: '1\n', stdout: '2\n' }] }) + '\r\n\r\n';
    const d = ok(await parseDataset('x.JSONL', enc(text), { reward: { kind: 'code' } }));
    expect(d.records).toEqual([{ prompt: 'p', answer: '[{"stdin":"1\\n","stdout":"2\\n"}]' }]);
    expect(d.reward).toEqual({ kind: 'code' });
  });

  it('holds out a tenth by default (at least one of two or more), or the count asked for', async () => {
    expect([1, 2, 9, 10, 25].map(defaultHeldOut)).toEqual([0, 1, 1, 1, 2]);
    const rows = Array.from({ length: 20 }, (_, i) => ({ prompt: `${i}+1=`, ground_truth: String(i + 1) }));
    expect(ok(await parseDataset('t.jsonl', jsonl(...rows))).heldOut).toBe(2);
    expect(ok(await parseDataset('t.jsonl', jsonl(...rows), { heldOut: 5 })).heldOut).toBe(5);
    expect(bad(await parseDataset('t.jsonl', jsonl(...rows), { heldOut: 20 }))).toBe(
      't.jsonl: has 20 records for 20 held out (expected a held-out count in 0..19 (at least one record left to train on))',
    );
  });
});

describe('parseDataset: parquet (written with hyparquet-writer)', () => {
  it('reads flat string columns, an int64 ground truth and metadata', async () => {
    const bytes = new Uint8Array(
      parquetWriteBuffer({
        columnData: [
          { name: 'prompt', data: ['12+7=', '3+4='], type: 'STRING' },
          { name: 'answer', data: [19n, 7n], type: 'INT64' },
          { name: 'level', data: [1, 2], type: 'INT32' },
        ],
      }),
    );
    const d = ok(await parseDataset('train.parquet', bytes, { tokenizer: bare }));
    expect(d.format).toBe('parquet');
    expect(d.records).toEqual([
      { prompt: '12+7=', answer: '19', metadata: { level: 1 } },
      { prompt: '3+4=', answer: '7', metadata: { level: 2 } },
    ]);
  });

  it("reads verl's layout: prompt a LIST of {role, content} structs, reward_model a struct", async () => {
    const bytes = parquet([
      { name: 'data_source', data: ['arith', 'arith'], schema: [str('data_source')] },
      {
        name: 'prompt',
        data: [[{ role: 'user', content: '47+35=' }], [{ role: 'user', content: '1+2=' }]],
        schema: list('prompt', struct('element', [str('role'), str('content')], 'REQUIRED')),
      },
      {
        name: 'reward_model',
        data: [
          { style: 'rule', ground_truth: '82' },
          { style: 'rule', ground_truth: '3' },
        ],
        schema: struct('reward_model', [str('style'), str('ground_truth')]),
      },
    ]);
    const d = ok(await parseDataset('verl.parquet', bytes, { tokenizer: bare }));
    expect(d.records).toEqual([
      {
        prompt: '47+35=',
        messages: [{ role: 'user', content: '47+35=' }],
        answer: '82',
        metadata: { data_source: 'arith', reward_model: { style: 'rule' } },
      },
      {
        prompt: '1+2=',
        messages: [{ role: 'user', content: '1+2=' }],
        answer: '3',
        metadata: { data_source: 'arith', reward_model: { style: 'rule' } },
      },
    ]);
  });

  it('names the row (1-based) of a bad record, and refuses bytes that are not parquet', async () => {
    const bytes = new Uint8Array(
      parquetWriteBuffer({
        columnData: [
          { name: 'prompt', data: ['1+1=', '2+2=', 'abc'], type: 'STRING' },
          { name: 'ground_truth', data: ['2', '4', '0'], type: 'STRING' },
        ],
      }),
    );
    expect(bad(await parseDataset('t.parquet', bytes, { tokenizer: bare }))).toMatch(
      /^t\.parquet row 3: 'prompt' cannot be encoded: encode: character "a" \(U\+0061\) at index 0 of "abc" is not in the vocabulary of 25 symbols \(expected only characters of the model's vocabulary: "0123456789\+-\*=\\\\boxed\{\}"\)$/,
    );
    expect(bad(await parseDataset('t.parquet', enc('{"prompt": "x"}')))).toBe(
      't.parquet: is not one (expected a parquet file (it starts with PAR1))',
    );
    const broken = bytes.slice(0, 40);
    broken.set(bytes.subarray(bytes.length - 8), 32);
    expect(bad(await parseDataset('t.parquet', broken))).toMatch(
      /^t\.parquet: cannot be read \(.+\) \(expected a parquet file hyparquet can read \(uncompressed or snappy\)\)$/,
    );
  });
});

describe('parseDataset: the first bad line is named with the file, line, field and what was expected', () => {
  const good = { prompt: '1+1=', ground_truth: '2' };
  const cases: [string, unknown, string][] = [
    [
      'no prompt',
      { ground_truth: '2' },
      "train.jsonl line 2: 'prompt' is missing (expected a string or a list of {role, content})",
    ],
    [
      'a number prompt',
      { prompt: 5, ground_truth: '2' },
      "train.jsonl line 2: 'prompt' is a number (5) (expected a string or a list of {role, content})",
    ],
    [
      'a blank prompt',
      { prompt: '  ', ground_truth: '2' },
      "train.jsonl line 2: 'prompt' is empty (expected a string or a list of {role, content}, not blank)",
    ],
    [
      'a turn that is not an object',
      { prompt: ['hi'], ground_truth: '2' },
      'train.jsonl line 2: \'prompt[0]\' is a string ("hi") (expected a {role, content} object)',
    ],
    [
      'a turn without content',
      { prompt: [{ role: 'user' }], ground_truth: '2' },
      "train.jsonl line 2: 'prompt[0].content' is missing (expected a string)",
    ],
    [
      'a turn without role',
      { prompt: [{ content: 'x' }], ground_truth: '2' },
      "train.jsonl line 2: 'prompt[0].role' is missing (expected a string ('system', 'user' or 'assistant'))",
    ],
    [
      'no user turn',
      { prompt: [{ role: 'system', content: 'x' }], ground_truth: '2' },
      "train.jsonl line 2: 'prompt' has no user turn (expected a chat list with at least one {role: 'user', content} turn (the prompt is its user turns))",
    ],
    [
      'no ground truth',
      { prompt: '1+1=', label: '2' },
      "train.jsonl line 2: no ground truth (expected a ground truth: 'ground_truth', " +
        "'reward_model.ground_truth', 'solution' or 'answer' (a string, a number, or for code a list of " +
        '{stdin, stdout}))',
    ],
    [
      'a blank ground truth',
      { prompt: '1+1=', ground_truth: '' },
      "train.jsonl line 2: 'ground_truth' is empty (expected a non-empty string, a number, or for code a list of test cases)",
    ],
    [
      'a boolean ground truth',
      { prompt: '1+1=', answer: true },
      "train.jsonl line 2: 'answer' is a boolean (true) (expected a non-empty string, a number, or for code a list of test cases)",
    ],
    [
      'a line that is an array',
      [1, 2],
      'train.jsonl line 2: is an array (expected one JSON object per record, with a prompt and a ground truth)',
    ],
  ];
  for (const [name, row, message] of cases) {
    it(name, async () => {
      expect(bad(await parseDataset('train.jsonl', jsonl(good, row, { nonsense: true })))).toBe(message);
    });
  }

  it('the first bad line wins, whatever is wrong with it', async () => {
    expect(bad(await parseDataset('train.jsonl', jsonl(good, { prompt: 5, answer: '1' }, '{ not json')))).toMatch(
      /^train\.jsonl line 2: 'prompt'/,
    );
    expect(bad(await parseDataset('train.jsonl', jsonl(good, '{ not json', { prompt: 5, answer: '1' })))).toMatch(
      /^train\.jsonl line 2: not JSON/,
    );
  });

  it('a line that is not JSON (line numbers count blank lines)', async () => {
    expect(bad(await parseDataset('train.jsonl', jsonl(good, '', '{"prompt": "1+1=", '), {}))).toMatch(
      /^train\.jsonl line 3: not JSON \(.+\) \(expected one JSON object per line\)$/,
    );
  });

  it('a character outside the vocabulary, naming the line, the character and the vocabulary', async () => {
    expect(
      bad(
        await parseDataset('train.jsonl', jsonl(good, good, { prompt: '2 + 2 =', answer: '4' }), { tokenizer: bare }),
      ),
    ).toBe(
      'train.jsonl line 3: \'prompt\' cannot be encoded: encode: character " " (U+0020) at index 1 of "2 + ' +
        '2 =" is not in the vocabulary of 25 symbols (expected only characters of the model\'s vocabulary: "0123456789+-*=\\\\boxed{}")',
    );
  });

  it('a prompt longer than the model has positions for', async () => {
    expect(
      bad(
        await parseDataset('train.jsonl', jsonl(good, { prompt: '1'.repeat(10), answer: '4' }), {
          tokenizer: bare,
          maxPromptIds: 8,
        }),
      ),
    ).toBe(
      "train.jsonl line 2: 'prompt' is 10 ids long (expected at most 7 ids (the model's positions less BOS and the completion))",
    );
  });

  it('a code ground truth that is not test cases', async () => {
    expect(
      bad(
        await parseDataset('train.jsonl', jsonl({ prompt: 'p', ground_truth: '[{"stdin": "1"}]' }), {
          reward: { kind: 'code' },
        }),
      ),
    ).toBe(
      "train.jsonl line 1: 'ground_truth' has case 1 without string stdin and stdout (expected test cases: " +
        'a JSON list of {stdin, stdout} (or {input, output}) strings, or {inputs: [...], outputs: [...]})',
    );
  });

  it('an empty file, a file of blank lines, another extension, bytes that are not UTF-8', async () => {
    expect(bad(await parseDataset('e.jsonl', enc('')))).toBe(
      'e.jsonl: has no records (expected at least one record with a prompt and a ground truth)',
    );
    expect(bad(await parseDataset('e.jsonl', enc('\n  \n')))).toBe(
      'e.jsonl: has no records (expected at least one record with a prompt and a ground truth)',
    );
    expect(bad(await parseDataset('e.csv', enc('a,b')))).toBe(
      'e.csv: has another extension (expected a .jsonl or .parquet file)',
    );
    expect(bad(await parseDataset('e.jsonl', new Uint8Array([0x7b, 0xff, 0xfe])))).toBe(
      'e.jsonl: is not UTF-8 (expected UTF-8 text, one JSON object per line)',
    );
  });

  it('the problem is structured too: file, line, unit, field, expected, got', async () => {
    const r = await parseDataset('train.jsonl', jsonl(good, { ground_truth: '2' }));
    expect(r).toMatchObject({
      ok: false,
      problem: {
        file: 'train.jsonl',
        line: 2,
        unit: 'line',
        field: 'prompt',
        expected: 'a string or a list of {role, content}',
        got: 'is missing',
      },
    });
  });
});

describe('splitDataset and datasetStream', () => {
  const records = Array.from({ length: 30 }, (_, i) => ({ prompt: `${i}+${i}=`, answer: String(2 * i) }));

  it('holds out the records whose prompts hash lowest, whatever the order of the file', () => {
    const { train, heldOut } = splitDataset(records, 4);
    expect(heldOut).toHaveLength(4);
    expect(train).toHaveLength(26);
    const rank = records.map((r) => promptHash(r.prompt)).sort((a, b) => a - b);
    expect(heldOut.map((i) => promptHash(records[i].prompt))).toEqual(rank.slice(0, 4));
    const reversed = [...records].reverse();
    expect(
      splitDataset(reversed, 4)
        .heldOut.map((i) => reversed[i].prompt)
        .sort(),
    ).toEqual(heldOut.map((i) => records[i].prompt).sort());
  });

  it('drops a training record whose prompt is also held out (a duplicate)', () => {
    const first = splitDataset(records, 1).heldOut[0];
    const dup = [...records, { ...records[first] }];
    const { train, heldOut } = splitDataset(dup, 1);
    expect(heldOut).toEqual([first]);
    expect(train).not.toContain(30);
    expect(train).toHaveLength(29);
  });

  it('draws passes over the training records, each in a seeded order: same seed, same prompts', () => {
    const { train } = splitDataset(records, 3);
    const take = (seed: number, n: number) =>
      datasetStream(records, train, seed)
        .take(n)
        .map((t) => t.record);
    const a = take(1, 2 * train.length);
    expect(take(1, 2 * train.length)).toEqual(a);
    expect(take(2, train.length)).not.toEqual(a.slice(0, train.length));
    expect([...a.slice(0, train.length)].sort((x, y) => x - y)).toEqual(train);
    expect([...a.slice(train.length)].sort((x, y) => x - y)).toEqual(train);
    const s = datasetStream(records, train, 1);
    s.take(5);
    expect(s.position).toBe(5);
    expect(s.next()).toEqual({
      id: `record/${a[5] + 1}`,
      prompt: records[a[5]].prompt,
      answer: records[a[5]].answer,
      record: a[5],
    });
  });
});
