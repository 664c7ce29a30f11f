import { describe, expect, it } from 'vitest';
import { dpoLoss, type DpoInput, type DpoLossType } from './dpo';
import { expectClose } from '../../kernels/testing/expect-close';
import { centralDiff } from './testing/finite-diff';

const logSigmoid = (x: number) => -Math.log1p(Math.exp(-x));

// One pair, width 3, dew layout: row 0 chosen, row 1 rejected; column 0 is the prompt.
// chosen: s − s_ref = (−1 − 1) − (−1.5 − 1.5) = 1; rejected: −2 − (−1) = −1; Δ = 2.
const one: DpoInput = {
  pairs: 1,
  width: 3,
  logp: [Number.NaN, -1, -1, 0, -2, 0],
  refLogp: [0, -1.5, -1.5, 0, -1, 0],
  mask: [0, 1, 1, 0, 1, 0],
};

describe('dpoLoss, hand values (β = 0.1, Δ = 2)', () => {
  it('sigmoid: −log σ(βΔ), with TRL’s reward metrics', () => {
    const { loss, dlogp, metrics } = dpoLoss(one);
    expect(loss).toBeCloseTo(-logSigmoid(0.2), 14);
    const g = -0.1 * (1 / (1 + Math.exp(0.2))); // −β σ(−βΔ)
    [0, g, g, 0, -g, 0].forEach((e, i) => expect(dlogp[i], `index ${i}`).toBeCloseTo(e, 15));
    expect(metrics['rewards/chosen']).toBeCloseTo(0.1, 14);
    expect(metrics['rewards/rejected']).toBeCloseTo(-0.1, 14);
    expect(metrics['rewards/margins']).toBeCloseTo(0.2, 14);
    expect(metrics['rewards/accuracies']).toBe(1);
    expect(metrics['logps/chosen']).toBe(-2);
    expect(metrics['logps/rejected']).toBe(-2);
    expect(Array.from(dpoLoss(one).implicitRewards).map((r) => +r.toFixed(14))).toEqual([0.1, -0.1]); // per row: β(s − s_ref)
  });

  it('sigmoid with label smoothing is cDPO', () => {
    expect(dpoLoss({ ...one, labelSmoothing: 0.1 }).loss).toBeCloseTo(
      -0.9 * logSigmoid(0.2) - 0.1 * logSigmoid(-0.2),
      14,
    );
  });

  it('robust', () => {
    const expected = (-0.9 * logSigmoid(0.2) + 0.1 * logSigmoid(-0.2)) / 0.8;
    expect(dpoLoss({ ...one, lossType: 'robust', labelSmoothing: 0.1 }).loss).toBeCloseTo(expected, 14);
  });

  it('hinge: relu(1 − βΔ), and zero gradient past the hinge', () => {
    expect(dpoLoss({ ...one, lossType: 'hinge' }).loss).toBeCloseTo(0.8, 14);
    const past = dpoLoss({ ...one, lossType: 'hinge', beta: 1 });
    expect(past.loss).toBe(0);
    expect(Array.from(past.dlogp).every((g) => g === 0)).toBe(true);
  });

  it('ipo: length-normalised margin, (1/2 − (−1) − 1/(2β))²', () => {
    const { loss, dlogp } = dpoLoss({ ...one, lossType: 'ipo' });
    expect(loss).toBeCloseTo((1.5 - 5) ** 2, 12);
    const d = 2 * (1.5 - 5);
    expect(dlogp[1]).toBeCloseTo(d / 2, 12);
    expect(dlogp[4]).toBeCloseTo(-d, 12);
  });
});

describe('dpoLoss, limiting cases', () => {
  it('sigmoid at equal policy and reference log-probs gives log 2', () => {
    const { loss, dlogp, metrics } = dpoLoss({ ...one, logp: one.refLogp });
    expect(loss).toBeCloseTo(Math.LN2, 15);
    expect(dlogp[1]).toBeCloseTo(-0.05, 15);
    expect(dlogp[4]).toBeCloseTo(0.05, 15);
    expect(metrics['rewards/accuracies']).toBe(0);
  });
  it('robust with ε = 0 equals sigmoid', () => {
    const a = dpoLoss({ ...one, lossType: 'robust' });
    const b = dpoLoss(one);
    expect(a.loss).toBeCloseTo(b.loss, 15);
    expect(Array.from(a.dlogp)).toEqual(Array.from(b.dlogp));
  });
});

