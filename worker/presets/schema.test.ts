import { describe, expect, it } from 'vitest';
import type { FieldSpec, GrpoRunOptions, RunOptions } from '../contract/options';
import {
  AGGREGATION_MODES,
  KL_ESTIMATORS,
  OUTCOME_ESTIMATORS,
  POLICY_LOSS_NAMES,
  REJECTION_OPTIONS,
  TOKEN_ESTIMATORS,
} from '../rl/index';
import { checkRunOptions, findPreset, optionFields, PRESETS, runOptionsSchema } from './table';
import { isActive, valueAt } from './fields';

const defaults = (name: RunOptions['preset']) =>
  structuredClone(PRESETS.find((p) => p.name === name)!.defaults) as RunOptions;
const GRPO = defaults('grpo-arith') as GrpoRunOptions;
const messages = (o: unknown) => checkRunOptions(o).map((p) => p.message);

/** A copy of `o` with `path` set (undefined: removed). */
function setAt(o: unknown, path: string, value: unknown): RunOptions {
  const copy = structuredClone(o) as Record<string, unknown>;
  const keys = path.split('.');
  let at = copy;
  for (const k of keys.slice(0, -1)) at = (at[k] ??= {}) as Record<string, unknown>;
  if (value === undefined) delete at[keys.at(-1)!];
  else at[keys.at(-1)!] = value;
  return copy as unknown as RunOptions;
}

/** Preset defaults switched to variant `k` of those where `field` applies, with that variant's required options filled in. */
function activate(field: FieldSpec, fields: FieldSpec[], preset: RunOptions['preset'], k: number): RunOptions {
  let o = defaults(preset);
  for (const c of field.when ?? []) {
    o = setAt(o, c.path, c === field.when!.at(-1) ? c.values[k] : c.values[0]);
    const prefix = c.path.slice(0, c.path.lastIndexOf('.') + 1);
    // Leave only the discriminator of that object, then fill what the new variant requires.
    for (const k of Object.keys(valueAt(o, prefix.slice(0, -1)) as object))
      if (`${prefix}${k}` !== c.path) o = setAt(o, `${prefix}${k}`, undefined);
  }
  for (const f of fields)
    if (isActive(f, o) && !f.optional && valueAt(o, f.path) === undefined)
      o = setAt(o, f.path, f.initial ?? f.values?.[0]);
  expect(checkRunOptions(o), `${preset}: the variant of ${field.path}`).toEqual([]);
  return o;
}

