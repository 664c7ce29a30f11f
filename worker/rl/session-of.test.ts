import { describe, expect, it } from 'vitest';
import { sessionOf } from './session-of';
import type { Action, Episode } from './types';

const action = (context: number[], tokens: number[], terminated: boolean, policyStep = 3): Action => ({
  context,
  tokens,
  rawLogProbs: tokens.map((_, i) => -0.5 - i),
  behaviorLogProbs: tokens.map((_, i) => -0.25 - i),
  terminated,
  policyStep,
  sampling: { temperature: 1 },
});

const episode = (over: Partial<Episode> = {}): Episode => ({
  identity: { task: 7, attempt: 1, sample: 2, seed: [42] },
  policyStep: 3,
  initial: { context: [1, 2], status: 'running' },
  transitions: [
    { action: action([1, 2], [3, 4], true), observation: { context: [1, 2, 3, 4, 9], status: 'running' } },
    {
      action: action([1, 2, 3, 4, 9], [5], false, 4),
      observation: { context: [], status: 'completed', termination: 'env_done' },
    },
  ],
  status: 'completed',
  reward: 0.5,
  ...over,
});

describe('sessionOf', () => {
  it('one call per action: context → prompt, EOS → stop, policy step → version', () => {
    const s = sessionOf(episode(), 'g');
    expect(s).toMatchObject({
      task: '7',
      group: 'g',
      sample: 2,
      attempt: 1,
      status: 'completed',
      reward: 0.5,
      termination: 'env_done',
    });
    expect(s.calls.map((c) => c.finishReason)).toEqual(['stop', 'length']);
    expect(s.calls.map((c) => c.version)).toEqual([3, 4]);
    expect(Array.from(s.calls[1].promptIds)).toEqual([1, 2, 3, 4, 9]);
    expect(Array.from(s.calls[0].behaviorLogProbs)).toEqual([-0.25, -1.25]);
    expect(Array.from(s.calls[0].rawLogProbs!)).toEqual([-0.5, -1.5]);
    expect(sessionOf(episode(), 'g', 'task-a').task).toBe('task-a');
  });

  it('an environment error is an infrastructure failure (failed, not trainable, no reward needed)', () => {
    const s = sessionOf(episode({ status: 'error', reward: null, termination: 'sandbox_error', detail: 'boom' }), 'g');
    expect(s.status).toBe('failed');
    expect(s.termination).toBe('sandbox_error');
    expect(s.detail).toBe('boom');
  });

  it('refuses a running episode and names the episode and the action on bad data', () => {
    expect(() => sessionOf(episode({ status: 'running' }), 'g')).toThrow(
      /episode \(task 7, attempt 1, sample 2\): status is "running"/,
    );
    const bad = episode();
    const t = bad.transitions[1];
    const broken: Episode = {
      ...bad,
      transitions: [bad.transitions[0], { ...t, action: { ...t.action, behaviorLogProbs: [-Infinity] } }],
    };
    expect(() => sessionOf(broken, 'g')).toThrow(
      /episode \(task 7, attempt 1, sample 2\), action 1, index 0: behaviorLogProbs\[0\] = -Infinity/,
    );
    expect(() => sessionOf(episode({ status: 'truncated', reward: null, termination: 'max_turns' }), 'g')).toThrow(
      /reward = null but status "truncated" is trainable/,
    );
  });
});
