import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { parseDataset, splitDataset } from '../data/dataset';
import { importCheckpoint } from '../model/checkpoint';
import { BASE_CHECKPOINT_DIR, readCheckpointDir } from '../model/node-checkpoint-dir';
import type { DatasetRewardOptions, DatasetRunOptions, GrpoRunOptions } from '../contract/options';
import type { CodeGrader } from '../rewards/code-grader';
import { GraderUnavailable } from '../rewards/code-grader';
import { groupRecords, pairRecords } from '../presets/records';
import { DPO_ARITH, DpoRun } from './dpo';
import { GRPO_ARITH, GrpoRun } from './grpo';
import { PPO_ARITH, PpoRun } from './ppo';
import type { ResumePoint } from './resume';

// The shipped base checkpoint (bare vocabulary: digits, + - * =, \boxed{}), as a person's run starts from it.
const base = importCheckpoint(readCheckpointDir(BASE_CHECKPOINT_DIR));
const FILE = 'examples/arith-dataset.jsonl';
const lines = readFileSync(FILE, 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as { prompt: string; ground_truth: string });

async function load(reward: DatasetRewardOptions = { kind: 'math' }, heldOut = 4): Promise<DatasetRunOptions> {
  const r = await parseDataset('arith-dataset.jsonl', readFileSync(FILE), {
    tokenizer: base.tokenizer,
    maxPromptIds: base.config.maxSeq - 1,
    reward,
    heldOut,
  });
  if (!r.ok) throw new Error(r.message);
  return r.dataset;
}

const grpoConfig = (dataset: DatasetRunOptions): GrpoRunOptions => ({
  ...GRPO_ARITH,
  checkpointEvery: 0,
  prompts: 3,
  group: 4,
  steps: 2,
  evalN: 4,
  dataset,
});
/** Without timings: what two computations of one step must agree on exactly. */
const exact = (m: object) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('perf/')));

