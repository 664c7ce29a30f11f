import { describe, expect, it } from 'vitest';
import type { ImportedRunOptions, RunOptions, RunSummary } from '../../worker/protocol';
import { bytesText, deleteScope, filterRuns, keyParams, sortRuns } from './runs-table';

const grpo = {
  preset: 'grpo-arith',
  steps: 150,
  lr: 1e-4,
  prompts: 16,
  group: 8,
  beta: 0,
  policyLoss: { name: 'ppo' },
  aggregation: { mode: 'token-mean' },
} as RunOptions;
const dpo = { preset: 'dpo-arith', steps: 150, lr: 5e-5, pairs: 16, beta: 0.1, loss: { type: 'ipo' } } as RunOptions;
const run = (runId: string, over: Partial<RunSummary>): RunSummary => ({
  runId,
  options: grpo,
  createdAt: 0,
  status: 'finished',
  lastStep: 0,
  ...over,
});

const runs = [
  run('a', { name: 'baseline', createdAt: 1, latest: { rewardMean: 0.2 }, lastStep: 150 }),
  run('b', {
    name: 'Higher lr',
    createdAt: 2,
    latest: { rewardMean: 0.4 },
    status: 'stopped',
    lastStep: 40,
    notes: 'collapsed at step 30',
  }),
  run('c', { name: 'dpo probe', options: dpo, createdAt: 3, lastStep: 10 }),
];

describe('keyParams', () => {
  it('names lr, prompts × group, loss and β of a GRPO run, pairs and loss of a DPO run', () => {
    expect(keyParams(runs[0])).toBe('lr 0.0001 · 16 × 8 · ppo, token-mean · β 0');
    expect(keyParams(runs[2])).toBe('lr 0.00005 · 16 pairs · ipo · β 0.1');
    const ppo = { ...grpo, preset: 'ppo-arith', gamma: 1, lam: 0.95, valueCoefficient: 0.5 } as RunOptions;
    expect(keyParams(run('p', { options: ppo }))).toBe(
      'lr 0.0001 · 16 × 8 · ppo, token-mean · GAE γ 1 λ 0.95 · c_v 0.5 · β 0',
    );
  });
});

describe('sortRuns', () => {
  it('sorts by a column both ways, runs without a value last', () => {
    expect(sortRuns(runs, 'reward', 'descending').map((r) => r.runId)).toEqual(['b', 'a', 'c']);
    expect(sortRuns(runs, 'reward', 'ascending').map((r) => r.runId)).toEqual(['a', 'b', 'c']);
    expect(sortRuns(runs, 'name', 'ascending').map((r) => r.runId)).toEqual(['a', 'c', 'b']);
    expect(sortRuns(runs, 'steps', 'descending').map((r) => r.runId)).toEqual(['a', 'b', 'c']);
  });
});

describe('filterRuns', () => {
  it('keeps runs whose text holds every word, and the chosen status', () => {
    expect(filterRuns(runs, { text: 'collapsed', status: 'all' }).map((r) => r.runId)).toEqual(['b']);
    expect(filterRuns(runs, { text: 'dpo ipo', status: 'all' }).map((r) => r.runId)).toEqual(['c']);
    expect(filterRuns(runs, { text: '', status: 'finished' }).map((r) => r.runId)).toEqual(['a', 'c']);
    expect(filterRuns(runs, { text: 'lr 0.0001', status: 'stopped' }).map((r) => r.runId)).toEqual(['b']);
  });
});

describe('bytesText', () => {
  it('uses decimal units', () => {
    expect([bytesText(900), bytesText(412_300), bytesText(1_340_000)]).toEqual(['900 B', '412 kB', '1.3 MB']);
  });
});

describe('deleteScope', () => {
  const imported = (present: string[]): ImportedRunOptions => ({
    preset: 'verl-import',
    steps: 3,
    stepNumbers: [3],
    files: [{ name: '3.jsonl', rows: 4 }],
    grouping: 'input',
    advantages: 'recomputed',
    present,
    missing: [],
    format: 'verl',
  });

  it('names the checkpoint only for a run that has one', () => {
    expect(deleteScope(run('a', { lastStep: 2, checkpointStep: 2 }))).toBe(
      '2 steps with their groups, batches and sessions, and its checkpoint',
    );
    expect(deleteScope(run('f', { lastStep: 2 }))).toBe('2 steps with their groups, batches and sessions');
  });

  it('an imported run: the steps imported and what its dump gave, never a checkpoint', () => {
    expect(deleteScope(run('v', { status: 'imported', options: imported(['gts']), lastStep: 3 }))).toBe(
      '1 imported step with its groups',
    );
    const ids = { ...imported(['response_ids']), stepNumbers: [3, 4] };
    expect(deleteScope(run('w', { status: 'imported', options: ids, lastStep: 4 }))).toBe(
      '2 imported steps with their groups, batches and sessions',
    );
  });
});
