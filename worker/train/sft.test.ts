import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { testBackends } from '../../kernels/common/node-test-gpu';
import type { Ops } from '../../kernels/ops';
import { expectClose } from '../../kernels/testing/expect-close';
import { charTokenizer, exportCheckpoint, importCheckpoint } from '../model/checkpoint';
import { Model } from '../model/model';
import { packExamples } from './sft-batch';
import { sftLoss } from './sft-loss';
import type { SftConfig } from './sft';
import { SFT_ARITH, SftRun } from './sft';
import { lrAt } from './schedule';

/** A seeded tiny SFT run: the golden trajectory below pins it (llm.c test_gpt2 style). */
const GOLDEN_CONFIG: SftConfig = {
  ...SFT_ARITH,
  model: 'tiny',
  seed: 7,
  steps: 10,
  examples: 8,
  rows: 4,
  width: 40,
  warmup: 2,
  lr: 1e-2,
  minLr: 1e-3,
  evalEvery: 0,
  evalN: 4,
};

/** Losses of steps 1..10, recorded from this code on each backend. */
const GOLDEN: Record<string, number[]> = {
  cpu: [
    3.250258019235399, 3.203905629075092, 3.149523965935958, 3.1029936557120466, 3.063196446305962, 3.0226985831837077,
    2.9963544312343804, 2.972019740875731, 2.9723598341788016, 2.945967884167381,
  ],
  wasm: [
    3.2502580218844943, 3.203905629075092, 3.14952395840695, 3.10299366332115, 3.0631964514332433, 3.022698591043661,
    2.9963544286707395, 2.972019745948467, 2.9723598341788016, 2.9459678919419,
  ],
  webgpu: [
    3.2502580775154963, 3.2039056523986487, 3.149524003580997, 3.102993683612093, 3.0631964642514466, 3.022698627723442,
    2.996354503016318, 2.9720198271122387, 2.9723598880152546, 2.9459679411805193,
  ],
};

async function trajectory(ops: Ops): Promise<number[]> {
  const run = new SftRun(ops, GOLDEN_CONFIG);
  const losses: number[] = [];
  for (let i = 0; i < GOLDEN_CONFIG.steps; i++) losses.push((await run.next())['loss/sft']);
  return losses;
}

const { backends } = await testBackends();

describe.each(backends)('golden 10-step SFT trajectory on %s', (name, makeOps) => {
  it('reproduces the recorded losses, and the loss falls', async () => {
    const losses = await trajectory(makeOps());
    console.log(`[golden] ${name}: ${JSON.stringify(losses)}`);
    expectClose(losses, GOLDEN[name], { atol: 2e-5, rtol: 2e-5, label: `${name} losses` });
    // Every backend follows the CPU references' trajectory within float32 tolerance.
    expectClose(losses, GOLDEN.cpu, { atol: 2e-5, rtol: 2e-5, label: `${name} vs cpu losses` });
    expect(losses[9]).toBeLessThan(losses[0] - 0.25);
  });
});

describe('SFT pieces', () => {
  it('sftLoss is the token-mean NLL over the mask, with seed −m/Σm', () => {
    const { loss, dlogp, tokens } = sftLoss([-1, -2, -3, 0], [0, 1, 1, 0]);
    expect(tokens).toBe(2);
    expect(loss).toBeCloseTo(2.5, 12);
    expect([...dlogp]).toEqual([0, -0.5, -0.5, 0]);
  });

  it('packExamples places every example once, masks completions only, and refuses what does not fit', () => {
    const ex = [
      { promptIds: [1, 5, 6], completionIds: [7, 2] },
      { promptIds: [1, 8], completionIds: [9, 9, 2] },
      { promptIds: [1], completionIds: [2] },
    ];
    const r = packExamples(ex, 2, 8);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const b = r.batch;
    expect(b.lossMask.reduce((a, x) => a + x, 0)).toBe(6);
    expect(Array.from(b.segmentIds).filter((s) => s !== 0).length).toBe(12);
    expect(b.efficiency).toBeCloseTo(12 / 16, 12);
    expect(packExamples(ex, 1, 8)).toMatchObject({ ok: false, rowsNeeded: 2 });
    expect(packExamples(ex, 4, 4)).toMatchObject({ ok: false, reason: expect.stringMatching(/longer than width 4/) });
  });

  it('lrAt warms up linearly then decays by a cosine to minLr', () => {
    const s = { lr: 1, warmup: 10, total: 110, minLr: 0.1 };
    expect(lrAt(5, s)).toBeCloseTo(0.5, 12);
    expect(lrAt(10, s)).toBeCloseTo(1, 12);
    expect(lrAt(60, s)).toBeCloseTo(0.55, 12);
    expect(lrAt(110, s)).toBeCloseTo(0.1, 12);
    expect(lrAt(500, s)).toBe(0.1);
  });

  it('a checkpoint exported and imported gives the same weights and log-probs exactly', async () => {
    const ops = createCpuOps();
    const run = new SftRun(ops, GOLDEN_CONFIG);
    await run.next();
    const files = await exportCheckpoint(run.model, run.tok, { note: 'test' });
    const loaded = importCheckpoint(files);
    expect(loaded.config).toEqual(run.model.config);
    expect(charTokenizer(loaded.tokenizer, 'test').describe()).toEqual(run.tok.describe());
    const twin = new Model(ops, loaded.config);
    twin.setWeights(loaded.weights);
    const original = await run.model.getWeights();
    for (const [name, w] of original) expect(loaded.weights.get(name), name).toEqual(w);
    const batch = {
      rows: 1,
      width: 6,
      inputIds: [1, 3, 4, 13, 5, 16],
      segmentIds: [1, 1, 1, 1, 1, 1],
      positions: [0, 1, 2, 3, 4, 5],
    };
    expect((await twin.score(batch)).logp).toEqual((await run.model.score(batch)).logp);
    expect(() =>
      importCheckpoint({ ...files, 'config.json': new TextEncoder().encode('{"architectures":["GPT2"]}') }),
    ).toThrow(/config.json: architectures must include 'LlamaForCausalLM'/);
  });
});