describe('GRPO on a prompt dataset from the shipped base (CPU)', () => {
  it('trains 2 steps on prompts drawn from the file; the groups show its prompts and ground truths; held-out records are never trained on', async () => {
    const dataset = await load();
    const config = grpoConfig(dataset);
    expect(config.dataset).toBe(dataset);
    const run = new GrpoRun(createCpuOps(), config, base);
    const steps = [await run.next(), await run.next()];
    const { train, heldOut } = splitDataset(dataset.records, dataset.heldOut);
    const heldPrompts = new Set(heldOut.map((i) => lines[i].prompt));
    const truth = new Map(lines.map((l) => [l.prompt, l.ground_truth]));
    const seen = new Set<string>();
    for (const s of steps) {
      expect(s.sessions).toHaveLength(12);
      expect(Number.isFinite(s.metrics['loss/total'])).toBe(true);
      const groups = groupRecords(s, base.tokenizer);
      expect(groups).toHaveLength(3);
      for (const g of groups) {
        expect(truth.get(g.prompt)).toBe(g.answer); // the file's prompt and its ground truth
        expect(heldPrompts.has(g.prompt)).toBe(false);
        seen.add(g.prompt);
        // MathReward's components, on the ground truth of the file.
        for (const x of g.samples) expect(Object.keys(x.components).sort()).toEqual(['boxed', 'correct', 'parsed']);
      }
    }
    expect(seen.size).toBe(6); // two steps of 3 from one pass over 16 training records: no repeats
    expect(train).toHaveLength(16);
    // The base model adds 2-digit numbers: some of its samples are right under the file's answers.
    expect(steps.some((s) => s.metrics['reward/mean'] > 0)).toBe(true);

    const ev = await run.evaluate();
    expect(ev.n).toBe(4);
    expect(ev.samples.map((x) => x.prompt).sort()).toEqual([...heldPrompts].sort());
    for (const x of ev.samples) expect(x.answer).toBe(truth.get(x.prompt));
  });

  it('same config and seed, same prompts and metrics; a continued run draws the same next prompts', async () => {
    const config = grpoConfig(await load());
    const a = new GrpoRun(createCpuOps(), config, base);
    const b = new GrpoRun(createCpuOps(), config, base);
    const [a1, b1] = [await a.next(), await b.next()];
    expect(b1.tasks.map((t) => t.id)).toEqual(a1.tasks.map((t) => t.id));
    expect(exact(b1.metrics)).toEqual(exact(a1.metrics));
    const at1: ResumePoint = {
      position: structuredClone(a.position()),
      weights: await a.model.getWeights(),
      optimizer: await a.model.getOptimizerState(),
    };
    expect(at1.position).toEqual({ step: 1, tasksDrawn: 3 });
    const continued = new GrpoRun(createCpuOps(), config, base);
    continued.resumeAt(at1);
    const [a2, c2] = [await a.next(), await continued.next()];
    expect(c2.tasks.map((t) => t.id)).toEqual(a2.tasks.map((t) => t.id));
    expect(exact(c2.metrics)).toEqual(exact(a2.metrics));
    const other = new GrpoRun(createCpuOps(), { ...config, seed: 2 }, base);
    expect((await other.next()).tasks.map((t) => t.id)).not.toEqual(a1.tasks.map((t) => t.id));
  });

  it('regex reward: the pattern captures the boxed answer; components matched and correct', async () => {
    const config = grpoConfig(await load({ kind: 'regex', pattern: '\\\\boxed\\{(-?\\d+)\\}' }));
    const s = await new GrpoRun(createCpuOps(), { ...config, steps: 1 }, base).next();
    for (const x of s.sessions) expect(Object.keys(x.components ?? {}).sort()).toEqual(['correct', 'matched']);
    expect(s.sessions.some((x) => x.reward === 1)).toBe(true);
  });

  it('code reward: the grader gets the ground truth cases; one that cannot grade fails the session (masked), never a 0', async () => {
    const cases = JSON.stringify([{ stdin: '1\n', stdout: '2\n' }]);
    const records = lines.map((l) => ({ prompt: l.prompt, answer: cases }));
    const dataset: DatasetRunOptions = {
      name: 'code.jsonl',
      format: 'jsonl',
      records,
      heldOut: 2,
      reward: { kind: 'code' },
    };
    const graded: string[] = [];
    // Grades an even-length completion (1 of 1 cases passes), cannot grade an odd-length one.
    const grader: CodeGrader = async (r) => {
      expect(r.cases).toEqual([{ stdin: '1\n', stdout: '2\n' }]);
      graded.push(r.completion);
      if (r.completion.length % 2) throw new GraderUnavailable('the companion answered 503');
      return {
        reward: 1,
        program: 'print(2)',
        cases: [{ verdict: 'ok', passed: true, stdout: '2\n', stderr: '', detail: '' }],
      };
    };
    const s = await new GrpoRun(createCpuOps(), { ...grpoConfig(dataset), steps: 1 }, base, {
      codeGrader: grader,
    }).next();
    expect(graded).toHaveLength(12);
    for (const x of s.sessions) {
      const text = base.tokenizer.decode(x.calls[0].sampledIds);
      if (text.length % 2)
        expect(x).toMatchObject({
          status: 'failed',
          termination: 'sandbox_error',
          reward: null,
          detail: 'the companion answered 503',
        });
      else
        expect(x).toMatchObject({
          reward: 1,
          components: { program: 1, passed: 1, correct: 1 },
          cases: [{ passed: true }],
        });
    }
    const failed = s.sessions.flatMap((x, i) => (x.status === 'failed' ? [i] : []));
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.length).toBeLessThan(12);
    // A failed session carries no loss mass: none of its ids is in the packed rows.
    const packedSessions = new Set(s.packed.chains.map((ch) => ch.session));
    for (const i of failed) expect(packedSessions.has(i)).toBe(false);
  });

  it('a prompt with a character outside the base vocabulary is refused, naming the record', () => {
    const dataset: DatasetRunOptions = {
      name: 'bad.jsonl',
      format: 'jsonl',
      records: [
        { prompt: '1+1=', answer: '2' },
        { prompt: 'one+1=', answer: '2' },
      ],
      heldOut: 0,
      reward: { kind: 'math' },
    };
    expect(() => new GrpoRun(createCpuOps(), { ...grpoConfig(dataset), evalEvery: 0 }, base)).toThrow(
      /^dataset bad\.jsonl, record 2: the prompt cannot be encoded with the base checkpoint's tokenizer: encode: character "n" \(U\+006E\) at index 1 of "one\+1="/,
    );
  });
});

describe('PPO and DPO share the dataset source (CPU, one step each)', () => {
  it('PPO: its tasks come from the file', async () => {
    const dataset = await load();
    const config = {
      ...PPO_ARITH,
      evalN: 2,
      checkpointEvery: 0,
      prompts: 2,
      group: 2,
      epochs: 1,
      miniBatches: 1,
      dataset,
    };
    const s = await new PpoRun(createCpuOps(), config, base).next();
    const truth = new Map(lines.map((l) => [l.prompt, l.ground_truth]));
    for (const t of s.tasks) expect(truth.get(t.prompt)).toBe(t.answer);
  });

  it("DPO: pairs of the file's prompts, chosen right and rejected wrong under its ground truth", async () => {
    const dataset = await load();
    const config = { ...DPO_ARITH, evalN: 2, checkpointEvery: 0, pairs: 2, dataset };
    const run = new DpoRun(createCpuOps(), config, base);
    const s = await run.next();
    const truth = new Map(lines.map((l) => [l.prompt, l.ground_truth]));
    for (const g of pairRecords(s, base.tokenizer, config)) {
      expect(truth.get(g.prompt)).toBe(g.answer);
      expect(g.samples.map((x) => x.reward)).toEqual([1, 0]);
    }
    expect((await run.evaluate()).n).toBe(2);
  });
});
