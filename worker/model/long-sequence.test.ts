/**
 * Sequences of 1024 positions (HF_MAX_SEQ, a person's model's training width): training attention
 * over a 1024-wide packed row and decoding attention over a 1024-long KV cache agree across the
 * CPU reference, wasm and WebGPU.
 */
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { mulberry32 } from '../../kernels/common/random';
import { testGpuOps } from '../../kernels/common/node-test-gpu';
import type { Ops } from '../../kernels/ops';
import { expectClose } from '../../kernels/testing/expect-close';
import { nodeWasmOps } from '../../kernels/wasm/node-wasm';
import { HF_MAX_SEQ } from './checkpoint';
import type { ModelConfig } from './config';
import { modelPreset } from './config';
import { Decoder } from './kv-cache';
import { Model } from './model';
import { rowPerSequence } from './packing';
import { initialWeights } from './params';

/** hs 4 (WebGPU's attention needs a multiple of 4), grouped-query, 1024 positions. */
const CONFIG: ModelConfig = { ...modelPreset('tiny', 9), layers: 2, kvHeads: 1, maxSeq: HF_MAX_SEQ };
const rand = mulberry32(3);
const LONG = Array.from({ length: HF_MAX_SEQ }, () => 1 + Math.floor(rand() * 8));
/** Two chains in one 1024-wide row: the second attends to its own 400 ids only. */
const BATCH = (() => {
  const b = rowPerSequence([LONG], HF_MAX_SEQ);
  const segmentIds = Int32Array.from(b.segmentIds);
  const positions = Int32Array.from(b.positions);
  for (let t = 624; t < HF_MAX_SEQ; t++) [segmentIds[t], positions[t]] = [2, t - 624];
  return { ...b, segmentIds, positions };
})();
const SEED = Float32Array.from({ length: HF_MAX_SEQ }, () => rand() - 0.5);
const WEIGHTS = new Map(
  [...initialWeights(CONFIG, 2)].map(([n, w]) => [n, n.includes('norm') ? w : w.map((x) => 20 * x)]),
);

const wasm = await nodeWasmOps(2);
const gpu = await testGpuOps();

async function run(ops: Ops) {
  const model = new Model(ops, CONFIG);
  model.setWeights(WEIGHTS);
  // The one chain of all 1024 ids: its last log-prob, which the decoder's last step must give too.
  const whole = (await model.score(rowPerSequence([LONG], HF_MAX_SEQ))).logp[HF_MAX_SEQ - 1];
  const { logp } = await model.score(BATCH);
  model.zeroGrad();
  await model.backward(SEED);
  const grads = await model.getGradients();
  const decoder = new Decoder(model, 1, HF_MAX_SEQ);
  await decoder.prefill([LONG.slice(0, HF_MAX_SEQ - 2)]);
  const last = await decoder.step([LONG[HF_MAX_SEQ - 2]]);
  decoder.free();
  return { whole, logp, grads, last };
}

describe('sequences of 1024 positions', () => {
  it('wasm and WebGPU score, differentiate and decode them as the CPU reference does', async () => {
    const want = await run(createCpuOps());
    const lse = Math.log(want.last.reduce((s, x) => s + Math.exp(x), 0));
    expect(want.last[LONG[HF_MAX_SEQ - 1]] - lse).toBeCloseTo(want.whole, 4);
    for (const [name, ops] of [['wasm', wasm], ...(gpu ? [['webgpu', gpu] as const] : [])] as const) {
      const got = await run(ops);
      expectClose(got.logp, want.logp, { atol: 2e-4, rtol: 0, label: `${name} log-probs` });
      expectClose(got.last, want.last, { atol: 2e-4, rtol: 0, label: `${name} decoding at 1023 cached ids` });
      for (const [n, g] of want.grads) {
        const scale = Math.max(1e-3, ...Array.from(g, Math.abs));
        expectClose(got.grads.get(n)!, g, { atol: 2e-3 * scale, rtol: 0, label: `${name} ${n}` });
      }
    }
  });
});
