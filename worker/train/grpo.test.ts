import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { exportCheckpoint, importCheckpoint } from '../model/checkpoint';
import type { GrpoConfig } from './grpo';
import { GRPO_ARITH, GrpoRun } from './grpo';
import { SFT_ARITH, SftRun } from './sft';

async function tinyBase() {
  const sft = new SftRun(createCpuOps(), { ...SFT_ARITH, model: 'tiny', steps: 3, examples: 8, rows: 4, lr: 1e-2, warmup: 1, evalEvery: 0, evalN: 1 });
  for (let i = 0; i < 3; i++) await sft.next();
  return importCheckpoint(await exportCheckpoint(sft.model, sft.tok, { note: 'test base' }));
}

const CONFIG: GrpoConfig = { ...GRPO_ARITH, prompts: 3, group: 4, maxNew: 8, evalN: 4, lr: 1e-2, maskZeroAdvantage: false };

describe('GrpoRun (CPU, tiny model)', () => {
  it('samples P×G sessions, packs them into a fixed batch, and steps on a dlogp that lives on sampled ids only', async () => {
    const base = await tinyBase();
    const run = new GrpoRun(createCpuOps(), CONFIG, base);
    const s = await run.next();
    expect(s.sessions).toHaveLength(12);
    expect(new Set(s.sessions.map((x) => x.group)).size).toBe(3);
    expect(s.sessions.every((x) => x.calls[0].version === 0 && (x.reward === 0 || x.reward === 1))).toBe(true);
    expect(s.packed.rows).toBe(6);
    for (let i = 0; i < s.dlogp.length; i++) if (!s.packed.responseMask[i]) expect(s.dlogp[i]).toBe(0);
    expect(Number.isFinite(s.metrics['loss/total'])).toBe(true);
    expect(s.metrics['rl/ppo_kl']).toBeCloseTo(0, 5); // one optimizer step per batch: ratio ≡ 1 up to float32
    const weightsBefore = base.weights.get('model.layers.0.mlp.down_proj.weight')!;
    const after = (await run.model.getWeights()).get('model.layers.0.mlp.down_proj.weight')!;
    expect(after.some((w, i) => w !== weightsBefore[i])).toBe(s.metrics['reward/frac_reward_zero_std'] < 1);
  });

  it('is deterministic: same config and seed, same completions and metrics', async () => {
    const base = await tinyBase();
    const a = await new GrpoRun(createCpuOps(), CONFIG, base).next();
    const b = await new GrpoRun(createCpuOps(), CONFIG, base).next();
    expect(a.generated.map((g) => [...g.sampledIds])).toEqual(b.generated.map((g) => [...g.sampledIds]));
    expect(a.metrics['loss/total']).toBe(b.metrics['loss/total']);
  });

  it('with beta > 0 adds the KL to a frozen reference (zero at the first step)', async () => {
    const base = await tinyBase();
    const s = await new GrpoRun(createCpuOps(), { ...CONFIG, beta: 0.05 }, base).next();
    expect(s.metrics['rl/kl']).toBeCloseTo(0, 5);
  });
});
