/**
 * The memory plan against the wasm heap it predicts: two GRPO steps of a small seeded model on a
 * fresh wasm instance, LoRA on a bf16 base with per-layer recomputation and passes (the settings
 * SmolLM-360M trains with in a tab), and hf/memory.ts `wasmStepPlan` for the same options and the
 * longest prompt drawn. The second step samples while the first step's training activations are
 * still allocated, so the heap's peak holds every part the plan adds up. Each part is a seventh
 * or more of the total here, so a part the plan dropped (or counted twice) would miss by more
 * than the 10% allowed. The plan's largest tensor (a GPU buffer of its own on WebGPU) is the largest
 * the step allocated.
 */
import { describe, expect, it } from 'vitest';
import { nodeWasmOps } from '../../kernels/wasm/node-wasm';
import type { GrpoRunOptions } from '../contract/options';
import { wasmStepPlan } from '../hf/memory';
import type { LoadedCheckpoint } from '../model/checkpoint';
import { importCheckpoint } from '../model/checkpoint';
import type { ModelConfig } from '../model/config';
import { loraFromOptions } from '../model/lora';
import { BASE_CHECKPOINT_DIR, readCheckpointDir } from '../model/node-checkpoint-dir';
import { initialWeights } from '../model/params';
import { GRPO_ARITH, GrpoRun } from './grpo';

const shipped = importCheckpoint(readCheckpointDir(BASE_CHECKPOINT_DIR));
/** Four layers with grouped-query attention, on the shipped base's tokenizer (its vocabulary and width). */
const config: ModelConfig = { ...shipped.config, layers: 4, dModel: 64, heads: 4, kvHeads: 2, ffn: 128 };
const base: LoadedCheckpoint = { ...shipped, config, weights: initialWeights(config, 1) };
const OPTIONS: GrpoRunOptions = {
  ...GRPO_ARITH,
  prompts: 4,
  group: 4,
  maxNew: 16,
  steps: 2,
  evalEvery: 0,
  checkpointEvery: 0,
  // Every group trains (random weights earn little reward): the update runs its passes each step.
  maskZeroAdvantage: false,
  truncation: 'score',
  loraRank: 8,
  frozenWeights: 'bf16',
  recomputeLayers: true,
  idsPerPass: 64,
};

describe('the memory plan against the wasm heap', () => {
  it("predicts a LoRA step's heap peak within 1% (over 10% off without any one part) and its largest tensor", async () => {
    const ops = await nodeWasmOps(1);
    // The largest tensor the step allocates, as the plan's largestBuffer names it (a WebGPU buffer each).
    const alloc = ops.alloc.bind(ops);
    const largest = { label: '', bytes: 0 };
    ops.alloc = (label, length, dtype) => {
      if (4 * length > largest.bytes) Object.assign(largest, { label, bytes: 4 * length });
      return alloc(label, length, dtype);
    };
    const run = new GrpoRun(ops, OPTIONS, base);
    let promptIds = 0;
    try {
      for (let s = 0; s < 2; s++) {
        const step = await run.next();
        expect(step.metrics['batch/rows_needed']).toBeGreaterThan(1); // more rows than a pass: passes ran
        promptIds = Math.max(promptIds, ...step.generated.map((g) => g.promptIds.length));
      }
    } finally {
      run.close();
    }
    const peak = ops.memoryStats().peakBytes;
    const plan = wasmStepPlan(config, { ...OPTIONS, lora: loraFromOptions(OPTIONS) }, promptIds);
    expect(plan.parts.map((p) => p.part.split(/[ :(]/)[0])).toEqual(['base', 'LoRA', 'activations', 'sampling']);
    const off = (total: number) => Math.abs(total - peak) / peak;
    // Within 1% (what is left is the allocator's 64-byte alignment of small tensors), the 10% asked well inside.
    expect(off(plan.total), `plan ${plan.total} B, heap peak ${peak} B`).toBeLessThan(0.01);
    for (const p of plan.parts) expect(off(plan.total - p.bytes), `without '${p.part}'`).toBeGreaterThan(0.1);
    expect(plan.largestBuffer).toEqual(largest);
  });
});
