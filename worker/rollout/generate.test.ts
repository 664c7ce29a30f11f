import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { testGpuOps } from '../../kernels/common/node-test-gpu';
import { mulberry32 } from '../../kernels/common/random';
import type { Ops } from '../../kernels/ops';
import { compareClose } from '../../kernels/testing/expect-close';
import { modelPreset } from '../model/config';
import { Model } from '../model/model';
import { numel, paramSpecs } from '../model/params';
import { generate } from './generate';

function model(ops: Ops, seed: number): Model {
  const c = { ...modelPreset('tiny', 13), layers: 2, dModel: 16, heads: 2, ffn: 24, maxSeq: 40 };
  const m = new Model(ops, c);
  const rand = mulberry32(seed);
  m.setWeights(
    new Map(
      paramSpecs(c).map((s) => [
        s.name,
        Float32Array.from({ length: numel(s.shape) }, () => (s.shape.length === 1 ? 1 : 0.5 * (rand() * 2 - 1))),
      ]),
    ),
  );
  return m;
}

const PROMPTS = [
  [1, 5, 6, 7],
  [1, 8],
  [1, 9, 9, 9, 10, 11],
  [1, 5, 6, 7],
];
const OPTS = { maxNew: 12, eos: 2, seed: 11, temperature: 1.0 };

const gpu = await testGpuOps();
const backends: [string, () => Ops][] = [['cpu', createCpuOps]];
if (gpu) backends.push(['webgpu', () => gpu]);

describe.each(backends)('generate on %s', (_name, makeOps) => {
  it('with and without the KV cache gives the same ids and log-probs for the same seed', async () => {
    const m = model(makeOps(), 4);
    const cached = await generate(m, PROMPTS, OPTS);
    const uncached = await generate(m, PROMPTS, { ...OPTS, useCache: false });
    expect(cached.map((g) => [...g.sampledIds])).toEqual(uncached.map((g) => [...g.sampledIds]));
    cached.forEach((g, r) => {
      const c = compareClose(g.rawLogProbs, uncached[r].rawLogProbs, {
        atol: 1e-5,
        rtol: 1e-5,
        label: `row ${r} raw log-probs`,
      });
      expect(c.ok, c.message).toBe(true);
    });
    expect(cached.some((g) => g.sampledIds.length > 1)).toBe(true);
    for (const g of cached) {
      expect(g.finishReason).toBe(g.sampledIds.at(-1) === 2 ? 'stop' : 'length');
      if (g.finishReason === 'length') expect(g.sampledIds.length).toBe(12);
    }
  });

  it("sampled raw log-probs agree with the trainer's rescoring of the same ids at the sampling temperature", async () => {
    const m = model(makeOps(), 5);
    const gens = await generate(m, PROMPTS, { ...OPTS, temperature: 0.7, topK: 5 });
    const width = Math.max(...gens.map((g) => g.promptIds.length + g.sampledIds.length));
    const rows = gens.length;
    const inputIds = new Int32Array(rows * width),
      segmentIds = new Int32Array(rows * width),
      positions = new Int32Array(rows * width);
    gens.forEach((g, r) =>
      [...g.promptIds, ...g.sampledIds].forEach((id, t) => {
        inputIds[r * width + t] = id;
        segmentIds[r * width + t] = 1;
        positions[r * width + t] = t;
      }),
    );
    const batch = { rows, width, inputIds, segmentIds, positions };
    const { logp } = await m.score(batch, undefined, { temperature: 0.7 });
    const untempered = (await m.score(batch)).logp;
    let apart = 0;
    gens.forEach((g, r) => {
      const P = g.promptIds.length;
      const rescored = Array.from(g.sampledIds, (_, i) => logp[r * width + P + i]);
      const c = compareClose(g.rawLogProbs, rescored, {
        atol: 1e-5,
        rtol: 1e-5,
        label: `row ${r}: sampler raw vs trainer rescoring`,
      });
      expect(c.ok, c.message).toBe(true);
      g.rawLogProbs.forEach((raw, i) => (apart = Math.max(apart, Math.abs(raw - untempered[r * width + P + i]))));
      // top-k and temperature change the behavior distribution, so behavior differs from raw.
      expect(g.behaviorLogProbs.some((b, i) => Math.abs(b - g.rawLogProbs[i]) > 1e-6)).toBe(true);
    });
    // The trainer's untempered scores are another distribution: the comparison above can fail.
    expect(apart).toBeGreaterThan(1e-3);
  });

  it('is reproducible: same seed, same completions; rows do not depend on their batch mates', async () => {
    const m = model(makeOps(), 6);
    const a = await generate(m, PROMPTS, OPTS);
    const b = await generate(m, PROMPTS, OPTS);
    expect(a.map((g) => [...g.sampledIds])).toEqual(b.map((g) => [...g.sampledIds]));
    const alone = await generate(m, [PROMPTS[0]], OPTS);
    expect([...alone[0].sampledIds]).toEqual([...a[0].sampledIds]);
    expect([...a[3].sampledIds]).not.toEqual([...a[0].sampledIds]); // same prompt, another row seed
  });
});

describe('generate: more stop ids than EOS (an eos_token_id list)', () => {
  it('a row ends at any of them, as at EOS: finish reason stop, the id kept last', async () => {
    const m = model(createCpuOps(), 3);
    const greedy = { ...OPTS, temperature: 0 };
    const free = await generate(m, PROMPTS, greedy);
    // Each row's third greedy id made a stop id: every row ends there (or at EOS or a stop id earlier).
    const third = free.filter((g) => g.sampledIds.length >= 3).map((g) => g.sampledIds[2]);
    expect(third.length).toBeGreaterThan(0);
    const stopped = await generate(m, PROMPTS, { ...greedy, stop: third });
    stopped.forEach((g, r) => {
      const end = free[r].sampledIds.findIndex(
        (id, t) => id === greedy.eos || third.includes(id) || t === greedy.maxNew - 1,
      );
      expect(Array.from(g.sampledIds)).toEqual(Array.from(free[r].sampledIds.subarray(0, end + 1)));
      const last = g.sampledIds[g.sampledIds.length - 1];
      expect(g.finishReason).toBe(last === greedy.eos || third.includes(last) ? 'stop' : 'length');
    });
    expect(
      stopped.some(
        (g, r) =>
          (g.finishReason === 'stop' && free[r].finishReason !== 'stop') ||
          g.sampledIds.length < free[r].sampledIds.length,
      ),
    ).toBe(true);
  });
});
