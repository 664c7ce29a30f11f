import { describe, expect, it } from 'vitest';
import { flatPanels } from './flat-panels';

// The fields grpo-arith's defaults hold (worker/presets/table.ts), and ppo-arith's 2 × 2 updates.
const grpo = { epochs: 1, miniBatches: 1, beta: 0, temperature: 1, topK: 0, topP: 1 };
const ppo = { ...grpo, epochs: 2, miniBatches: 2 };

describe('flatPanels', () => {
  it("collapses grpo-arith's clip, KL, mismatch and ESS panels, each with its reason", () => {
    const flat = flatPanels(grpo, 'grpo');
    expect(Object.keys(flat).sort()).toEqual(['clip', 'ess', 'kl', 'mismatch-kl']);
    expect(flat.clip).toBe(
      'flat: this run does not clip; one update per batch (1 epoch × 1 mini-batch) trains on the policy that sampled it, ' +
        'so the ratio is 1, never outside the clip range.',
    );
    expect(flat.kl).toMatch(/^flat: KL β = 0 \(no reference policy\), and one update per batch/);
    expect(flat['mismatch-kl']).toMatch(
      /logits \/ T, no top-k, no top-p\), so the two differ by float rounding only\.$/,
    );
    expect(flat.ess).toMatch(/so every importance weight is 1\.$/);
  });

  it('draws clip and KL when a batch takes several updates (PPO 2 × 2, or GRPO with 2 epochs)', () => {
    expect(Object.keys(flatPanels(ppo, 'ppo')).sort()).toEqual(['ess', 'mismatch-kl']);
    expect(flatPanels({ ...grpo, epochs: 2 }, 'grpo').clip).toBeUndefined();
    expect(flatPanels({ ...grpo, miniBatches: 4 }, 'grpo').kl).toBeUndefined();
    // One update, PPO family: the critic scored the same weights, the ratio is 1 as well.
    expect(flatPanels({ ...ppo, epochs: 1, miniBatches: 1 }, 'ppo').clip).toBeDefined();
  });

  it('draws the KL panel when a reference policy is kept (β > 0), one update or not', () => {
    expect(flatPanels({ ...grpo, beta: 0.04 }, 'grpo').kl).toBeUndefined();
    expect(flatPanels({ ...grpo, beta: 0.04 }, 'grpo').clip).toBeDefined();
  });

  it('draws mismatch and ESS once the sampler filters (top-k, top-p); a temperature alone keeps them flat', () => {
    for (const change of [{ topK: 3 }, { topP: 0.9 }]) {
      const flat = flatPanels({ ...grpo, ...change }, 'grpo');
      expect(flat['mismatch-kl'], JSON.stringify(change)).toBeUndefined();
      expect(flat.ess, JSON.stringify(change)).toBeUndefined();
    }
    // The trainer scores logits / T as the sampler draws them (worker/train/update.ts updateOnBatch).
    expect(flatPanels({ ...grpo, temperature: 0.8 }, 'grpo')['mismatch-kl']).toBeDefined();
  });

  it('collapses nothing for other families, unknown runs, or options without the fields', () => {
    expect(flatPanels(grpo, 'sft')).toEqual({});
    expect(flatPanels(grpo, 'dpo')).toEqual({});
    expect(flatPanels({ ...grpo, groups: 8 }, 'flow')).toEqual({});
    expect(flatPanels(grpo, undefined)).toEqual({});
    expect(flatPanels(null, 'grpo')).toEqual({});
    expect(flatPanels({ preset: 'verl-import', steps: 3 }, 'grpo')).toEqual({});
    expect(flatPanels({ epochs: '1', miniBatches: 1, temperature: '1', topK: 0, topP: 1 }, 'grpo')).toEqual({});
  });
});
