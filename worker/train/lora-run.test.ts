/**
 * LoRA runs end to end on the shipped base: GRPO trains the adapters alone with the base itself as
 * its reference, checkpoints hold the merged model beside PEFT's adapter files, a run continues
 * exactly from such a checkpoint, and DPO samples its pairs from the base with the adapters off.
 */
import { describe, expect, it } from 'vitest';
import { nodeWasmOps } from '../../kernels/wasm/node-wasm';
import type { DpoRunOptions, GrpoRunOptions } from '../contract/options';
import { importCheckpoint, readPeftAdapters } from '../model/checkpoint';
import { loraFromOptions, loraSpecs } from '../model/lora';
import { Model } from '../model/model';
import { rowPerSequence } from '../model/packing';
import { BASE_CHECKPOINT_DIR, readCheckpointDir } from '../model/node-checkpoint-dir';
import { decodeSafetensors } from '../model/safetensors';
import { findPreset, trainerOf } from '../presets/table';
import { expectClose } from '../../kernels/testing/expect-close';
import { DpoRun } from './dpo';
import { GrpoRun } from './grpo';

const wasm = await nodeWasmOps(1);
const base = importCheckpoint(readCheckpointDir(BASE_CHECKPOINT_DIR));
const exact = (m: object) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('perf/')));

const GRPO: GrpoRunOptions = {
  ...(findPreset('grpo-arith')!.defaults as GrpoRunOptions),
  prompts: 4,
  group: 4,
  steps: 4,
  beta: 0.05,
  lr: 0.01,
  evalEvery: 0,
  checkpointEvery: 0,
  loraRank: 4,
  loraAlpha: 8,
  loraTargets: 'q_proj,v_proj',
};

describe('a GRPO run with LoRA', () => {
  it('trains the adapters alone, held to the base by KL (0 before the first update, > 0 after)', async () => {
    const run = new GrpoRun(wasm, GRPO, base);
    const first = await run.next();
    expect(Math.abs(first.metrics['rl/kl'])).toBeLessThan(1e-6); // B = 0: the adapted model is the base
    // Later steps' KL is the adapted policy's to the base (a step whose groups all tie masks every session: 0).
    const later = [await run.next(), await run.next()].map((s) => s.metrics['rl/kl']);
    expect(Math.max(...later)).toBeGreaterThan(1e-4);
    const w = await run.model.getWeights();
    for (const [name, t] of base.weights) expect(w.get(name), name).toEqual(t);
    const specs = loraSpecs(base.config, loraFromOptions(GRPO)!);
    expect([...(await run.model.getGradients()).keys()]).toEqual(specs.map((s) => s.name));
    const b = await run.model.getAdapters();
    expect(specs.filter((s) => s.part === 'b').some((s) => b.get(s.name)!.some((x) => x !== 0))).toBe(true);
  });

  it('checkpoints the merged model and PEFT adapter files; a run continues from them exactly', async () => {
    const context = { ops: wasm, base, services: {}, journal: null };
    const a = trainerOf(GRPO, context);
    await a.next();
    await a.next();
    const ck = await a.checkpoints!.write({ note: 'test' });
    const files = ck.files as ReturnType<typeof readCheckpointDir>;
    const config = JSON.parse(new TextDecoder().decode(files['adapter_config.json']));
    expect(config).toMatchObject({ peft_type: 'LORA', r: 4, lora_alpha: 8, target_modules: ['q_proj', 'v_proj'] });
    const names = [...decodeSafetensors(files['adapter_model.safetensors']!).tensors.keys()];
    expect(names).toContain('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight');
    expect(names.every((n) => n.startsWith('base_model.model.model.layers.'))).toBe(true);

    // model.safetensors is the merged model: a plain model on it gives the LoRA model's log-probs (1e-4).
    const loaded = importCheckpoint(files);
    expect([...loaded.weights.keys()].some((n) => n.includes('lora_'))).toBe(false);
    const plain = new Model(wasm, base.config, { frozen: true });
    plain.setWeights(loaded.weights);
    const lora = new Model(wasm, base.config, { frozen: true, lora: loaded.adapters!.lora });
    lora.setWeights(base.weights);
    lora.setWeights(readPeftAdapters(files, base.config)!.weights);
    const batch = rowPerSequence([base.tokenizer.encode('12+34=46'), base.tokenizer.encode('7+8=15')]);
    const [p, q] = [await plain.score(batch), await lora.score(batch)];
    expectClose(p.logp, q.logp, { atol: 1e-4, rtol: 0, label: 'merged vs adapted' });
    // …and not the base's: the adapters moved the model.
    const start = new Model(wasm, base.config, { frozen: true });
    start.setWeights(base.weights);
    const s0 = await start.score(batch);
    expect(Math.max(...q.logp.map((x, i) => Math.abs(x - s0.logp[i])))).toBeGreaterThan(1e-4);

    const third = await a.next();
    const b = trainerOf(GRPO, context);
    b.checkpoints!.resume(ck);
    expect(exact((await b.next()).metrics)).toEqual(exact(third.metrics));
  });

  it('a checkpoint with one adapter file but not the other is refused, naming both', () => {
    const files = { ...readCheckpointDir(BASE_CHECKPOINT_DIR), 'adapter_config.json': new Uint8Array([123, 125]) };
    expect(() => importCheckpoint(files)).toThrow(/needs both adapter_config\.json and adapter_model\.safetensors/);
  });
});

