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
  stepMemoryPlan,
  memoryPlanProblem,
  recomputesLayers,
  trainingMemoryEstimate,
  wasmDpoPlan,
  wasmStepPlan,
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
    const passes = stepMemoryPlan(SMOLLM_SHAPE, { ...STEP, idsPerPass: defaultIdsPerPass(SMOLLM_SHAPE) });
    expect(memoryPlanProblem(SMOLLM_SHAPE, passes, WASM_MEMORY_BYTES, 'the wasm memory')).toBeNull();
    expect(passes.parts.find((p) => p.part.startsWith('activations'))!.bytes).toBeLessThanOrEqual(2 ** 30);
    // The trained model alone: 16 bytes a parameter (weights, gradients, AdamW m and v), and the tied
    // embedding's lookup gradient apart (vocab × d).
    expect(passes.parts[0].bytes).toBe(16 * 134_515_008 + 4 * 49152 * 576);
    const whole = stepMemoryPlan(SMOLLM_SHAPE, { ...STEP, idsPerPass: 1_000_000 });
    expect(whole.total).toBeGreaterThan(WASM_MEMORY_BYTES);
    const problem = memoryPlanProblem(SMOLLM_SHAPE, whole, WASM_MEMORY_BYTES, 'the wasm memory')!;
    expect(problem).toMatch(/^the run needs 4\.\d\d GiB, more than the wasm memory's 4\.00 GiB: trained model: /);
    const fits = Number(/idsPerPass (\d+) or fewer would fit/.exec(problem)![1]);
    expect(stepMemoryPlan(SMOLLM_SHAPE, { ...STEP, idsPerPass: fits }).total).toBeLessThanOrEqual(WASM_MEMORY_BYTES);
    expect(stepMemoryPlan(SMOLLM_SHAPE, { ...STEP, idsPerPass: fits + 1 }).total).toBeGreaterThan(WASM_MEMORY_BYTES);
  });

  it("a reference of its own holds a pass's activations too (one layer's: it is frozen): the advice counts both models' passes", () => {
    const ref = stepMemoryPlan(SMOLLM_SHAPE, { ...STEP, reference: true, idsPerPass: 1_000_000 });
    const pass = passActivationBytes(SMOLLM_SHAPE, ref.passIds, { frozen: true });
    expect(pass).toBeLessThan(passActivationBytes(SMOLLM_SHAPE, ref.passIds) / 5);
    expect(ref.parts.find((p) => p.part === 'reference policy: weights and one pass')!.bytes).toBe(
      4 * 134_515_008 + pass,
    );
    const problem = memoryPlanProblem(SMOLLM_SHAPE, ref, WASM_MEMORY_BYTES, 'the wasm memory')!;
    const fits = Number(/idsPerPass (\d+) or fewer would fit/.exec(problem)![1]);
    const at = (idsPerPass: number) => stepMemoryPlan(SMOLLM_SHAPE, { ...STEP, reference: true, idsPerPass }).total;
    expect(at(fits)).toBeLessThanOrEqual(WASM_MEMORY_BYTES);
    expect(at(fits + 1)).toBeGreaterThan(WASM_MEMORY_BYTES);
  });

  it('under LoRA: the base once (it is the reference too) and the adapters with their optimizer state', () => {
    const lora = { rank: 16, targetModules: ['all-linear'] };
    const plan = stepMemoryPlan(SMOLLM_SHAPE, { ...STEP, reference: true, idsPerPass: 2048, lora });
    expect(plan.parts.map((p) => p.part).slice(0, 2)).toEqual([
      'base model (frozen, also the reference)',
      'LoRA adapters (rank 16): weights, gradients, AdamW m and v',
    ]);
    expect(plan.parts[0].bytes).toBe(4 * 134_515_008);
    // r · (in + out) values per projection (q, k, v, o, gate, up, down; r = 16), 16 bytes each: weights, gradients, m, v.
    const perLayer = 16 * (576 + 576 + (576 + 192) * 2 + 576 + 576 + (576 + 1536) * 3);
    expect(plan.parts[1].bytes).toBe(16 * 30 * perLayer);
    expect(plan.total).toBeLessThan(stepMemoryPlan(SMOLLM_SHAPE, { ...STEP, reference: true, idsPerPass: 2048 }).total);
    // Adapter dropout: a pass also holds an adapter's dropped-out input, (ids, max(C, F)).
    const dropped = stepMemoryPlan(SMOLLM_SHAPE, {
      ...STEP,
      reference: true,
      idsPerPass: 2048,
      lora: { ...lora, dropout: 0.1 },
    });
    const pass = (p: typeof plan) => p.parts.find((x) => x.part.startsWith('activations of one training pass'))!.bytes;
    expect(pass(dropped) - pass(plan)).toBe(4 * plan.passIds * 1536);
  });

  it('per-layer recomputation: on by default from 100M parameters; a pass of the 1 GiB default holds many times the ids', () => {
    expect(recomputesLayers(SMOLLM_SHAPE)).toBe(true);
    expect(recomputesLayers(SMOLLM_SHAPE, false)).toBe(false);
    const shipped = importCheckpoint(readCheckpointDir('public/checkpoints/arith-base')).config;
    expect(recomputesLayers(shipped)).toBe(false);
    expect(recomputesLayers(shipped, true)).toBe(true);
    const [kept, recomputed] = [defaultIdsPerPass(SMOLLM_SHAPE), defaultIdsPerPass(SMOLLM_SHAPE, { recompute: true })];
    expect(recomputed).toBeGreaterThan(5 * kept);
    expect(passActivationBytes(SMOLLM_SHAPE, recomputed, { recompute: true })).toBeLessThanOrEqual(2 ** 30);
  });

  it('DPO: a row per completion of a pair, the reference a model of its own; refused past the memory with the idsPerPass that fits', () => {
    const step = { pairs: 8, samplesPerPrompt: 4, maxNew: 64 };
    // At this size the layers are recomputed by default: the whole batch in one pass fits.
    const plan = wasmDpoPlan(SMOLLM_SHAPE, step, 32);
    expect(plan.parts.map((p) => p.part)).toContain('reference policy: weights and one pass');
    expect(plan.parts.map((p) => p.part)).toContain('activations of one training pass (1536 ids, layers recomputed)');
    expect(plan.parts.at(-1)!.part).toBe('sampling: KV cache of 32 × 96 ids, the prefill and a decoding step');
    expect(plan.passIds).toBe(16 * 96);
    expect(plan.problem).toBeNull();
    // Keeping every layer's activations, the policy's and the reference's passes do not fit beside the
    // rest: the advice's idsPerPass does.
    const kept = { ...step, recomputeLayers: false, idsPerPass: 1536 };
    const problem = wasmDpoPlan(SMOLLM_SHAPE, kept, 32).problem;
    expect(problem).toMatch(
      /^the run needs [\d.]+ GiB, more than the wasm memory's 4\.00 GiB: .* idsPerPass \d+ or fewer would fit/,
    );
    const fits = Number(/idsPerPass (\d+) or fewer would fit/.exec(problem!)![1]);
    expect(wasmDpoPlan(SMOLLM_SHAPE, { ...kept, idsPerPass: fits }, 32).problem).toBeNull();
    expect(wasmDpoPlan(SMOLLM_SHAPE, { ...kept, idsPerPass: fits + 1 }, 32).problem).not.toBeNull();
    const lora = wasmDpoPlan(
      SMOLLM_SHAPE,
      { pairs: 8, samplesPerPrompt: 4, maxNew: 64, lora: { rank: 8, targetModules: ['q_proj'] } },
      32,
    );
    expect(lora.parts.some((p) => p.part.startsWith('reference'))).toBe(false);
  });

  it("a prefill holds one layer's activations at a time: 32 prompts of 224 ids fit beside the SmolLM shape's training", () => {
    const plan = wasmStepPlan(SMOLLM_SHAPE, { prompts: 8, group: 4, maxNew: 32, beta: 0 }, 224);
    expect(plan.problem).toBeNull();
    const sampling = plan.parts.at(-1)!;
    expect(sampling.part).toBe('sampling: KV cache of 32 × 256 ids, the prefill and a decoding step');
    // KV cache 32 × 256 × 2 × 192 × 30 layers; the prefill's one layer is far below 30 layers' (7 GiB).
    const kv = 2 * 32 * 256 * 192 * 30 * 4;
    expect(sampling.bytes - kv).toBeLessThan(2 ** 30 / 2);
  });

  it("SmolLM-360M's shape: LoRA on a bf16 base fits the wasm memory, full fine-tuning cannot; on WebGPU its largest buffer is the embedding", () => {
    const SMOLLM_360M: ModelConfig = { ...SMOLLM_SHAPE, layers: 32, dModel: 960, heads: 15, kvHeads: 5, ffn: 2560 };
    const step = { prompts: 8, group: 4, maxNew: 64, beta: 0 };
    // The trained model alone is 16 bytes a parameter: 5.39 GiB.
    expect(wasmStepPlan(SMOLLM_360M, step, 32).problem).toMatch(/^the run needs 6\.\d\d GiB, .* no idsPerPass fits/);
    const lora = { rank: 16, targetModules: ['all-linear'] };
    const plan = wasmStepPlan(SMOLLM_360M, { ...step, lora, frozenWeights: 'bf16' }, 32);
    expect(plan.problem).toBeNull();
    // 32 layers of 2·C² + 2·C·KV + 3·C·F matrix values as bf16 (2 bytes), one layer of them widened to
    // f32, the embedding (V, C) and the 65 norms (C) in f32.
    const layer = 2 * 960 * 960 + 2 * 960 * 320 + 3 * 960 * 2560;
    const base = 2 * 32 * layer + 4 * layer + 4 * 49152 * 960 + 4 * 65 * 960;
    expect(plan.parts[0]).toEqual({ part: 'base model (frozen, also the reference, bf16)', bytes: base });
    // Each tensor a buffer of its own on WebGPU: the embedding, 180 MiB, past WebGPU's default 128 MiB a buffer.
    expect(plan.largestBuffer).toEqual({ label: 'base:model.embed_tokens.weight', bytes: 4 * 49152 * 960 });
    expect(plan.largestBuffer.bytes).toBeGreaterThan(2 ** 27);
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