describe('run options schema', () => {
  it('accepts every preset as shipped', () => {
    for (const p of PRESETS) {
      expect(checkRunOptions(p.defaults), p.name).toEqual([]);
      expect(runOptionsSchema.safeParse(p.defaults).success).toBe(true);
    }
  });

  it('names the field by its label and path, and its range, for each kind of bad number', () => {
    expect(messages({ ...GRPO, steps: 0 })).toEqual(['Steps (steps) must be an integer in 1..5000, got 0']);
    expect(messages({ ...GRPO, group: 2.5 })).toEqual(['Group size (group) must be an integer in 2..64, got 2.5']);
    expect(messages({ ...GRPO, temperature: 0 })).toEqual([
      'Temperature (temperature) must be a number in (0, 10], got 0',
    ]);
    expect(messages({ ...GRPO, beta1: 1 })).toEqual(['Adam β1 (beta1) must be a number in [0, 1), got 1']);
    expect(messages({ ...GRPO, lr: Number.NaN })).toEqual(['Learning rate (lr) must be a number in (0, 0.1], got NaN']);
    expect(messages({ ...GRPO, topP: Infinity })).toEqual(['Top-p (topP) must be a number in (0, 1], got Infinity']);
    expect(messages(setAt(GRPO, 'lr', undefined))).toEqual([
      'Learning rate (lr) must be a number in (0, 0.1], got nothing',
    ]);
    expect(checkRunOptions({ ...GRPO, policyLoss: { name: 'ppo', clipHigh: -1 } })).toEqual([
      { path: 'policyLoss.clipHigh', message: 'Clip ε high (policyLoss.clipHigh) must be a number in [0, 10], got -1' },
    ]);
    expect(messages({ ...GRPO, maskZeroAdvantage: 'yes' })).toEqual([
      "Mask zero-advantage groups (maskZeroAdvantage) must be true or false, got 'yes'",
    ]);
    expect(messages({ ...GRPO, steps: 0, lr: 1 })).toEqual([
      'Steps (steps) must be an integer in 1..5000, got 0',
      'Learning rate (lr) must be a number in (0, 0.1], got 1',
    ]);
  });

  it('names fields as the caller asks (the CLI: by flag), every field of a message alike', () => {
    const flag = (path: string) => `--${path}`;
    expect(checkRunOptions({ ...GRPO, steps: 0 }, flag)).toEqual([
      { path: 'steps', message: '--steps must be an integer in 1..5000, got 0' },
    ]);
    expect(checkRunOptions({ ...GRPO, prompts: 2, group: 3, miniBatches: 4 }, flag).map((p) => p.message)).toEqual([
      '--miniBatches must be at most ⌈--prompts × --group / 2⌉ = 3 (the packed rows; one row per mini-batch at least), got 4',
    ]);
    expect(
      checkRunOptions({ ...GRPO, lrr: 1 }, (path, label) => `${label ?? 'no label'}: ${path}`).map((p) => p.message),
    ).toEqual(['no label: lrr is not an option of grpo-arith']);
  });

  it('lists the allowed values for an unknown one', () => {
    expect(messages({ ...GRPO, aggregation: { mode: 'mean' } })).toEqual([
      "Aggregation (aggregation.mode) must be one of token-mean, token-sum, seq-mean-token-mean, seq-mean-token-sum, session-mean, grpo, seq-mean-token-sum-norm, dr_grpo, got 'mean'",
    ]);
    expect(messages({ ...GRPO, kl: { estimator: 'k4' } })).toEqual([
      "KL estimator (kl.estimator) must be one of k1, abs, k2, k3, k1+, abs+, k2+, k3+, got 'k4'",
    ]);
    expect(messages({ ...GRPO, policyLoss: { name: 'echo' } })).toEqual([
      "Policy loss (policyLoss.name) must be one of ppo, gspo, cispo, reinforce, dppo_tv, dppo_kl, icepop, geo_mean, clip_cov, kl_cov, sapo, dro, vespo, reinforce_kl, got 'echo'",
    ]);
    // A variant narrows a shared option: TRL has no REINFORCE++-baseline.
    expect(messages({ ...GRPO, advantage: { estimator: 'reinforce++-baseline', compat: 'trl' } })).toEqual([
      "Advantage compat (advantage.compat) must be one of verl, rllm, got 'trl'",
    ]);
    expect(messages({ ...defaults('dpo-arith'), loss: { type: 'dpo' } })).toEqual([
      "DPO loss (loss.type) must be one of sigmoid, robust, ipo, hinge, got 'dpo'",
    ]);
    // No field has these paths: the path alone.
    expect(messages({ preset: 'sac-arith' })).toEqual([
      'preset must be one of sft-arith, grpo-arith, grpo-calc, grpo-guess, grpo-code, grpo-env, ppo-arith, ' +
        "ppo-calc, ppo-env, dpo-arith, flowgrpo-2d, got 'sac-arith'",
    ]);
    expect(messages(null)).toEqual(['options must be an object with a preset, got null']);
  });

  it("refuses another variant's option and unknown fields, saying where they apply", () => {
    expect(messages({ ...GRPO, policyLoss: { name: 'gspo', dualClip: 2 } })).toEqual([
      'Dual clip c (policyLoss.dualClip) is not an option of grpo-arith; it applies only when Policy loss (policyLoss.name) is ppo',
    ]);
    expect(messages({ ...defaults('dpo-arith'), loss: { type: 'ipo', labelSmoothing: 0.1 } })).toEqual([
      'Label smoothing (loss.labelSmoothing) is not an option of dpo-arith; it applies only when DPO loss (loss.type) is sigmoid, or DPO loss (loss.type) is robust',
    ]);
    expect(messages({ ...defaults('sft-arith'), prompts: 4 })).toEqual(['prompts is not an option of sft-arith']);
  });

  it('checks options against each other, naming both fields', () => {
    expect(messages({ ...GRPO, prompts: 2, group: 3, miniBatches: 4 })).toEqual([
      'Mini-batches (miniBatches) must be at most ⌈Prompts per step (prompts) × Group size (group) / 2⌉ = 3 (the packed rows; one row per mini-batch at least), got 4',
    ]);
    expect(messages({ ...GRPO, prompts: 2, group: 3, miniBatches: 3 })).toEqual([]);
    expect(
      messages({ ...GRPO, importance: { kind: 'band', level: 'token', low: 3, high: 2, batchNormalize: false } }),
    ).toEqual(['Band low (importance.low) must be at most Band high (importance.high) = 2, got 3']);
    expect(messages({ ...GRPO, policyLoss: { name: 'icepop', alpha: 6 } })).toEqual([
      'Band low α (policyLoss.alpha) must be at most Band high β (policyLoss.beta) = 5, got 6',
    ]);
    expect(
      messages({ ...GRPO, policyLoss: { name: 'reinforce_kl', klApprox: false, ratioClampMin: 2, ratioClampMax: 1 } }),
    ).toEqual([
      'Ratio clamp min (policyLoss.ratioClampMin) must be at most Ratio clamp max (policyLoss.ratioClampMax) = 1, got 2',
    ]);
    expect(messages({ ...GRPO, policyLoss: { name: 'dro' } })).toEqual([
      'DRO β (policyLoss.beta) must be a number in (0, 100], got nothing',
    ]);
    expect(messages({ ...GRPO, policyLoss: { name: 'clip_cov', lb: 6 } })).toEqual([
      'Clip-Cov lower bound (policyLoss.lb) must be below Clip-Cov upper bound (policyLoss.ub) = 5, got 6',
    ]);
  });

  it('takes OTB by position on single turns and by action token on episodes, not the other way', () => {
    expect(messages({ ...GRPO, advantage: { estimator: 'otb', handleZeroTail: false } })).toEqual([]);
    expect(messages({ ...defaults('grpo-calc'), advantage: { estimator: 'otb-tir' } })).toEqual([]);
    expect(messages({ ...defaults('grpo-calc'), advantage: { estimator: 'otb' } })).toEqual([
      "Advantage estimator (advantage.estimator) must be one of grpo, rloo, reinforce++-baseline, gpg, grpo-passk, otb-tir, got 'otb'",
    ]);
    expect(messages({ ...GRPO, advantage: { estimator: 'otb-tir' } })).toEqual([
      "Advantage estimator (advantage.estimator) must be one of grpo, rloo, reinforce++-baseline, gpg, grpo-passk, gdpo, otb, got 'otb-tir'",
    ]);
  });

  it('offers every option value the RL core has (echo excepted: no observation tokens here)', () => {
    const values = (path: string) =>
      [
        ...new Set(
          optionFields('grpo-arith')
            .filter((f) => f.path === path)
            .flatMap((f) => f.values!),
        ),
      ].sort();
    expect([...values('policyLoss.name'), 'echo'].sort()).toEqual([...POLICY_LOSS_NAMES].sort());
    expect(values('aggregation.mode')).toEqual([...AGGREGATION_MODES].sort());
    expect(values('kl.estimator')).toEqual([...KL_ESTIMATORS].sort());
    // grpo-arith: every outcome estimator and OTB by position; the episodes (grpo-calc) OTB by action token.
    expect(values('advantage.estimator')).toEqual([...OUTCOME_ESTIMATORS, 'otb'].sort());
    const episodes = optionFields('grpo-calc').find((f) => f.path === 'advantage.estimator')!.values!;
    expect([...new Set([...values('advantage.estimator'), ...episodes])].sort()).toEqual(
      [...OUTCOME_ESTIMATORS, ...TOKEN_ESTIMATORS].sort(),
    );
    const rejection = optionFields('grpo-arith')
      .filter((f) => f.path.startsWith('rejection.'))
      .map((f) => f.path.slice('rejection.'.length));
    expect(rejection.sort()).toEqual([...REJECTION_OPTIONS].sort());
  });
});