// Two pairs, width 4, deterministic values.
const B = 2;
const W = 4;
const logp = Array.from({ length: 2 * B * W }, (_, i) => -0.3 - 0.7 * Math.abs(Math.sin(1.3 * i + 0.2)));
const refLogp = Array.from({ length: 2 * B * W }, (_, i) => -0.4 - 0.6 * Math.abs(Math.cos(0.9 * i)));
const mask = [0, 1, 1, 1, 0, 1, 1, 0, 0, 0, 1, 1, 0, 1, 0, 0];

describe('dpoLoss gradients against central finite differences', () => {
  const cases: [DpoLossType, number][] = [
    ['sigmoid', 0],
    ['sigmoid', 0.2],
    ['robust', 0.3],
    ['hinge', 0],
    ['ipo', 0],
  ];
  for (const layout of ['pairs', 'halves'] as const) {
    it.each(cases)(`%s (ε = %s), layout ${layout}`, (lossType, labelSmoothing) => {
      const opts = { pairs: B, width: W, refLogp, mask, lossType, labelSmoothing, layout, beta: 0.7 };
      const { dlogp } = dpoLoss({ ...opts, logp });
      const fd = centralDiff((x) => dpoLoss({ ...opts, logp: x }).loss, logp);
      for (let i = 0; i < fd.length; i++) expect(dlogp[i], `index ${i}`).toBeCloseTo(fd[i], 8);
      expect(dlogp.some((g) => Math.abs(g) > 1e-3)).toBe(true);
    });
  }

  it("'halves' is 'pairs' with the rows reordered", () => {
    const rowsOf = (a: number[]) => [0, 1, 2, 3].map((r) => a.slice(r * W, (r + 1) * W));
    const toHalves = (a: number[]) => {
      const r = rowsOf(a);
      return [...r[0], ...r[2], ...r[1], ...r[3]]; // pairs rows (c0, r0, c1, r1) → (c0, c1, r0, r1)
    };
    const p = dpoLoss({ pairs: B, width: W, logp, refLogp, mask });
    const h = dpoLoss({
      pairs: B,
      width: W,
      logp: toHalves(logp),
      refLogp: toHalves(refLogp),
      mask: toHalves(mask),
      layout: 'halves',
    });
    expect(h.loss).toBeCloseTo(p.loss, 15);
    expect(Array.from(h.dlogp)).toEqual(toHalves(Array.from(p.dlogp)));
    expect(h.metrics).toEqual(p.metrics);
    expect(Array.from(h.implicitRewards)).toEqual([
      p.implicitRewards[0],
      p.implicitRewards[2],
      p.implicitRewards[1],
      p.implicitRewards[3],
    ]);
  });
});

describe('dpoLoss per-pair losses', () => {
  it.each(['sigmoid', 'ipo', 'hinge', 'robust'] as const)(
    '%s: one per pair, each the loss of that pair alone, averaging to the reported loss',
    (lossType) => {
      const labelSmoothing = lossType === 'robust' ? 0.2 : 0;
      const opts = { pairs: B, width: W, refLogp, mask, lossType, labelSmoothing, beta: 0.7 };
      const out = dpoLoss({ ...opts, logp });
      expect(out.pairLosses).toHaveLength(B);
      expect((out.pairLosses[0] + out.pairLosses[1]) / 2).toBeCloseTo(out.loss, 14);
      expect(out.pairLosses[0]).not.toBeCloseTo(out.pairLosses[1], 6); // the two pairs differ, so a mean copied into both fails
      for (let i = 0; i < B; i++) {
        const rows = (a: number[]) => a.slice(2 * i * W, (2 * i + 2) * W);
        expect(out.pairLosses[i]).toBeCloseTo(
          dpoLoss({ ...opts, pairs: 1, logp: rows(logp), refLogp: rows(refLogp), mask: rows(mask) }).loss,
          14,
        );
      }
    },
  );

  it('hand value: sigmoid at Δ = 2 is −log σ(0.2)', () => {
    expect(dpoLoss(one).pairLosses[0]).toBeCloseTo(-logSigmoid(0.2), 14);
  });
});

describe('dpoLoss refusals', () => {
  it('refuses bad sizes, options and values', () => {
    expect(() => dpoLoss({ ...one, pairs: 0 })).toThrow(/pairs/);
    expect(() => dpoLoss({ ...one, pairs: 2 })).toThrow(/logp.*4 × 3/);
    expect(() => dpoLoss({ ...one, beta: 0 })).toThrow(/beta/);
    expect(() => dpoLoss({ ...one, lossType: 'kto' as never })).toThrow(/lossType/);
    expect(() => dpoLoss({ ...one, lossType: 'ipo', labelSmoothing: 0.1 })).toThrow(/labelSmoothing/);
    expect(() => dpoLoss({ ...one, lossType: 'robust', labelSmoothing: 0.5 })).toThrow(/labelSmoothing/);
    expect(() => dpoLoss({ ...one, mask: [0, 1, 2, 0, 1, 0] })).toThrow(/expected 0 or 1/);
    expect(() => dpoLoss({ ...one, refLogp: [0, Number.NaN, 0, 0, 0, 0] })).toThrow(/refLogp\[0, 1\]/);
  });
});

