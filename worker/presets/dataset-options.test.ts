import { describe, expect, it } from 'vitest';
import type { DatasetRunOptions, GrpoRunOptions, RunOptions } from '../contract/options';
import { parseDataset } from '../data/dataset';
import { REWARD_COMPONENTS } from '../contract/run-options/grpo';
import { codeRewardOf, syncDatasetReward } from '../rewards/dataset-reward';
import { checkRunOptions, optionFields, PRESETS } from './table';

const defaults = <T extends RunOptions>(name: RunOptions['preset']) =>
  structuredClone(PRESETS.find((p) => p.name === name)!.defaults) as T;
const GRPO = defaults<GrpoRunOptions>('grpo-arith');
const DATASET: DatasetRunOptions = {
  name: 'train.jsonl',
  format: 'jsonl',
  heldOut: 1,
  reward: { kind: 'math' },
  records: [
    { prompt: '1+1=', answer: '2' },
    { prompt: '2+2=', answer: '4', metadata: { level: 1 } },
    { prompt: '3+3=', answer: '6' },
  ],
};
const withDataset = (d: Partial<DatasetRunOptions> & Record<string, unknown>, o: object = GRPO) => ({
  ...o,
  dataset: { ...DATASET, ...d },
});
const messages = (o: unknown) => checkRunOptions(o).map((p) => p.message);

describe('the dataset run option', () => {
  it('grpo-arith, ppo-arith and dpo-arith take one; the episode presets do not', () => {
    for (const name of ['grpo-arith', 'ppo-arith', 'dpo-arith'] as const)
      expect(checkRunOptions(withDataset({}, defaults(name))), name).toEqual([]);
    expect(messages(withDataset({}, defaults('grpo-calc')))).toEqual(['dataset is not an option of grpo-calc']);
    expect(messages(withDataset({}, defaults('sft-arith')))).toEqual(['dataset is not an option of sft-arith']);
  });

  it('is not a form field (a file picker sets it): no preset lists a dataset path', () => {
    for (const p of PRESETS)
      expect(
        optionFields(p.name).filter((f) => f.path.startsWith('dataset')),
        p.name,
      ).toEqual([]);
  });

  it('names the field path and the allowed values of each bad part', () => {
    expect(messages(withDataset({ reward: { kind: 'fuzzy' } } as never))).toEqual([
      "dataset.reward.kind must be one of math, exact, regex, code, got 'fuzzy'",
    ]);
    expect(messages(withDataset({ format: 'csv' } as never))).toEqual([
      "dataset.format must be one of jsonl, parquet, got 'csv'",
    ]);
    expect(messages(withDataset({ reward: { kind: 'regex' } }))).toEqual([
      'dataset.reward.pattern must be a regular expression (one capture group, the answer, or none for the ' +
        'whole match) when dataset.reward.kind is regex, got nothing',
    ]);
    expect(messages(withDataset({ reward: { kind: 'math', pattern: 'x' } }))).toEqual([
      'dataset.reward.pattern applies only when dataset.reward.kind is regex, got "x" with math',
    ]);
    expect(messages(withDataset({ records: [] }))).toEqual(['dataset.records must hold at least one record, got []']);
    expect(messages(withDataset({ records: [{ prompt: 1 }] } as never))).toEqual([
      'dataset.records.0.prompt must be the prompt text, got 1',
      'dataset.records.0.answer must be the ground truth as text, got nothing',
    ]);
    expect(messages(withDataset({ heldOut: 1.5 }))).toEqual([
      'dataset.heldOut must be an integer count of held-out records, got 1.5',
    ]);
    expect(messages({ ...GRPO, dataset: 'train.jsonl' })).toEqual([
      "dataset must be a dataset {name, format, records, heldOut, reward} (loadDataset reads one from a file), got 'train.jsonl'",
    ]);
    expect(messages(withDataset({ extra: 1 }))).toEqual(['dataset.extra is not an option of grpo-arith']);
  });

  it('refuses an invalid pattern, naming the field', () => {
    expect(messages(withDataset({ reward: { kind: 'regex', pattern: '(\\d+' } }))).toEqual([
      expect.stringMatching(
        /^dataset\.reward\.pattern is not a JavaScript regular expression \(.+\), got "\(\\\\d\+"$/,
      ),
    ]);
    expect(messages(withDataset({ reward: { kind: 'regex', pattern: '(a)(b)' } }))).toEqual([
      'dataset.reward.pattern has 2 capture groups; expected one (the answer) or none (the whole match), e.g. (?:...) for the others, got "(a)(b)"',
    ]);
    expect(checkRunOptions(withDataset({ reward: { kind: 'regex', pattern: '\\\\boxed\\{(\\d+)\\}' } }))).toEqual([]);
  });

  it('checks the held-out count against the records, the evaluation and duplicates', () => {
    expect(messages(withDataset({ heldOut: 3 }))).toEqual([
      'dataset.heldOut must be an integer in 0..2 (at least one record left to train on), got 3',
    ]);
    expect(messages(withDataset({ heldOut: 0 }))).toEqual([
      'dataset.heldOut must be at least 1 when Evaluate every (evalEvery) > 0 (the evaluation runs on the held-out records), got 0',
    ]);
    expect(checkRunOptions({ ...withDataset({ heldOut: 0 }), evalEvery: 0 })).toEqual([]);
    const same = [
      { prompt: '1+1=', answer: '2' },
      { prompt: '1+1=', answer: '2' },
    ];
    expect(messages(withDataset({ records: same, heldOut: 1 }))).toEqual([
      'dataset.heldOut must leave a record to train on whose prompt is not held out (the records repeat the held-out prompts), got 1',
    ]);
  });

  it('code: every ground truth must be test cases (the first bad record named); DPO refuses code', () => {
    const cases = JSON.stringify([{ stdin: '1\n', stdout: '2\n' }]);
    const records = [
      { prompt: 'a', answer: cases },
      { prompt: 'b', answer: '19' },
      { prompt: 'c', answer: cases },
    ];
    expect(messages(withDataset({ records, reward: { kind: 'code' } }))).toEqual([
      'dataset.records.1.answer must be test cases: a JSON list of {stdin, stdout} (or {input, output}) ' +
        'strings, or {inputs: [...], outputs: [...]}; record 2\'s is "19"',
    ]);
    const good = records.map((r) => ({ ...r, answer: cases }));
    expect(checkRunOptions(withDataset({ records: good, reward: { kind: 'code' } }))).toEqual([]);
    expect(messages(withDataset({ records: good, reward: { kind: 'code' } }, defaults('dpo-arith')))).toEqual([
      "dataset.reward.kind must be one of math, exact, regex for dpo-arith (its pairs are chosen as they are sampled, without the companion), got 'code'",
    ]);
  });

  it('takes a chat-list dataset as parseDataset reads it (each record keeps its turns)', async () => {
    const lines = ['1+1=', '2+2=', '3+3='].map((q, i) =>
      JSON.stringify({ prompt: [{ role: 'user', content: q }], answer: String(2 * (i + 1)) }),
    );
    const loaded = await parseDataset('chat.jsonl', new TextEncoder().encode(lines.join('\n')), {
      reward: { kind: 'math' },
      heldOut: 1,
    });
    if (!loaded.ok) throw new Error(loaded.message);
    expect(loaded.dataset.records[0].messages).toEqual([{ role: 'user', content: '1+1=' }]);
    expect(checkRunOptions({ ...GRPO, dataset: loaded.dataset })).toEqual([]);
  });

  it('trainProblems (the arithmetic training set) does not go with a dataset', () => {
    expect(messages({ ...withDataset({}), trainProblems: 4 })).toEqual([
      'Training problems (trainProblems) applies to the arithmetic generator only; with dataset every ' +
        'training record is visited in passes: leave it empty, got 4',
    ]);
  });
});

