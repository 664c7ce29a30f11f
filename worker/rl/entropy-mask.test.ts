import { describe, expect, it } from 'vitest';
import { highEntropyMask, linearQuantile } from './entropy-mask';

// A 2×3 layout; [0, 2] is off the mask and its entropy 9 must not move the quantile.
const base = { rows: 2, width: 3, entropy: [0.5, 2.0, 9, 1.0, 3.0, 0.1], mask: [1, 1, 0, 1, 1, 1] };

describe('highEntropyMask (TRL get_high_entropy_mask)', () => {
  it("τ is torch.quantile's linear interpolation at 1 − ρ over the trainable tokens; tokens at or above it are kept", () => {
    // Sorted trainable entropies 0.1, 0.5, 1, 2, 3. ρ = 0.5: position 2 → τ = 1 (a tie at τ is kept).
    const half = highEntropyMask({ ...base, quantile: 0.5 });
    expect(half.threshold).toBe(1);
    expect(Array.from(half.keep)).toEqual([0, 1, 0, 1, 1, 0]);
    expect(half.metrics['rl/entropy_mask_kept_fraction']).toBe(3 / 5);
    // ρ = 0.2 (the paper's): position 3.2 → τ = 2 + 0.2·(3 − 2) = 2.2; only the 3 stays.
    const top = highEntropyMask({ ...base, quantile: 0.2 });
    expect(top.threshold).toBeCloseTo(2.2, 14);
    expect(Array.from(top.keep)).toEqual([0, 0, 0, 0, 1, 0]);
    expect(top.metrics['rl/entropy_mask_threshold']).toBeCloseTo(2.2, 14);
  });

  it('ρ = 1 keeps every trainable token, ρ = 0 only the maximum; nothing trainable keeps nothing', () => {
    expect(Array.from(highEntropyMask({ ...base, quantile: 1 }).keep)).toEqual([1, 1, 0, 1, 1, 1]);
    expect(Array.from(highEntropyMask({ ...base, quantile: 0 }).keep)).toEqual([0, 0, 0, 0, 1, 0]);
    const none = highEntropyMask({ ...base, mask: [0, 0, 0, 0, 0, 0], quantile: 0.2 });
    expect(Array.from(none.keep)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(none.metrics['rl/entropy_mask_kept_fraction']).toBe(0);
  });

  it('linearQuantile matches torch.quantile on hand values', () => {
    expect(linearQuantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(linearQuantile([1, 2, 3, 4], 1)).toBe(4);
    expect(linearQuantile([1, 2, 3, 4], 0)).toBe(1);
    expect(linearQuantile([7], 0.3)).toBe(7);
  });

  it('refuses a quantile outside [0, 1] and a non-finite trainable entropy, naming them', () => {
    for (const bad of [-0.1, 1.5, Number.NaN])
      expect(() => highEntropyMask({ ...base, quantile: bad })).toThrow(/quantile = .*: expected a number in \[0, 1\]/);
    expect(() => highEntropyMask({ ...base, entropy: [0.5, NaN, 0, 1, 3, 0.1], quantile: 0.2 })).toThrow(
      /entropy\[0, 1\] = NaN/,
    );
  });
});
