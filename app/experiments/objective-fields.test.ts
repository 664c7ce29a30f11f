import { describe, expect, it } from 'vitest';
import type { FieldSpec, RunOptions } from '../../worker/protocol';
import {
  inFormOrder,
  parseConfigJson,
  problemsBySection,
  sectionsOf,
  unshownProblems,
  withField,
} from './objective-fields';

const base = { section: 'Objective', help: 'h', allowed: 'a' } as const;
const FIELDS: FieldSpec[] = [
  {
    ...base,
    path: 'policyLoss.name',
    label: 'Policy loss',
    kind: 'select',
    values: ['ppo', 'icepop', 'reinforce_kl'],
    optional: false,
  },
  {
    ...base,
    path: 'policyLoss.clipLow',
    label: 'Clip ε low',
    kind: 'number',
    min: 0,
    max: 1,
    optional: true,
    when: [{ path: 'policyLoss.name', values: ['ppo'] }],
  },
  {
    ...base,
    path: 'policyLoss.klApprox',
    label: 'KL value estimators',
    kind: 'boolean',
    optional: false,
    initial: false,
    when: [{ path: 'policyLoss.name', values: ['reinforce_kl'] }],
  },
  {
    ...base,
    path: 'advantage.estimator',
    label: 'Advantage estimator',
    section: 'Advantage',
    kind: 'select',
    values: ['grpo', 'reinforce++-baseline'],
    optional: false,
  },
  {
    ...base,
    path: 'advantage.compat',
    label: 'Compat',
    section: 'Advantage',
    kind: 'select',
    values: ['verl', 'trl', 'rllm'],
    optional: true,
    when: [{ path: 'advantage.estimator', values: ['grpo'] }],
  },
  {
    ...base,
    path: 'advantage.compat',
    label: 'Compat',
    section: 'Advantage',
    kind: 'select',
    values: ['verl', 'rllm'],
    optional: true,
    when: [{ path: 'advantage.estimator', values: ['reinforce++-baseline'] }],
  },
  { ...base, path: 'steps', label: 'Steps', section: 'Run', kind: 'integer', min: 1, max: 5000, optional: false },
  {
    ...base,
    path: 'lr',
    label: 'Learning rate',
    section: 'Optimizer',
    kind: 'number',
    min: 0,
    max: 0.1,
    optional: false,
    common: true,
  },
];
const OPTIONS = {
  preset: 'grpo-arith',
  steps: 3,
  policyLoss: { name: 'ppo', clipLow: 0.1 },
  advantage: { estimator: 'grpo', compat: 'trl' },
} as unknown as RunOptions;

describe('editing options by field', () => {
  it('sets a nested value without touching the original, and empties a field by removing it', () => {
    const next = withField(OPTIONS, FIELDS, 'policyLoss.clipLow', 0.3);
    expect(next).toMatchObject({ policyLoss: { name: 'ppo', clipLow: 0.3 } });
    expect(OPTIONS).toMatchObject({ policyLoss: { clipLow: 0.1 } });
    expect(withField(OPTIONS, FIELDS, 'steps', undefined)).not.toHaveProperty('steps');
  });

  it("a variant switch drops the old variant's options and fills the new one's required ones", () => {
    const next = withField(OPTIONS, FIELDS, 'policyLoss.name', 'reinforce_kl');
    expect(next).toMatchObject({ policyLoss: { name: 'reinforce_kl', klApprox: false } });
    expect(next).not.toHaveProperty('policyLoss.clipLow');
  });

  it('a shared option keeps its value where the new variant allows it, and is cleared where not', () => {
    const rpp = withField(OPTIONS, FIELDS, 'advantage.estimator', 'reinforce++-baseline');
    expect(rpp).toEqual({ ...OPTIONS, advantage: { estimator: 'reinforce++-baseline' } });
    const rllm = withField(
      { ...OPTIONS, advantage: { estimator: 'grpo', compat: 'rllm' } } as RunOptions,
      FIELDS,
      'advantage.estimator',
      'reinforce++-baseline',
    );
    expect(rllm).toMatchObject({ advantage: { estimator: 'reinforce++-baseline', compat: 'rllm' } });
  });

  it('groups the fields that apply by section, in order, the common ones first in their own section', () => {
    const sections = sectionsOf(FIELDS, OPTIONS);
    expect(sections.map(([s, fs]) => [s, fs.map((f) => f.path)])).toEqual([
      ['Common', ['lr']],
      ['Objective', ['policyLoss.name', 'policyLoss.clipLow']],
      ['Advantage', ['advantage.estimator', 'advantage.compat']],
      ['Run', ['steps']],
    ]);
    expect(sections[2][1][1].values).toEqual(['verl', 'trl', 'rllm']);
  });
});

describe('problems in the form', () => {
  const problems = [
    { path: 'policyLoss.clipLow', message: 'Clip ε low (policyLoss.clipLow) must be a number in [0, 1], got 2' },
    { path: 'lr', message: 'Learning rate (lr) must be a number in (0, 0.1], got 1' },
    {
      path: 'policyLoss.klApprox',
      message: 'KL value estimators (policyLoss.klApprox) is not an option of grpo-arith; …',
    },
    { path: 'lrr', message: 'lrr is not an option of grpo-arith' },
  ];

  it('counts the problems of each section by the fields it shows', () => {
    expect([...problemsBySection(FIELDS, OPTIONS, problems)]).toEqual([
      ['Objective', 1],
      ['Common', 1],
    ]);
    expect(problemsBySection(FIELDS, OPTIONS, []).size).toBe(0);
  });

  it('lists the problems in the order of their fields in the form, the common section first, unshown ones last', () => {
    const steps = { path: 'steps', message: 'Steps (steps) must be an integer in 1..5000, got 0' };
    expect(inFormOrder(FIELDS, OPTIONS, [problems[3], steps, ...problems.slice(0, 3)]).map((p) => p.path)).toEqual([
      'lr',
      'policyLoss.clipLow',
      'steps',
      'lrr',
      'policyLoss.klApprox',
    ]);
  });

  it('finds the problems no shown field holds: an unknown option, an inactive variant, a bad preset', () => {
    expect(unshownProblems(FIELDS, OPTIONS, problems).map((p) => p.path)).toEqual(['policyLoss.klApprox', 'lrr']);
    expect(
      unshownProblems([], { preset: 'ppo-arith' }, [{ path: 'preset', message: 'preset must be one of …' }]),
    ).toHaveLength(1);
    expect(unshownProblems(FIELDS, OPTIONS, problems.slice(0, 2))).toEqual([]);
  });

  it('parses a config JSON, naming what is wrong with text that is not JSON', () => {
    expect(parseConfigJson(' {"preset": "grpo-arith", "steps": 3} ', 'the pasted text')).toEqual({
      ok: true,
      value: { preset: 'grpo-arith', steps: 3 },
    });
    const bad = parseConfigJson('{ "steps": 3,', 'run.json');
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.reason).toMatch(/^run\.json is not JSON: /);
    expect(parseConfigJson('  ', 'the pasted text')).toEqual({
      ok: false,
      reason: 'the pasted text is empty: paste the JSON that "Config as JSON" shows',
    });
  });
});
