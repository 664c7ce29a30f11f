import { describe, expect, it } from 'vitest';
import type { EpisodeSummary } from '../../worker/protocol';
import { episodeOutcome, filterByOutcome, outcomeCounts, outcomeText, shortText } from './episode-outcome';

type E = Pick<EpisodeSummary, 'status' | 'reward' | 'corrupt' | 'termination'> & { index: number };
const ep = (index: number, over: Partial<E>): E => ({
  index,
  status: 'completed',
  reward: 1,
  corrupt: false,
  termination: 'env_done',
  ...over,
});

const list: E[] = [
  ep(0, {}),
  ep(1, { reward: 0 }),
  ep(2, { reward: 2 / 3 }),
  ep(3, { status: 'truncated', termination: 'max_turns', reward: 0 }),
  ep(4, { status: 'error', termination: 'sandbox_error', reward: null }),
  ep(5, { status: 'cancelled', termination: undefined, reward: null }),
  ep(6, { corrupt: true, reward: null }),
  ep(7, { status: 'running', termination: undefined, reward: null }),
  ep(8, { reward: null }),
];

describe('an episode outcome', () => {
  it('reads success, failure, truncated, error and unfinished from status, reward and the corrupt flag', () => {
    expect(list.map(episodeOutcome)).toEqual([
      'success',
      'failure',
      'failure',
      'truncated',
      'error',
      'error',
      'error',
      'unfinished',
      'failure',
    ]);
  });

  it('says what caused a truncation or an error', () => {
    expect(list.map(outcomeText)).toEqual([
      'success',
      'failure',
      'failure',
      'truncated (max_turns)',
      'error (sandbox_error)',
      'error (cancelled)',
      'error (corrupt journal record)',
      'unfinished',
      'failure',
    ]);
  });

  it('filters by outcome, all keeping every episode in order, and counts each outcome', () => {
    expect(filterByOutcome(list, 'all').map((e) => e.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(filterByOutcome(list, 'success').map((e) => e.index)).toEqual([0]);
    expect(filterByOutcome(list, 'failure').map((e) => e.index)).toEqual([1, 2, 8]);
    expect(filterByOutcome(list, 'truncated').map((e) => e.index)).toEqual([3]);
    expect(filterByOutcome(list, 'error').map((e) => e.index)).toEqual([4, 5, 6]);
    expect(filterByOutcome([], 'error')).toEqual([]);
    expect(outcomeCounts(list)).toEqual({ success: 1, failure: 3, truncated: 1, error: 3, unfinished: 1 });
  });
});

describe('a task on one short line', () => {
  it('keeps a short prompt, flattens whitespace and cuts a long one with an ellipsis', () => {
    expect(shortText('add 3, mul 5:')).toEqual({ text: 'add 3, mul 5:', cut: false });
    expect(shortText('a\n  b', 40)).toEqual({ text: 'a b', cut: true });
    expect(shortText('abcdefghij', 5)).toEqual({ text: 'abcd…', cut: true });
    expect(Array.from(shortText('😀'.repeat(9), 5).text)).toHaveLength(5);
  });
});
