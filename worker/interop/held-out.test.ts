import { parquetReadObjects } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import type { RunOptions } from '../contract/options';
import type { GroupRecord } from '../contract/records';
import { heldOut, isHeldOut, trainStream } from '../data/arith';
import { ENVIRONMENTS } from '../episodes/kinds';
import { ARITH_TASK } from '../train/task-source';
import { exportFiles, type StepExport } from './files';
import { defaultsOf } from './testing/variants';

// Issue 27: launch.sh sets data.val_files, trainer.val_before_train and test_freq, and config.py
// eval_strategy="steps", so a built-in task's export must carry the held-out tasks too: the
// `evalN` tasks the run evaluates on (worker/train/task-source.ts, grpo-episodes.ts).

/** A step whose groups sampled these arithmetic training prompts (the export reads prompts from groups). */
const stepOf = (tasks: { prompt: string; answer: string }[]): StepExport => ({
  step: 1,
  groups: tasks.map((t) => ({ prompt: t.prompt, answer: t.answer, samples: [] }) as unknown as GroupRecord),
  rows: [],
});

async function exported(options: RunOptions, steps: StepExport[] = []) {
  const verl = exportFiles(options, steps, 'verl');
  const trl = exportFiles(options, steps, 'trl');
  if (!verl.ok) throw new Error(verl.reason);
  if (!trl.ok) throw new Error(trl.reason);
  const file = (files: typeof verl.files, name: string) => {
    const f = files.find((x) => x.name === name);
    if (!f) throw new Error(`no ${name} among ${files.map((x) => x.name).join(', ')}`);
    return f.bytes;
  };
  const parquet = async (name: string) =>
    (await parquetReadObjects({ file: file(verl.files, name).slice().buffer })) as {
      data_source: string;
      prompt: { role: string; content: string }[];
      reward_model: { ground_truth: string };
      extra_info: { split: string; index: number };
    }[];
  const val = await parquet('val.parquet');
  const train = await parquet('train.parquet');
  const text = (files: typeof verl.files, name: string) => new TextDecoder().decode(file(files, name));
  const evalLines = text(trl.files, 'grpo-eval.jsonl')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { prompt: string; solution: string });
  return {
    verlNames: verl.files.map((f) => f.name),
    trlNames: trl.files.map((f) => f.name),
    train,
    val,
    valPairs: val.map((r) => ({ prompt: r.prompt[0].content, answer: r.reward_model.ground_truth })),
    evalPairs: evalLines.map((l) => ({ prompt: l.prompt, answer: l.solution })),
    launch: text(verl.files, 'launch.sh'),
    config: text(trl.files, 'config.py'),
  };
}

describe('the export of a built-in task holds its held-out tasks (val.parquet, grpo-eval.jsonl)', () => {
  it('grpo-arith: the first evalN held-out problems, none of them a training prompt, as launch.sh and config.py say', async () => {
    const options = { ...defaultsOf('grpo-arith'), evalN: 40, evalEvery: 5 } as RunOptions;
    const sampled = trainStream(1, ARITH_TASK).take(64);
    const e = await exported(options, [stepOf(sampled)]);
    expect(e.verlNames).toEqual(['rollouts.parquet', 'train.parquet', 'val.parquet', 'launch.sh']);
    expect(e.trlNames).toEqual(['grpo.jsonl', 'grpo-eval.jsonl', 'dpo.jsonl', 'config.py']);
    const expected = heldOut(40, ARITH_TASK).map((t) => ({ prompt: t.prompt, answer: t.answer }));
    expect(e.valPairs).toEqual(expected);
    expect(e.evalPairs).toEqual(expected);
    for (const t of heldOut(40, ARITH_TASK)) expect(isHeldOut(t.op, t.a, t.b)).toBe(true);
    const trainPrompts = new Set(e.train.map((r) => r.prompt[0].content));
    expect(trainPrompts.size).toBeGreaterThan(0);
    expect(e.valPairs.filter((p) => trainPrompts.has(p.prompt))).toEqual([]);
    expect(e.val.every((r, i) => r.extra_info.split === 'test' && r.extra_info.index === i)).toBe(true);
    expect(new Set(e.val.map((r) => r.data_source))).toEqual(new Set([e.train[0].data_source]));
    // launch.sh: verl validates on VAL_FILES before training and every test_freq steps, up to val_max_samples.
    expect(e.launch).toContain('    data.val_files=$VAL_FILES \\\n');
    expect(e.launch).toContain('    trainer.test_freq=5 \\\n');
    expect(e.launch).toContain('    trainer.val_before_train=true \\\n');
    expect(e.launch).toContain('    data.val_max_samples=40 ');
    expect(e.launch).toContain(
      `# Beside this script: TRAIN_FILES=train.parquet (${trainPrompts.size} prompts), VAL_FILES=val.parquet (40 held-out tasks)\n`,
    );
    // config.py: TRL evaluates eval_dataset every eval_steps.
    expect(e.config).toContain('    eval_strategy="steps",\n    eval_steps=5,\n');
    expect(e.config).toMatch(
      /# Beside this file: grpo\.jsonl \(\d+ prompts\) and grpo-eval\.jsonl \(40 held-out tasks\)/,
    );
  });

  it('ppo-arith and dpo-arith (TRL) evaluate on the same held-out problems', async () => {
    const expected = heldOut(100, ARITH_TASK).map((t) => ({ prompt: t.prompt, answer: t.answer }));
    expect((await exported(defaultsOf('ppo-arith'))).valPairs).toEqual(expected);
    const dpo = exportFiles(defaultsOf('dpo-arith'), [], 'trl');
    if (!dpo.ok) throw new Error(dpo.reason);
    const lines = new TextDecoder()
      .decode(dpo.files.find((f) => f.name === 'grpo-eval.jsonl')!.bytes)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { prompt: string; solution: string });
    expect(lines.map((l) => ({ prompt: l.prompt, answer: l.solution }))).toEqual(expected);
  });

  it("the episode presets: their environment kind's heldOut(evalN), fewer where the kind has fewer", async () => {
    const cases: [RunOptions['preset'], keyof typeof ENVIRONMENTS, number][] = [
      ['grpo-calc', 'calc', 100],
      ['ppo-calc', 'calc', 100],
      ['grpo-guess', 'guess', 63],
      ['grpo-code', 'code', 62],
    ];
    for (const [preset, kind, n] of cases) {
      const options = defaultsOf(preset);
      const e = await exported(options);
      const expected = ENVIRONMENTS[kind].heldOut(options.evalN).map((t) => ({ prompt: t.prompt, answer: t.answer }));
      expect(expected, preset).toHaveLength(n);
      expect(e.valPairs, preset).toEqual(expected);
      expect(e.evalPairs, preset).toEqual(expected);
      expect(e.launch, preset).toContain(`VAL_FILES=val.parquet (${n} held-out tasks)`);
      expect(e.launch, preset).toContain(`    data.val_max_samples=${options.evalN} `);
    }
  });
});