describe('a GRPO run with LoRA dropout', () => {
  it('draws its masks in the update alone (ratio ≡ 1 in a one-update step), seeded, kept by a checkpoint', async () => {
    const o: GrpoRunOptions = { ...GRPO, loraDropout: 0.2 };
    expect(loraFromOptions(o)!.dropout).toBe(0.2);
    const context = { ops: wasm, base, services: {}, journal: null };
    const a = trainerOf(o, context);
    const steps = [await a.next(), await a.next()];
    for (const st of steps) {
      // Old log-probs are the update's own forward, detached (TRL's one-iteration GRPO): no clipping by mask noise.
      expect(st.metrics['rl/ppo_kl']).toBe(0);
      expect(st.metrics['rl/pg_clipfrac']).toBe(0);
    }
    const ck = await a.checkpoints!.write({ note: 'test' });
    const files = ck.files as ReturnType<typeof readCheckpointDir>;
    const adapterConfig = JSON.parse(new TextDecoder().decode(files['adapter_config.json']));
    expect(adapterConfig.lora_dropout).toBe(0.2);
    const third = await a.next();
    const b = trainerOf(o, context);
    b.checkpoints!.resume(ck);
    expect(exact((await b.next()).metrics)).toEqual(exact(third.metrics));
    // Step 1 samples the same batch without dropout (sampling never draws masks), but its update's
    // adapter gradients read the dropped-out inputs.
    const c = trainerOf(GRPO, context);
    const plain = await c.next();
    for (const k of ['reward/mean', 'response/mean_length', 'batch/trainable_tokens'])
      expect(plain.metrics[k], k).toBe(steps[0].metrics[k]);
    expect(plain.metrics['opt/grad_norm']).not.toBe(steps[0].metrics['opt/grad_norm']);
  });
});

describe('a DPO run with LoRA', () => {
  it('samples pairs from the base, trains the adapters, leaves the base as it was', async () => {
    const o: DpoRunOptions = {
      ...(findPreset('dpo-arith')!.defaults as DpoRunOptions),
      pairs: 2,
      samplesPerPrompt: 4,
      steps: 2,
      evalEvery: 0,
      loraRank: 2,
    };
    expect(loraFromOptions(o)).toEqual({ rank: 2, alpha: 2, dropout: 0, targetModules: ['all-linear'] });
    const run = new DpoRun(wasm, o, base);
    const s = await run.next();
    expect(Number.isFinite(s.metrics['loss/dpo'])).toBe(true);
    const w = await run.model.getWeights();
    for (const [name, t] of base.weights) expect(w.get(name), name).toEqual(t);
    expect([...(await run.model.getAdapters()).values()].some((t) => t.some((x) => x !== 0))).toBe(true);
  });
});
