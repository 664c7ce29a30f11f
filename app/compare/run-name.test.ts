import { describe, expect, it } from 'vitest';
import type { FieldSpec, RunOptions } from '../../worker/protocol';
import {
  defaultRunName,
  differingOptions,
  hasWorkerDefaultName,
  runDisplayName,
  seedGroupName,
  uniqueNames,
} from './run-name';

const field = (path: string) => ({ path }) as FieldSpec;
const preset = {
  defaults: {
    preset: 'grpo-arith',
    steps: 150,
    lr: 1e-4,
    seed: 1,
    policyLoss: { name: 'ppo' },
    evalEvery: 10,
    temperature: 1,
  } as unknown as RunOptions,
  fields: ['steps', 'lr', 'seed', 'policyLoss.name', 'policyLoss.clipHigh', 'temperature', 'evalEvery'].map(field),
};
const opts = (o: Record<string, unknown>) => ({ ...preset.defaults, ...o }) as RunOptions;

describe('defaultRunName', () => {
  it('names the preset alone when every option is its default', () => {
    expect(defaultRunName(opts({}), preset)).toBe('grpo-arith');
  });
  it('adds the options that differ, in the form order, small numbers in exponent form', () => {
    expect(defaultRunName(opts({ seed: 2, lr: 3e-3 }), preset)).toBe('grpo-arith · lr 3e-3 · seed 2');
  });
  it('names a variant by its parent, lists bookkeeping fields last and counts what does not fit', () => {
    const o = opts({ evalEvery: 5, policyLoss: { name: 'gspo', clipHigh: 0.3 }, temperature: 0.7, steps: 20 });
    expect(differingOptions(o, preset).map((d) => d.text)).toEqual([
      'steps 20',
      'policyLoss gspo',
      'clipHigh 0.3',
      'temperature 0.7',
      'evalEvery 5',
    ]);
    expect(defaultRunName(o, preset)).toBe(
      'grpo-arith · steps 20 · policyLoss gspo · clipHigh 0.3 · temperature 0.7 · +1 more',
    );
  });
});

describe('a run on an environment program', () => {
  const sha256 = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';
  const environment = {
    program: { name: 'calc_env.py', text: 'import sys\n', sha256, argv: ['python3', '-I', '-S', 'calc_env.py'] },
    tasks: { name: 'tasks.jsonl', records: [{ id: 't1', prompt: '1+2', answer: '3', data: {} }], heldOut: 1 },
  };
  it('is named by the program file and a short hash, not its command, full hash, text or tasks', () => {
    const name = defaultRunName(opts({ preset: 'grpo-env', environment, seed: 2 }), preset);
    expect(name).toBe('grpo-env · calc_env.py@9f86d081 · seed 2');
    expect(name).not.toContain(sha256);
    expect(name).not.toContain('python3');
  });
});

describe('runDisplayName', () => {
  const run = { runId: 'grpo-m3x9k2-1', options: opts({ lr: 3e-3 }), status: 'finished' as const };
  it('replaces the worker’s fill-in name, keeps a name a person gave and an imported run’s', () => {
    expect(hasWorkerDefaultName({ ...run, name: 'grpo-arith · m3x9k2' })).toBe(true);
    expect(runDisplayName({ ...run, name: 'grpo-arith · m3x9k2' }, preset)).toBe('grpo-arith · lr 3e-3');
    expect(runDisplayName({ ...run, name: 'my probe' }, preset)).toBe('my probe');
    expect(runDisplayName({ ...run, name: 'grpo-arith · m3x9k2', status: 'imported' }, preset)).toBe(
      'grpo-arith · m3x9k2',
    );
    expect(runDisplayName({ ...run, name: 'grpo-arith · m3x9k2' }, undefined)).toBe('grpo-arith · m3x9k2');
  });
});

describe('seedGroupName and uniqueNames', () => {
  it('names a seed group without its seed and lists the seeds', () => {
    expect(seedGroupName([opts({ lr: 3e-3, seed: 3 }), opts({ lr: 3e-3, seed: 2 })], preset)).toBe(
      'grpo-arith · lr 3e-3 · seeds 2, 3',
    );
  });
  it('tags only the names that repeat', () => {
    expect(
      uniqueNames([
        { name: 'grpo-arith', tag: 'a1' },
        { name: 'grpo-arith', tag: 'b2' },
        { name: 'x', tag: 'c3' },
      ]),
    ).toEqual(['grpo-arith (a1)', 'grpo-arith (b2)', 'x']);
  });
});
