import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { toolTokenizer } from '../data/tokenizer';
import type { JournalRecord } from '../episodes/journal';
import { MemoryJournal } from '../episodes/journal';
import { exportCheckpoint, importCheckpoint } from '../model/checkpoint';
import { modelPreset } from '../model/config';
import { Model } from '../model/model';
import type { ResumePoint } from './resume';
import type { EpisodeGrpoRunOptions } from '../contract/options';
import { GRPO_CALC, GRPO_CODE, EpisodeRun } from './grpo-episodes';
import type { PhaseReport } from '../contract/records';
import { readCheckpointDir } from '../model/node-checkpoint-dir';
import { grpoFamilyTrainer } from '../presets/trainers';
import type { CodeGrader } from '../rewards/code-grader';

/** A randomly initialised tiny model over the tool vocabulary, with room for calc episodes. */
async function tinyToolBase() {
  const tok = toolTokenizer();
  const model = new Model(createCpuOps(), { ...modelPreset('tiny', tok.size), maxSeq: 96 });
  model.initWeights(3);
  return importCheckpoint(await exportCheckpoint(model, tok, { note: 'test base' }));
}

const CONFIG: EpisodeGrpoRunOptions = {
  ...GRPO_CALC,
  prompts: 2,
  group: 3,
  lr: 1e-2,
  maskZeroAdvantage: false,
  evalN: 4,
};
const exact = (m: Record<string, number>) =>
  Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('perf/') && k !== 'episodes/resumed_turns'));

describe('EpisodeRun (CPU, tiny model)', () => {
  it('collects P×G episodes, trains on their actions only, and counts them in episodes/*', async () => {
    const run = new EpisodeRun(createCpuOps(), { environment: 'calc', options: CONFIG }, await tinyToolBase());
    const s = await run.next();
    expect(s.episodes).toHaveLength(6);
    expect(s.sessions.map((x) => x.group)).toEqual(s.episodes.map((e) => e.task.id));
    expect(s.metrics['episodes/count']).toBe(6);
    const ended = ['completed', 'truncated', 'error', 'cancelled'].reduce((n, k) => n + s.metrics[`episodes/${k}`], 0);
    expect(ended).toBe(6);
    expect(s.metrics['episodes/turns_mean']).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < s.dlogp.length; i++) if (!s.packed.responseMask[i]) expect(s.dlogp[i]).toBe(0);
    // Every action id of every call is in the batch; masked or not, no observation id carries loss.
    const sampled = s.sessions.reduce((n, x) => n + x.calls.reduce((m, c) => m + c.sampledIds.length, 0), 0);
    expect(s.packed.responseMask.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(sampled);
    expect(Number.isFinite(s.metrics['loss/total'])).toBe(true);
  });

  it(
    'a crash mid-step (the journal refuses a commit) continues from the last committed turn and computes ' +
      'the same step as a run that never stopped',
    async () => {
      const base = await tinyToolBase();
      const ops = createCpuOps();
      const reference = new EpisodeRun(ops, { environment: 'calc', options: CONFIG }, base, {
        journal: new MemoryJournal(),
        runId: 'r',
        writer: 'ref',
      });
      const ref = [await reference.next(), await reference.next()];

      const journal = new MemoryJournal();
      const first = new EpisodeRun(ops, { environment: 'calc', options: CONFIG }, base, {
        journal,
        runId: 'r',
        writer: 'first',
      });
      await first.next();
      const point: ResumePoint = {
        position: structuredClone(first.position()),
        weights: await first.model.getWeights(),
        optimizer: await first.model.getOptimizerState(),
      };
      // Step 2's start records and first round of turns commit; its second round does not (the tab closed).
      let commits = 0;
      const failing = Object.create(journal) as MemoryJournal;
      failing.commit = async (records: readonly JournalRecord[]) => {
        if (records[0]?.step === 2 && ++commits > 2) throw new Error('the tab closed');
        return journal.commit(records);
      };
      (first as unknown as { journal: { journal: MemoryJournal } }).journal.journal = failing;
      await expect(first.next()).rejects.toThrow('the tab closed');
      const committed = (await journal.load('r', 2)).filter((r) => r.turn > 0);
      expect(committed.length).toBeGreaterThan(0);

      const second = new EpisodeRun(ops, { environment: 'calc', options: CONFIG }, base, {
        journal,
        runId: 'r',
        writer: 'second',
      });
      second.resumeAt(point);
      const s2 = await second.next();
      expect(s2.step).toBe(2);
      expect(s2.metrics['episodes/resumed_turns']).toBe(committed.length);
      expect(exact(s2.metrics)).toEqual(exact(ref[1].metrics));
      expect(s2.episodes.map((e) => e.episode)).toEqual(ref[1].episodes.map((e) => e.episode));
      expect(await second.model.getWeights()).toEqual(await reference.model.getWeights());
      // Turns after the crash were written by the second loop; none was committed twice (the journal refuses that).
      const writers = new Set((await journal.load('r', 2)).map((r) => r.writer));
      expect(writers).toEqual(new Set(['first', 'second']));
    },
  );
});

describe('EpisodeRun on code (CPU, the shipped code-base, a grader standing in for the companion)', () => {
  it(
    "reports the companion's grading as `grading k / n programs` after sampling, and says it evaluates " +
      'the 62 held-out tasks it has when evalN asks for 100',
    async () => {
      const base = importCheckpoint(readCheckpointDir('public/checkpoints/code-base'));
      const graded: string[] = [];
      const grader: CodeGrader = async (r) => {
        graded.push(r.completion);
        return { reward: 1, program: 'print(2)', cases: [] };
      };
      // One batch a step: a grader that passes everything leaves no group varying for dynamic sampling.
      const config = { ...GRPO_CODE, prompts: 2, group: 2, evalN: 100, filterGroups: undefined };
      const run = new EpisodeRun(createCpuOps(), { environment: 'code', options: config }, base, null, {
        codeGrader: grader,
      });
      const phases: Parameters<PhaseReport>[] = [];
      run.onProgress = (...report) => phases.push(report);
      await run.next();
      // The base writes programs that end at EOS: every one of them is graded, one report each.
      expect(graded.length).toBeGreaterThan(0);
      const n = graded.length;
      const grading = phases.filter(([p]) => p === 'grading');
      expect(grading).toEqual(Array.from({ length: n + 1 }, (_, k) => ['grading', k, n, 'programs']));
      const at = (p: Parameters<PhaseReport>) => phases.indexOf(p);
      expect(at(grading[0])).toBeGreaterThan(phases.findIndex(([p, done]) => p === 'sampling' && done === 0));
      expect(at(grading.at(-1)!)).toBeLessThan(phases.findIndex(([p, done]) => p === 'sampling' && done === 4));

      expect(run.heldOutCount).toBe(62);
      expect(grpoFamilyTrainer(run, run.config, base.tokenizer).evalCount).toBe(62);
      graded.length = 0;
      expect((await run.evaluate()).n).toBe(62);
    },
  );
});
