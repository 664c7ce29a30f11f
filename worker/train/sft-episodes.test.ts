import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { toolTokenizer } from '../data/tokenizer';
import { CALC, calcTask } from '../episodes/calc';
import type { EnvironmentKind } from '../episodes/environment';
import { GUESS, guessTask } from '../episodes/guess';
import { packExamples, packMaskedExamples } from './sft-batch';
import type { SftEpisodeConfig } from './sft-episodes';
import { SFT_CALC, SFT_GUESS, SftEpisodeRun, demonstrationExample } from './sft-episodes';

const tok = toolTokenizer();

describe('demonstration examples', () => {
  it('calc: the episode as the environment answers it, the mask exactly on the action ids and their EOS', async () => {
    const e = await demonstrationExample(CALC, tok, calcTask(47, 35, 19));
    expect(tok.decode(e.ids, { specials: true })).toBe(
      '<bos>47+35+19=calc(47+35)<eos>=82calc(82+19)<eos>=101\\boxed{101}<eos>',
    );
    const masked = Array.from(e.ids).filter((_, i) => e.lossMask[i] === 1);
    expect(tok.decode(masked, { specials: true })).toBe('calc(47+35)<eos>calc(82+19)<eos>\\boxed{101}<eos>');
    const context = Array.from(e.ids).filter((_, i) => e.lossMask[i] === 0);
    expect(tok.decode(context, { specials: true })).toBe('<bos>47+35+19==82=101');
    expect(new Set(e.lossMask)).toEqual(new Set([0, 1]));
  });

  it('guess: the binary search with the < > answers as context', async () => {
    const e = await demonstrationExample(GUESS, tok, guessTask(20));
    expect(tok.decode(e.ids, { specials: true })).toBe('<bos>1-63?32<eos><16<eos>>24<eos><20<eos>');
    const masked = Array.from(e.ids).filter((_, i) => e.lossMask[i] === 1);
    expect(tok.decode(masked, { specials: true })).toBe('32<eos>16<eos>24<eos>20<eos>');
  });

  it('every demonstration fits its config width and its model', async () => {
    for (const [kind, config, tasks] of [
      [CALC, SFT_CALC, [...CALC.heldOut(200), calcTask(99, 99, 99)]],
      [GUESS, SFT_GUESS, GUESS.heldOut(63)],
    ] as const) {
      for (const t of tasks)
        expect((await demonstrationExample(kind, tok, t)).ids.length, t.id).toBeLessThanOrEqual(config.width);
    }
  });

  it('refuses an expert that does not solve its task', async () => {
    const wrong: EnvironmentKind = { ...CALC, demonstrate: () => ['calc(1+1)', '\\boxed{3}'] };
    await expect(demonstrationExample(wrong, tok, calcTask(10, 10, 10))).rejects.toThrow(
      /must end the episode with reward 1, got status done, reward 0/,
    );
    const early: EnvironmentKind = { ...GUESS, demonstrate: () => ['20', '21'] };
    await expect(demonstrationExample(early, tok, guessTask(20))).rejects.toThrow(/ended before the last action/);
  });
});

describe('packMaskedExamples', () => {
  it('packs like packExamples and keeps each example’s own mask', () => {
    const ex = [
      { promptIds: [1, 5, 6], completionIds: [7, 2] },
      { promptIds: [1, 8], completionIds: [9, 9, 2] },
      { promptIds: [1], completionIds: [2] },
    ];
    const masked = ex.map((e) => ({
      ids: [...e.promptIds, ...e.completionIds],
      lossMask: [...e.promptIds.map(() => 0), ...e.completionIds.map(() => 1)],
    }));
    const a = packExamples(ex, 2, 8);
    const b = packMaskedExamples(masked, 2, 8);
    expect(b).toEqual(a);
    const c = packMaskedExamples([{ ids: [1, 4, 2, 5, 6, 2], lossMask: [0, 1, 1, 0, 1, 1] }], 1, 6);
    expect(c.ok && Array.from(c.batch.lossMask)).toEqual([0, 1, 1, 0, 1, 1]);
    expect(packMaskedExamples(masked, 1, 8)).toMatchObject({ ok: false, rowsNeeded: 2 });
    expect(packMaskedExamples(masked, 4, 4)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/longer than width 4/),
    });
    expect(() => packMaskedExamples([{ ids: [1, 2], lossMask: [1] }], 1, 4)).toThrow(/2 ids but a loss mask of 1/);
  });
});

describe('SftEpisodeRun', () => {
  const tiny: SftEpisodeConfig = {
    ...SFT_CALC,
    model: 'tiny',
    steps: 12,
    examples: 8,
    rows: 8,
    warmup: 2,
    lr: 1e-2,
    minLr: 1e-3,
    evalEvery: 0,
    evalN: 4,
  };

  it('a few steps lower the loss on a tiny config; the model has the configured maxSeq', async () => {
    const run = new SftEpisodeRun(createCpuOps(), tiny);
    expect(run.model.config.maxSeq).toBe(96);
    expect(run.model.config.vocab).toBe(tok.size);
    const losses: number[] = [];
    for (let s = 0; s < tiny.steps; s++) {
      const m = await run.next();
      expect(Object.keys(m).sort()).toEqual([
        'batch/packing_efficiency',
        'loss/sft',
        'opt/grad_norm',
        'opt/lr',
        'perf/step_ms',
        'perf/tokens_per_s',
        'step',
      ]);
      losses.push(m['loss/sft']);
    }
    console.log(`[sft-episodes] tiny calc losses: ${losses.map((l) => l.toFixed(3)).join(' ')}`);
    expect(losses.at(-1)!).toBeLessThan(losses[0] - 0.25);
    expect(run.position()).toEqual({ step: 12, tasksDrawn: 96 });
  });

  it('evaluate plays greedy episodes on the held-out tasks', async () => {
    const run = new SftEpisodeRun(createCpuOps(), { ...SFT_GUESS, model: 'tiny', evalN: 3 });
    const ev = await run.evaluate();
    expect(ev.n).toBe(3);
    expect(ev.accuracy).toBeGreaterThanOrEqual(0);
    expect(ev.accuracy).toBeLessThanOrEqual(1);
    expect(ev.meanLength).toBeGreaterThan(0);
  });

  it('resumeAt continues exactly: the same losses as a run that never stopped', async () => {
    const ops = createCpuOps();
    const straight = new SftEpisodeRun(ops, { ...tiny, env: 'guess', width: 30, maxSeq: 48, rows: 8 });
    for (let s = 0; s < 3; s++) await straight.next();
    const weights = await straight.model.getWeights();
    const optimizer = await straight.model.getOptimizerState();
    const position = straight.position();
    const after = [(await straight.next())['loss/sft'], (await straight.next())['loss/sft']];
    const resumed = new SftEpisodeRun(ops, { ...tiny, env: 'guess', width: 30, maxSeq: 48, rows: 8 });
    resumed.resumeAt({ position, weights, optimizer });
    expect([(await resumed.next())['loss/sft'], (await resumed.next())['loss/sft']]).toEqual(after);
    expect(() => resumed.resumeAt({ position, weights, optimizer })).toThrow(/already drawn/);
  });

  it('refuses a maxSeq below the width and an unknown environment', () => {
    expect(() => new SftEpisodeRun(createCpuOps(), { ...tiny, maxSeq: 40 })).toThrow(
      /maxSeq = 40; expected an integer ≥ width \(56\)/,
    );
    expect(() => new SftEpisodeRun(createCpuOps(), { ...tiny, env: 'chess' as 'calc' })).toThrow(
      /expected one of calc, guess/,
    );
  });
});
