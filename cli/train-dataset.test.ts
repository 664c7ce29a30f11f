import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { importCheckpoint } from '../worker/model/checkpoint';
import { BASE_CHECKPOINT_DIR, readCheckpointDir } from '../worker/model/node-checkpoint-dir';
import { UsageError } from './args';
import { cliDataset, cliRunOptions } from './commands/train';
import { main } from './main';
import { capture } from './testing/capture';

afterEach(() => vi.restoreAllMocks());

const EXAMPLE = 'examples/arith-dataset.jsonl';
const base = () => importCheckpoint(readCheckpointDir(BASE_CHECKPOINT_DIR));
const BOXED = '\\\\boxed\\{(\\d+)\\}';

function tmpFile(name: string, bytes: string | Uint8Array): string {
  const file = join(mkdtempSync(join(tmpdir(), 'dewpoint-dataset-')), name);
  writeFileSync(file, bytes);
  return file;
}

describe('dewpoint train --dataset', () => {
  it('trains grpo-arith on the example file with a regex reward, evaluating on its held-out records', async () => {
    const { out, err } = capture();
    expect(
      await main([
        'train',
        '--preset',
        'grpo-arith',
        '--dataset',
        EXAMPLE,
        '--reward',
        'regex',
        '--reward-pattern',
        BOXED,
        '--held-out',
        '4',
        '--steps',
        '1',
        '--prompts',
        '2',
        '--eval-every',
        '1',
        '--eval-n',
        '4',
        '--backend',
        'cpu',
        '--json',
      ]),
    ).toBe(0);
    expect(err.join('')).toMatch(
      /train grpo-arith: dataset arith-dataset\.jsonl \(20 records: 16 to train on, 4 held out\), reward regex \/\\\\boxed\\\{\(\\d\+\)\\\}\//,
    );
    const lines = out
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ step: 0, 'eval/n': 4 });
    expect(lines[1]).toMatchObject({ step: 1 });
    expect(lines[1]['reward/mean']).toBeGreaterThanOrEqual(0);
    expect(lines[2]).toMatchObject({ step: 1, 'eval/n': 4 });
  });

  it('reads the file into the run options (JSONL or parquet); flags override --held-out', async () => {
    const d = await cliDataset({ dataset: EXAMPLE, reward: 'math', 'held-out': 3 }, base);
    expect(d).toMatchObject({ name: 'arith-dataset.jsonl', format: 'jsonl', heldOut: 3, reward: { kind: 'math' } });
    expect(d!.records).toHaveLength(20);
    expect(d!.records[0]).toEqual({ prompt: '51+29=', answer: '80', metadata: { data_source: 'arith-example' } });
    expect(cliRunOptions({ preset: 'ppo-arith' }, d)).toMatchObject({ preset: 'ppo-arith', dataset: { heldOut: 3 } });
    const pq = tmpFile(
      'p.parquet',
      new Uint8Array(
        parquetWriteBuffer({
          columnData: [
            { name: 'prompt', data: ['1+1=', '2+2='], type: 'STRING' },
            { name: 'solution', data: ['2', '4'], type: 'STRING' },
          ],
        }),
      ),
    );
    expect(await cliDataset({ dataset: pq, reward: 'exact' }, base)).toMatchObject({
      name: 'p.parquet',
      format: 'parquet',
      heldOut: 1,
      reward: { kind: 'exact' },
      records: [
        { prompt: '1+1=', answer: '2' },
        { prompt: '2+2=', answer: '4' },
      ],
    });
    const code = tmpFile(
      'c.jsonl',
      JSON.stringify({ prompt: '1+1=', ground_truth: [{ stdin: '1\n', stdout: '2\n' }] }),
    );
    expect(await cliDataset({ dataset: code, reward: 'code', 'held-out': 0 }, base)).toMatchObject({
      reward: { kind: 'code' },
      records: [{ answer: '[{"stdin":"1\\n","stdout":"2\\n"}]' }],
    });
    expect(await cliDataset({}, base)).toBeUndefined();
  });

  it('a usage error names the flag and the allowed values', async () => {
    const usage = (f: Record<string, string | number>) => cliDataset(f, base);
    await expect(usage({ dataset: EXAMPLE, reward: 'fuzzy' })).rejects.toThrow(
      new UsageError("dewpoint train: --reward must be one of math, exact, regex, code, got 'fuzzy'"),
    );
    await expect(usage({ dataset: EXAMPLE })).rejects.toThrow(
      'dewpoint train: --dataset needs --reward: one of math, exact, regex, code',
    );
    await expect(usage({ dataset: EXAMPLE, reward: 'regex' })).rejects.toThrow(
      'dewpoint train: --reward regex needs --reward-pattern RE (one capture group, the answer, or none for the whole match)',
    );
    await expect(usage({ dataset: EXAMPLE, reward: 'math', 'reward-pattern': 'x' })).rejects.toThrow(
      'dewpoint train: --reward-pattern is for --reward regex, not --reward math',
    );
    await expect(usage({ reward: 'math' })).rejects.toThrow(
      'dewpoint train: --reward is for --dataset FILE; give the dataset too',
    );
    await expect(usage({ 'held-out': 2 })).rejects.toThrow(
      'dewpoint train: --held-out is for --dataset FILE; give the dataset too',
    );
    await expect(usage({ dataset: EXAMPLE, reward: 'math', preset: 'grpo-calc' })).rejects.toThrow(
      'dewpoint train: --dataset is for the presets grpo-arith, ppo-arith, dpo-arith, not grpo-calc',
    );
    await expect(usage({ dataset: '/nonexistent/x.jsonl', reward: 'math' })).rejects.toThrow(
      /^dewpoint train: cannot read --dataset \/nonexistent\/x\.jsonl: ENOENT/,
    );
    const d = await usage({ dataset: EXAMPLE, reward: 'regex', 'reward-pattern': '(a)(b)' });
    expect(() => cliRunOptions({ preset: 'grpo-arith' }, d)).toThrow(
      'dewpoint train: invalid run options:\n  --reward-pattern has 2 capture groups; expected one (the ' +
        'answer) or none (the whole match), e.g. (?:...) for the others, got "(a)(b)"',
    );
    const h = await usage({ dataset: EXAMPLE, reward: 'math', 'held-out': 20 });
    expect(() => cliRunOptions({ preset: 'grpo-arith' }, h)).toThrow(
      'dewpoint train: invalid run options:\n  --held-out must be an integer in 0..19 (at least one record left to train on), got 20',
    );
    expect(() => cliRunOptions({ preset: 'grpo-arith', 'train-problems': 4 }, h)).toThrow(
      /Training problems \(trainProblems\) applies to the arithmetic generator only/,
    );
  });

  it("the file's first bad line is a usage error naming the file, line, field and what was expected", async () => {
    const file = tmpFile(
      't.jsonl',
      [
        JSON.stringify({ prompt: '1+1=', answer: '2' }),
        '',
        JSON.stringify({ prompt: 'one+one=', answer: '2' }),
        '{ not json',
      ].join('\n'),
    );
    await expect(cliDataset({ dataset: file, reward: 'math' }, base)).rejects.toThrow(
      /^dewpoint train: --dataset t\.jsonl line 3: 'prompt' cannot be encoded: encode: character "n" \(U\+006E\) at index 1 of "one\+one=" is not in the vocabulary of 25 symbols \(expected only characters of the model's vocabulary: .+\)$/,
    );
    const { err } = capture();
    expect(
      await main(['train', '--preset', 'grpo-arith', '--dataset', file, '--reward', 'math', '--backend', 'cpu']),
    ).toBe(2);
    expect(err.join('')).toMatch(/--dataset t\.jsonl line 3: 'prompt' cannot be encoded/);
    expect(await main(['train', '--preset', 'grpo-arith', '--dataset', EXAMPLE, '--reward', 'nope'])).toBe(2);
    expect(err.join('')).toMatch(/--reward must be one of math, exact, regex, code, got 'nope'/);
  });
});
