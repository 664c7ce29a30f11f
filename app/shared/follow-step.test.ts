import { describe, expect, it } from 'vitest';
import { followedStep, newestCached, type Cached } from './follow-step';

describe('followedStep', () => {
  it('follows the latest stored step until one is pinned', () => {
    expect(followedStep([1, 2, 3], null, 'a')).toBe(3);
    expect(followedStep([], null, 'a')).toBeNull();
    expect(followedStep([1, 2, 3, 4], { runId: 'a', step: 2 }, 'a')).toBe(2);
  });
  it('drops a pin of another run: the run on screen follows its own latest step', () => {
    expect(followedStep([5, 6], { runId: 'a', step: 2 }, 'b')).toBe(6);
  });
});

describe('newestCached', () => {
  const entries: Cached<string>[] = [
    [['runs', 'a', 'group-steps', 14], 'list at 14'],
    [['runs', 'a', 'group-steps', 16], undefined], // still loading
    [['runs', 'a', 'group-steps', 15], 'list at 15'],
  ];
  it('keeps the newest answer already read while the latest key loads', () => {
    expect(newestCached(entries, 4)).toEqual({ step: 15, data: 'list at 15' });
  });
  it('takes none above `atMost`, none of another key length, none without data', () => {
    expect(newestCached(entries, 4, 14)).toEqual({ step: 14, data: 'list at 14' });
    expect(newestCached(entries, 5)).toBeNull();
    expect(newestCached([[['runs', 'a', 'groups', 3], undefined]], 4)).toBeNull();
  });
  it('keeps a null answer (a step with nothing stored is an answer)', () => {
    expect(newestCached<null>([[['runs', 'a', 'batch', 2], null]], 4)).toEqual({ step: 2, data: null });
  });
});