describe('form fields derived from the schema', () => {
  it('marks the options changed on most runs as common, listed first in the order the form shows them', () => {
    const common = (preset: RunOptions['preset']) => {
      const fields = optionFields(preset);
      const n = fields.filter((f) => f.common).length;
      expect(
        fields.slice(0, n).every((f) => f.common),
        `${preset}: the common fields come first`,
      ).toBe(true);
      return fields.slice(0, n).map((f) => f.path);
    };
    expect(common('grpo-arith')).toEqual(['steps', 'lr', 'prompts', 'group', 'seed']);
    expect(common('dpo-arith')).toEqual(['steps', 'lr', 'pairs', 'seed']);
    expect(common('sft-arith')).toEqual(['steps', 'lr', 'seed']);
    // They keep their own section (the field's home when a form shows no common section).
    expect(optionFields('grpo-arith').find((f) => f.path === 'lr')).toMatchObject({
      section: 'Optimizer',
      common: true,
    });
  });

  it.each(PRESETS.map((p) => p.name))('%s: every field has a label, help, a section and a distinct label', (preset) => {
    const fields = optionFields(preset);
    expect(fields.length).toBeGreaterThan(5);
    for (const f of fields) {
      expect(f.label.length, f.path).toBeGreaterThan(1);
      expect(f.help.length, f.path).toBeGreaterThan(5);
    }
    const labelOf = new Map<string, string>();
    for (const f of fields) {
      const other = [...labelOf].find(([path, label]) => label === f.label && path !== f.path);
      expect(other, `${f.path} and ${other?.[0]} share the label '${f.label}'`).toBeUndefined();
      labelOf.set(f.path, f.label);
    }
  });

  it.each(PRESETS.map((p) => p.name))('%s: each field allows exactly what the schema accepts', (preset) => {
    const fields = optionFields(preset);
    const refusedWith = (f: FieldSpec, o: RunOptions, value: unknown) =>
      checkRunOptions(setAt(o, f.path, value)).filter(
        (p) => p.path === f.path && p.message.includes(`must be ${f.allowed}`),
      );
    const variants = (f: FieldSpec) => Array.from({ length: f.when?.at(-1)?.values.length ?? 1 }, (_, k) => k);
    for (const [f, k] of fields.flatMap((f) => variants(f).map((k) => [f, k] as const))) {
      const o = activate(f, fields, preset, k);
      const ok = (v: unknown) => expect(refusedWith(f, o, v), `${preset} ${f.path} = ${String(v)}`).toEqual([]);
      const bad = (v: unknown) => expect(refusedWith(f, o, v), `${preset} ${f.path} = ${String(v)}`).toHaveLength(1);
      if (f.kind === 'select') {
        f.values!.forEach(ok);
        bad('bogus');
      } else if (f.kind === 'boolean') {
        [true, false].forEach(ok);
        bad('yes');
      } else {
        const d = f.kind === 'integer' ? 1 : Math.max(1e-9, (f.max! - f.min!) * 1e-6);
        (f.minExclusive ? bad : ok)(f.min);
        (f.maxExclusive ? bad : ok)(f.max);
        bad(f.min! - d);
        bad(f.max! + d);
        ok(f.kind === 'integer' ? Math.round((f.min! + f.max!) / 2) : (f.min! + f.max!) / 2);
        if (f.kind === 'integer') bad(f.min! + 0.5);
      }
      if (f.optional) expect(checkRunOptions(setAt(o, f.path, undefined)), `${preset} ${f.path} left out`).toEqual([]);
      else
        expect(
          checkRunOptions(setAt(o, f.path, undefined)).map((p) => p.path),
          `${preset} ${f.path} left out`,
        ).toContain(f.path);
    }
  });
});