describe("GDPO's component weights", () => {
  const gdpo = (weights: Record<string, number>, o: object = GRPO) => ({
    ...o,
    advantage: { estimator: 'gdpo', weights: { correct: 1, ...weights } },
  });
  it("take the components the run's reward writes; others are refused naming what it writes", () => {
    expect(checkRunOptions(gdpo({ boxed: 1, parsed: 0.5 }))).toEqual([]);
    expect(messages(withDataset({ reward: { kind: 'regex', pattern: '(\\d+)' } }, gdpo({ boxed: 1 })))).toEqual([
      "GDPO weight: boxed (advantage.weights.boxed) weighs a component this run's reward does not write (it writes matched, correct), got 1",
    ]);
    expect(
      checkRunOptions(withDataset({ reward: { kind: 'regex', pattern: '(\\d+)' } }, gdpo({ matched: 1 }))),
    ).toEqual([]);
    expect(messages(gdpo({ overlong: 1 }))).toEqual([
      "GDPO weight: overlong (advantage.weights.overlong) weighs a component this run's reward does not write (it writes boxed, parsed, correct), got 1",
    ]);
    expect(checkRunOptions({ ...gdpo({ overlong: 1, score: 1 }), overlongBuffer: 4 })).toEqual([]);
  });

  it("the contract's component table is what each reward writes", () => {
    for (const kind of ['math', 'exact', 'regex'] as const) {
      const reward = syncDatasetReward(kind === 'regex' ? { kind, pattern: '(\\d+)' } : { kind });
      expect(Object.keys(reward('\\boxed{2}', '2').components).sort(), kind).toEqual(
        [...REWARD_COMPONENTS[kind]].sort(),
      );
    }
    const code = codeRewardOf({ reward: 1, program: 'print(1)', cases: [] }).components;
    expect(Object.keys(code).sort()).toEqual([...REWARD_COMPONENTS.code].sort());
  });

  it('the episode presets offer no GDPO (an environment writes no components it could weigh)', () => {
    expect(optionFields('grpo-calc').find((f) => f.path === 'advantage.estimator')?.values).not.toContain('gdpo');
    expect(optionFields('grpo-arith').find((f) => f.path === 'advantage.estimator')?.values).toContain('gdpo');
  });
});
