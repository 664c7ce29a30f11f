import { describe, expect, it } from 'vitest';
import { nodeWasmOps } from '../../kernels/wasm/node-wasm';
import type { ModelConfig } from '../model/config';
import { importCheckpoint } from '../model/checkpoint';
import { readCheckpointDir } from '../model/node-checkpoint-dir';
import { GRPO_ARITH, GrpoRun } from '../train/grpo';
import {
  WASM_MEMORY_BYTES,
  passActivationBytes,
  defaultIdsPerPass,
  grpoMemoryPlan,
  memoryPlanProblem,
  trainingMemoryEstimate,
} from './memory';

const SMOLLM_SHAPE: ModelConfig = {
  layers: 30,
  dModel: 576,
  heads: 9,
  kvHeads: 3,
  ffn: 1536,
  vocab: 49152,
  maxSeq: 2048,
  tiedEmbeddings: true,
  ropeTheta: 10000,
  normEps: 1e-5,
};
const STEP = { rows: 32, promptIds: 8, maxNew: 64, reference: false, samplerModels: 0 };

describe('the memory plan of a GRPO step', () => {
  it("counts a pass's activations as allocActs allocates them: the layers' grow with the ids, the head's logits stop at a chunk", () => {
    const perId = (ids: number) => passActivationBytes(SMOLLM_SHAPE, ids) / ids;
    expect(passActivationBytes(SMOLLM_SHAPE, 21)).toBe(trainingMemoryEstimate(SMOLLM_SHAPE, 3, 7).activations);
    // Per id: 30 layers of forward activations at least, and the logits and their gradient until they are chunked.
    expect(perId(100)).toBeGreaterThan(4 * (30 * (6 * 576 + 3 * 1536) + 2 * 49152));
    expect(perId(4000)).toBeLessThan(perId(100) * 0.8);
  });

  it('the SmolLM-135M shape fits the wasm memory in passes of the default size, not in one pass of the whole batch', () => {
    const passes = grpoMemoryPlan(SMOLLM_SHAPE, { ...STEP, idsPerPass: defaultIdsPerPass(SMOLLM_SHAPE) });
    expect(memoryPlanProblem(SMOLLM_SHAPE, passes, WASM_MEMORY_BYTES, 'the wasm memory')).toBeNull();
    expect(passes.parts.find((p) => p.part.startsWith('activations'))!.bytes).toBeLessThanOrEqual(2 ** 30);
    // The trained model alone: 16 bytes a parameter (weights, gradients, AdamW m and v).
    expect(passes.parts[0].bytes).toBe(16 * 134_515_008);
    const whole = grpoMemoryPlan(SMOLLM_SHAPE, { ...STEP, idsPerPass: 1_000_000 });
    expect(whole.total).toBeGreaterThan(WASM_MEMORY_BYTES);
    const problem = memoryPlanProblem(SMOLLM_SHAPE, whole, WASM_MEMORY_BYTES, 'the wasm memory')!;
    expect(problem).toMatch(/^the run needs 4\.\d\d GiB, more than the wasm memory's 4\.00 GiB: trained model: /);
    const fits = Number(/idsPerPass (\d+) or fewer would fit/.exec(problem)![1]);
    expect(grpoMemoryPlan(SMOLLM_SHAPE, { ...STEP, idsPerPass: fits }).total).toBeLessThanOrEqual(WASM_MEMORY_BYTES);
    expect(grpoMemoryPlan(SMOLLM_SHAPE, { ...STEP, idsPerPass: fits + 1 }).total).toBeGreaterThan(WASM_MEMORY_BYTES);
  });

  it('a small model trains its whole batch in one pass by default: nothing changes for the shipped presets', () => {
    const base = importCheckpoint(readCheckpointDir('public/checkpoints/arith-base'));
    const ids = GRPO_ARITH.prompts * GRPO_ARITH.group * base.config.maxSeq;
    expect(defaultIdsPerPass(base.config)).toBeGreaterThan(ids);
  });
});

describe('a GRPO run that would not fit the wasm memory', () => {
  it('is refused before its first batch is sampled, with the plan and the idsPerPass that would fit', async () => {
    const base = importCheckpoint(readCheckpointDir('public/checkpoints/arith-base'));
    const config = { ...GRPO_ARITH, prompts: 128, group: 64, maxNew: 40, idsPerPass: 1_000_000, evalEvery: 0 };
    const run = new GrpoRun(await nodeWasmOps(1), config, base);
    const refusal = await run.next().then(
      () => '',
      (e: Error) => e.message,
    );
    expect(refusal).toMatch(/^the run needs \d+\.\d\d GiB, more than the wasm memory's 4\.00 GiB: /);
    expect(refusal).toMatch(/activations of one training pass \(\d+ ids\) .* idsPerPass \d+ or fewer would fit/);
    run.close();
  });
});
