import { describe, expect, it } from 'vitest';
import type { FieldSpec, RunOptions } from '../../worker/protocol';
import { sectionsOf, withField } from './objective-fields';

const base = { section: 'Objective', help: 'h', allowed: 'a' } as const;
const FIELDS: FieldSpec[] = [
  { ...base, path: 'policyLoss.name', label: 'Policy loss', kind: 'select', values: ['ppo', 'icepop', 'reinforce_kl'], optional: false },
  { ...base, path: 'policyLoss.clipLow', label: 'Clip ε low', kind: 'number', min: 0, max: 1, optional: true, when: [{ path: 'policyLoss.name', values: ['ppo'] }] },
  { ...base, path: 'policyLoss.klApprox', label: 'KL value estimators', kind: 'boolean', optional: false, initial: false, when: [{ path: 'policyLoss.name', values: ['reinforce_kl'] }] },
  { ...base, path: 'advantage.estimator', label: 'Advantage estimator', section: 'Advantage', kind: 'select', values: ['grpo', 'reinforce++-baseline'], optional: false },
  { ...base, path: 'advantage.compat', label: 'Compat', section: 'Advantage', kind: 'select', values: ['verl', 'trl', 'rllm'], optional: true, when: [{ path: 'advantage.estimator', values: ['grpo'] }] },
  { ...base, path: 'advantage.compat', label: 'Compat', section: 'Advantage', kind: 'select', values: ['verl', 'rllm'], optional: true, when: [{ path: 'advantage.estimator', values: ['reinforce++-baseline'] }] },
  { ...base, path: 'steps', label: 'Steps', section: 'Run', kind: 'integer', min: 1, max: 5000, optional: false },
];
const OPTIONS = { preset: 'grpo-arith', steps: 3, policyLoss: { name: 'ppo', clipLow: 0.1 }, advantage: { estimator: 'grpo', compat: 'trl' } } as unknown as RunOptions;

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
    const rllm = withField({ ...OPTIONS, advantage: { estimator: 'grpo', compat: 'rllm' } } as RunOptions, FIELDS, 'advantage.estimator', 'reinforce++-baseline');
    expect(rllm).toMatchObject({ advantage: { estimator: 'reinforce++-baseline', compat: 'rllm' } });
  });

  it('groups the fields that apply by section, in order', () => {
    const sections = sectionsOf(FIELDS, OPTIONS);
    expect(sections.map(([s, fs]) => [s, fs.map((f) => f.path)])).toEqual([
      ['Objective', ['policyLoss.name', 'policyLoss.clipLow']],
      ['Advantage', ['advantage.estimator', 'advantage.compat']],
      ['Run', ['steps']],
    ]);
    expect(sections[1][1][1].values).toEqual(['verl', 'trl', 'rllm']);
  });
});
