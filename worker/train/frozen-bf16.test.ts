/**
 * frozenWeights 'bf16' in runs: the reference policy of a full fine-tuning run held as bf16 (its
 * rounding shows as a small KL before the first update, where an f32 reference gives exactly 0),
 * a LoRA run's base held as bf16 (the base read back is the rounded one and stays so), and the
 * memory plan counting what the models allocate.
 */
import { describe, expect, it } from 'vitest';
import { packBf16, unpackBf16 } from '../../kernels/bf16/bf16.ref';
import { nodeWasmOps } from '../../kernels/wasm/node-wasm';
import type { GrpoRunOptions } from '../contract/options';
import { wasmStepPlan, weightBytes } from '../hf/memory';
import { importCheckpoint } from '../model/checkpoint';
import { BASE_CHECKPOINT_DIR, readCheckpointDir } from '../model/node-checkpoint-dir';
import { isLayerMatrix } from '../model/params';
import { findPreset } from '../presets/table';
import { GrpoRun } from './grpo';

const wasm = await nodeWasmOps(1);
const base = importCheckpoint(readCheckpointDir(BASE_CHECKPOINT_DIR));
const OPTIONS: GrpoRunOptions = {
  ...(findPreset('grpo-arith')!.defaults as GrpoRunOptions),
  prompts: 4,
  group: 4,
  steps: 2,
  beta: 0.05,
  evalEvery: 0,
  checkpointEvery: 0,
};

describe('frozenWeights bf16', () => {
  it("a full fine-tuning run's reference: KL before the first update is its rounding (> 0), exactly 0 with f32", async () => {
    const kl = async (frozenWeights: 'f32' | 'bf16') => {
      const run = new GrpoRun(wasm, { ...OPTIONS, frozenWeights }, base);
      return (await run.next()).metrics['rl/kl'];
    };
    expect(Math.abs(await kl('f32'))).toBeLessThan(1e-9);
    const rounded = await kl('bf16');
    expect(Math.abs(rounded)).toBeGreaterThan(1e-9);
    expect(Math.abs(rounded)).toBeLessThan(1e-2);
  });

  it("a LoRA run's base: held rounded to bf16 through its steps", async () => {
    const config = { ...OPTIONS, loraRank: 2, frozenWeights: 'bf16' as const };
    const run = new GrpoRun(wasm, config, base);
    await run.next();
    const w = await run.model.getWeights();
    let rounded = 0;
    for (const [name, t] of base.weights) {
      const want = isLayerMatrix(name) ? unpackBf16(packBf16(t), t.length) : t;
      expect(Array.from(w.get(name)!), name).toEqual(Array.from(want));
      if (want.some((x, i) => x !== t[i])) rounded++;
    }
    expect(rounded).toBeGreaterThan(0);
  });

  it("the plan counts the reference's bf16 weights as the model allocates them", () => {
    const plan = (frozenWeights: 'f32' | 'bf16') =>
      wasmStepPlan(base.config, { ...OPTIONS, frozenWeights }, 8).parts.find((p) => p.part.startsWith('reference'))!;
    const [f32, bf16] = [plan('f32'), plan('bf16')];
    expect(bf16.part).toBe('reference policy: weights, bf16 and one pass');
    // (The shipped base has two layers: half of their matrices is one layer widened, so nothing is saved here.)
    expect(f32.bytes - bf16.bytes).toBe(weightBytes(base.config) - weightBytes(base.config, 'bf16'));
  });
});