describe('grpo-env: the environment program in the options', () => {
  const defaults = findPreset('grpo-env')!.defaults as RunOptions & {
    environment: { program: { text: string; sha256: string }; tasks: { records: { id: string }[]; heldOut: number } };
  };
  const messages = (o: unknown) => checkRunOptions(o).map((p) => p.message);

  it('starts from the example program, whose recorded hash is its own', () => {
    expect(defaults.environment.program).toMatchObject({ name: 'calc_env.py', argv: ['python3', '-I', 'calc_env.py'] });
    expect(checkRunOptions(defaults)).toEqual([]);
  });

  it('refuses a program whose text changed since its hash was recorded, naming both hashes', () => {
    const env = structuredClone(defaults.environment);
    env.program.text += '\n# edited\n';
    const [message, ...rest] = messages({ ...defaults, environment: env });
    expect(rest).toEqual([]);
    expect(message).toContain(`the run recorded ${defaults.environment.program.sha256}`);
    expect(message).toMatch(/the program given has [0-9a-f]{64} \(a changed file/);
  });

  it('refuses a run without a program, a repeated task id, and no task left to train on', () => {
    const { environment: _none, ...bare } = defaults;
    expect(messages(bare).join()).toMatch(/is required: pick an environment program and a task file/);
    const env = structuredClone(defaults.environment);
    env.tasks.records[5].id = env.tasks.records[2].id;
    env.tasks.heldOut = env.tasks.records.length;
    const found = messages({ ...defaults, environment: env }).join('\n');
    expect(found).toMatch(/records.5.id.*must be unique/);
    expect(found).toMatch(/heldOut.*must leave a task to train on: 0..1999, got 2000/);
  });
});
