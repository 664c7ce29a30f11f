import { describe, expect, it } from 'vitest';
import type { GrpoRunOptions } from '../contract/options';
import { LAB_CORRECTIONS, labCorrections, labRow, labRunOptions, labTable, parseInjection } from './mismatch-lab';
import { checkRunOptions, findPreset } from './table';

const base = findPreset('grpo-arith')!.defaults as GrpoRunOptions;

describe('the mismatch lab', () => {
  it('reads each injection, and refuses a wrong one naming the forms it takes', () => {
    expect(parseInjection('bf16')).toMatchObject({ ok: true, injection: { patch: { samplerBf16: true } } });
    expect(parseInjection('stale:2')).toMatchObject({
      ok: true,
      injection: { patch: { staleness: 2 }, title: 'sampler 2 versions stale' },
    });
    expect(parseInjection('temperature:1.5')).toMatchObject({
      ok: true,
      injection: { patch: { samplerTemperature: 1.5 } },
    });
    for (const [text, why] of [
      ['stale:0', 'needs K, an integer in 1..8'],
      ['stale:1.5', 'needs K, an integer in 1..8'],
      ['temperature:0', 'needs T, a number in (0, 10]'],
      ['temperature', 'needs T, a number in (0, 10]'],
      ['bf16:1', 'takes no value'],
      ['noise:1', "names no injection ('noise')"],
    ])
      expect(parseInjection(text)).toEqual({
        ok: false,
        message: `injection "${text}" ${why}; expected one of bf16, stale:K (K in 1..8), temperature:T (T in (0, 10])`,
      });
  });

  it('every correction under every injection is a valid grpo-arith run with the same seed', () => {
    for (const text of ['bf16', 'stale:2', 'temperature:1.5']) {
      const p = parseInjection(text);
      if (!p.ok) throw new Error(p.message);
      for (const c of LAB_CORRECTIONS) {
        const o = labRunOptions(base, p.injection, c);
        expect([text, c.name, checkRunOptions(o)]).toEqual([text, c.name, []]);
        expect(o.seed).toBe(base.seed);
        expect(o.importance).toEqual(c.patch.importance);
      }
    }
    // TRL's modes are the existing options at its cap 3: truncate a TIS cap, mask a band [0, 3].
    const trl = Object.fromEntries(LAB_CORRECTIONS.map((c) => [c.name, c.patch.importance]));
    expect(trl['trl-sequence-mask']).toEqual({
      kind: 'band',
      level: 'sequence',
      low: 0,
      high: 3,
      batchNormalize: false,
    });
    expect(trl['trl-token-truncate']).toEqual({ kind: 'tis', level: 'token', cap: 3, batchNormalize: false });
  });

  it('picks corrections by name, and names the allowed ones for an unknown one', () => {
    expect(labCorrections(['tis', 'none'])).toMatchObject({
      ok: true,
      corrections: [{ name: 'none' }, { name: 'tis' }],
    });
    const bad = labCorrections(['tis', 'ppo']);
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.message).toMatch(/^no correction 'ppo'; allowed: none, tis, icepop, token-mask,/);
  });

  it("a row is the last window's mean reward, the steps' mean kl, ESS and share, and the final accuracy", () => {
    const steps = [0.1, 0.2, 0.3, 0.4].map((r, i) => ({
      'reward/mean': r,
      'mismatch/kl': 0.01 * (i + 1),
      'mismatch/ess': 0.9,
      'mismatch/rollout_rs_masked_fraction': i === 0 ? 0.2 : 0,
    }));
    const mask = LAB_CORRECTIONS.find((c) => c.name === 'token-mask')!;
    const row = labRow(mask, steps, 0.5, 2);
    expect(row).toEqual({
      correction: 'token-mask',
      title: mask.title,
      reward: expect.closeTo(0.35, 12),
      accuracy: 0.5,
      kl: expect.closeTo(0.025, 12),
      ess: expect.closeTo(0.9, 12),
      share: expect.closeTo(0.05, 12),
      shareWhat: 'masked',
    });
    expect(labRow(LAB_CORRECTIONS[0], steps, 0.5).share).toBeNull();
    expect(labTable([row], 2).split('\n')).toEqual([
      '| correction | reward (last 2 steps) | held-out accuracy | mismatch/kl | ESS | masked or capped |',
      '|---|---|---|---|---|---|',
      `| ${mask.title} | 0.35 | 0.5 | 0.025 | 0.9 | 5% masked |`,
    ]);
  });
});