describe('dpoLoss per-pair intermediates: rewards, margins, logits', () => {
  // Two pairs, width 2, dew layout (rows c0, r0, c1, r1), β = 0.5.
  //   pair 0: chosen  s − s_ref = (−1 − 1) − (−1.5 − 1.5) = 1;  rejected (one token) −2 − (−1) = −1;  Δ0 = 2
  //   pair 1: chosen (one token) −3 − (−1) = −2;               rejected 0 − 0 = 0;                   Δ1 = −2
  //   rewards β(s − s_ref): chosen [0.5, −1], rejected [−0.5, 0]; margins βΔ = [1, −1]
  //   sigmoid l = −log σ(βΔ): [log(1 + e^−1), log(1 + e)] = [0.3132617, 1.3132617]
  //   ipo logits Δ_ipo = (s_c − s_ref_c)/n_c − (s_r − s_ref_r)/n_r: [1/2 − (−1)/1, −2/1 − 0/2] = [1.5, −2]
  const two: DpoInput = {
    pairs: 2,
    width: 2,
    logp: [-1, -1, -2, 0, -3, 0, -1, -1],
    refLogp: [-1.5, -1.5, -1, 0, -1, 0, -1, -1],
    mask: [1, 1, 1, 0, 1, 0, 1, 1],
    beta: 0.5,
  };
  it('sigmoid: per pair each side’s implicit reward, the margin, Δ and the loss', () => {
    const out = dpoLoss(two);
    expectClose(out.chosenRewards, [0.5, -1], { atol: 1e-15, rtol: 0, label: 'chosenRewards' });
    expectClose(out.rejectedRewards, [-0.5, 0], { atol: 1e-15, rtol: 0, label: 'rejectedRewards' });
    expectClose(out.margins, [1, -1], { atol: 1e-15, rtol: 0, label: 'margins' });
    expectClose(out.logits, [2, -2], { atol: 1e-15, rtol: 0, label: 'logits' });
    expectClose(out.pairLosses, [Math.log1p(Math.exp(-1)), Math.log1p(Math.E)], {
      atol: 1e-15,
      rtol: 1e-14,
      label: 'pairLosses',
    });
    // the batch metrics are the means of the per-pair values
    expect(out.metrics['rewards/margins']).toBeCloseTo(0, 15);
    expect(out.metrics['rewards/chosen']).toBeCloseTo(-0.25, 15);
    expect(out.metrics['rewards/accuracies']).toBe(0.5);
    expect(Array.from(out.implicitRewards)).toEqual([
      out.chosenRewards[0],
      out.rejectedRewards[0],
      out.chosenRewards[1],
      out.rejectedRewards[1],
    ]);
  });
  it('ipo: the logits are the length-normalised margins the loss reads', () => {
    const out = dpoLoss({ ...two, lossType: 'ipo' });
    expectClose(out.logits, [1.5, -2], { atol: 1e-15, rtol: 0, label: 'ipo logits' });
    expectClose(out.pairLosses, [(1.5 - 1) ** 2, (-2 - 1) ** 2], { atol: 1e-14, rtol: 0, label: 'ipo pairLosses' }); // 1/(2β) = 1
    expectClose(out.margins, [1, -1], { atol: 1e-15, rtol: 0, label: 'margins are βΔ whatever the variant' });
  });
  it('halves layout: the same per-pair values', () => {
    const rows = (a: ArrayLike<number>) => [0, 1, 2, 3].map((r) => Array.from(a).slice(r * 2, r * 2 + 2));
    const toHalves = (a: ArrayLike<number>) => {
      const r = rows(a);
      return [...r[0], ...r[2], ...r[1], ...r[3]];
    };
    const h = dpoLoss({
      ...two,
      logp: toHalves(two.logp),
      refLogp: toHalves(two.refLogp),
      mask: toHalves(two.mask),
      layout: 'halves',
    });
    expectClose(h.margins, [1, -1], { atol: 1e-15, rtol: 0, label: 'halves margins' });
    expectClose(h.chosenRewards, [0.5, -1], { atol: 1e-15, rtol: 0, label: 'halves chosenRewards' });
  });
});
