import { describe, expect, it } from 'vitest';
import type { RunOptions } from '../contract/options';
import { completeRunOptions, withPresetDefaults } from './config-import';
import { PRESETS, findPreset } from './table';

const defaults = (name: RunOptions['preset']) =>
  structuredClone(findPreset(name)!.defaults) as unknown as Record<string, unknown>;
/** The completed options, which must be valid. */
const complete = (config: unknown) => {
  const r = completeRunOptions(config);
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('; '));
  expect(r.problems.map((p) => p.message)).toEqual([]);
  return r.options as unknown as Record<string, unknown>;
};
const messages = (config: unknown) => {
  const r = completeRunOptions(config);
  return { ok: r.ok, messages: r.problems.map((p) => p.message) };
};

describe('completeRunOptions: a config JSON read onto its preset’s defaults', () => {
  it('leaves every preset’s whole "Config as JSON" as it is', () => {
    for (const p of PRESETS) expect(complete(defaults(p.name)), p.name).toEqual(defaults(p.name));
  });

  it('fills the options a partial config leaves out from the preset’s defaults (issue 27)', () => {
    expect(complete({ preset: 'grpo-arith', steps: 7 })).toEqual({ ...defaults('grpo-arith'), steps: 7 });
    expect(complete({ preset: 'grpo-calc', maxTurns: 3 })).toEqual({ ...defaults('grpo-calc'), maxTurns: 3 });
    expect(complete({ preset: 'dpo-arith' })).toEqual(defaults('dpo-arith'));
    // The table's own defaults are not changed by a merge.
    expect(findPreset('grpo-arith')!.defaults.steps).toBe(150);
  });

  it('empties an option the preset sets when the config gives null; a required one is then named as missing', () => {
    const { filterGroups: _f, ...noFilter } = defaults('grpo-calc');
    expect(complete({ preset: 'grpo-calc', filterGroups: null })).toEqual(noFilter);
    expect(messages({ preset: 'grpo-calc', steps: null }).messages.join()).toMatch(/Steps \(steps\)/);
  });

  it('merges nested objects key by key while their variant stays', () => {
    const o = complete({
      preset: 'grpo-arith',
      policyLoss: { clipHigh: 0.28 },
      kl: { compat: 'trl' },
      rejection: { token_k1: 2 },
    });
    expect(o.policyLoss).toEqual({ name: 'ppo', clipHigh: 0.28 });
    expect(o.kl).toEqual({ estimator: 'k3', compat: 'trl' });
    expect(o.rejection).toEqual({ token_k1: 2 });
    expect(complete({ preset: 'dpo-arith', loss: { labelSmoothing: 0.1 } }).loss).toEqual({
      type: 'sigmoid',
      labelSmoothing: 0.1,
    });
  });

  it('takes a changed variant’s given options only, and its required ones from their initial values', () => {
    // dpo-arith's default loss is {type: sigmoid, labelSmoothing: 0}: ipo has no label smoothing,
    // robust has its own (a narrower range): neither takes sigmoid's.
    expect(complete({ preset: 'dpo-arith', loss: { type: 'ipo' } }).loss).toEqual({ type: 'ipo' });
    expect(complete({ preset: 'dpo-arith', loss: { type: 'robust' } }).loss).toEqual({ type: 'robust' });
    const o = complete({
      preset: 'grpo-arith',
      policyLoss: { name: 'gspo', logRatioCap: 5 },
      aggregation: { mode: 'dr_grpo', maxCompletionLength: 16 },
      advantage: { estimator: 'rloo' },
      importance: { kind: 'band', high: 3 },
    });
    expect(o.policyLoss).toEqual({ name: 'gspo', logRatioCap: 5 });
    expect(o.aggregation).toEqual({ mode: 'dr_grpo', maxCompletionLength: 16 });
    expect(o.advantage).toEqual({ estimator: 'rloo', normalize: false });
    expect(o.importance).toEqual({ kind: 'band', level: 'token', low: 0.5, high: 3, batchNormalize: false });
    expect(complete({ preset: 'ppo-arith', importance: { kind: 'tis' } }).importance).toEqual({
      kind: 'tis',
      level: 'token',
      cap: 2,
      batchNormalize: false,
    });
    expect(complete({ preset: 'grpo-arith', policyLoss: { name: 'reinforce_kl' } }).policyLoss).toEqual({
      name: 'reinforce_kl',
      klApprox: false,
    });
    // Back from a variant with options to the default's: only what is given.
    expect(
      complete({ ...defaults('grpo-arith'), importance: { kind: 'off' }, policyLoss: { name: 'ppo' } }).importance,
    ).toEqual({ kind: 'off' });
  });

  it('names a bad value as the form names it, with the rest filled in', () => {
    expect(messages({ preset: 'grpo-arith', steps: 'ten' })).toEqual({
      ok: true,
      messages: ["Steps (steps) must be an integer in 1..5000, got 'ten'"],
    });
    expect(messages({ preset: 'grpo-arith', policyLoss: { name: 'gspo', clipHigh: -1 } })).toEqual({
      ok: true,
      messages: ['Clip ε high (policyLoss.clipHigh) must be a number in [0, 10], got -1'],
    });
    expect(messages({ preset: 'grpo-arith', miniBatches: 64, prompts: 2, group: 2 }).messages).toEqual([
      'Mini-batches (miniBatches) must be at most ⌈Prompts per step (prompts) × Group size (group) / 2⌉ = ' +
        '2 (the packed rows; one row per mini-batch at least), got 64',
    ]);
  });

  it('keeps an unknown option (also one of the old variant) for the check to refuse', () => {
    expect(messages({ preset: 'grpo-arith', steps: 7, lrr: 0.1 }).messages).toEqual([
      'lrr is not an option of grpo-arith',
    ]);
    expect(messages({ preset: 'grpo-arith', policyLoss: { name: 'gspo', dualClip: 3 } }).messages).toEqual([
      'Dual clip c (policyLoss.dualClip) is not an option of grpo-arith; it applies only when Policy loss (policyLoss.name) is ppo',
    ]);
    expect(messages({ preset: 'ppo-arith', advantage: { estimator: 'grpo' } }).messages).toEqual([
      'advantage is not an option of ppo-arith',
    ]);
    // JSON.parse makes `__proto__` an own key: kept as one (and refused), never the merged object's prototype.
    const proto = JSON.parse('{"preset": "grpo-arith", "__proto__": {"steps": 9}}') as unknown;
    const r = completeRunOptions(proto);
    expect(r.ok && (r.options as { steps: number }).steps).toBe(150);
    expect(r.problems.map((p) => p.message)).toEqual(['__proto__ is not an option of grpo-arith']);
  });

  it('refuses a config that names no preset, with the schema’s problem', () => {
    expect(messages({ preset: 'sac-arith', steps: 7 })).toEqual({
      ok: false,
      messages: [
        'preset must be one of sft-arith, grpo-arith, grpo-calc, grpo-guess, grpo-code, grpo-env, ppo-arith, ' +
          "ppo-calc, ppo-env, dpo-arith, flowgrpo-2d, got 'sac-arith'",
      ],
    });
    for (const bad of [{ steps: 7 }, null, 5, [{ preset: 'grpo-arith' }]]) {
      expect(withPresetDefaults(bad)).toBeNull();
      const r = messages(bad);
      expect(r.ok).toBe(false);
      expect(r.messages.length).toBeGreaterThan(0);
    }
  });
});
