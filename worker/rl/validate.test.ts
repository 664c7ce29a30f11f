import { describe, expect, it } from 'vitest';
import { statusOf, trainable, trains, type Call, type Session } from './types';
import { validateSession, validateSessions } from './validate';

const call = (over: Partial<Call> = {}): Call => ({
  promptIds: [1, 2],
  sampledIds: [3, 4, 5],
  behaviorLogProbs: [-0.1, -0.2, -0.3],
  rawLogProbs: [-0.1, -0.2, -0.3],
  finishReason: 'stop',
  version: 0,
  ...over,
});
const session = (over: Partial<Session> = {}): Session => ({
  task: 't1',
  group: 'g',
  sample: 2,
  attempt: 0,
  calls: [call(), call()],
  status: 'completed',
  reward: 1,
  ...over,
});
/** Validates `bad` as the second session of a batch, so messages must name session 1. */
const refuse = (bad: Session) => () => validateSessions([session(), bad]);
const with2nd = (over: Partial<Call>) => session({ calls: [call(), call(over)] });

describe('status and termination', () => {
  it('completed and truncated are trainable; truncated trains only under "score"', () => {
    expect(['completed', 'truncated', 'cancelled', 'failed'].map((s) => trainable(s as never))).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(trains('truncated', 'mask')).toBe(false);
    expect(trains('truncated', 'score')).toBe(true);
    expect(trains('failed', 'score')).toBe(false);
  });

  it('agent outcomes and infrastructure failures map to statuses', () => {
    expect(statusOf('env_done')).toBe('completed');
    for (const r of ['max_turns', 'max_prompt_length', 'max_response_length', 'timeout'] as const)
      expect(statusOf(r)).toBe('truncated');
    for (const r of [
      'sandbox_error',
      'verifier_timeout',
      'grading_error',
      'model_error',
      'env_start_timeout',
    ] as const) {
      expect(statusOf(r)).toBe('failed');
    }
  });
});

describe('validateSessions refusals name the session, the call and the index', () => {
  const where = /session 1 \(task "t1", group "g", sample 2, attempt 0\), call 1, index/;

  it('accepts a well-formed batch', () => {
    expect(() =>
      validateSessions([session(), session({ status: 'failed', reward: null, termination: 'sandbox_error' })]),
    ).not.toThrow();
  });

  it('negative ids', () => {
    expect(refuse(with2nd({ promptIds: [1, -3] }))).toThrow(
      /call 1, index 1: promptIds\[1\] = -3: expected a non-negative integer/,
    );
    expect(refuse(with2nd({ promptIds: [1, -3] }))).toThrow(where);
  });

  it('non-integer ids', () => {
    expect(refuse(with2nd({ sampledIds: [3, 4.5, 5] }))).toThrow(/session 1 .*call 1, index 1: sampledIds\[1\] = 4.5/);
  });

  it('log-prob arrays whose length differs from the ids', () => {
    expect(refuse(with2nd({ behaviorLogProbs: [-0.1, -0.2] }))).toThrow(
      /call 1, index 2: behaviorLogProbs has 2 entries but sampledIds has 3/,
    );
    expect(refuse(with2nd({ rawLogProbs: [-0.1, -0.2, -0.3, -0.4] }))).toThrow(
      /call 1, index 3: rawLogProbs has 4 entries/,
    );
  });

  it('a -inf or NaN behavior log-prob', () => {
    expect(refuse(with2nd({ behaviorLogProbs: [-0.1, -Infinity, -0.3] }))).toThrow(
      /session 1 .*call 1, index 1: behaviorLogProbs\[1\] = -Infinity/,
    );
    expect(refuse(with2nd({ behaviorLogProbs: [NaN, -0.2, -0.3] }))).toThrow(
      /call 1, index 0: behaviorLogProbs\[0\] = NaN/,
    );
    expect(refuse(with2nd({ rawLogProbs: [-0.1, -0.2, NaN] }))).toThrow(/call 1, index 2: rawLogProbs\[2\] = NaN/);
  });

  it('a support set that does not contain its sampled id', () => {
    expect(refuse(with2nd({ support: [[3, 9], [4], [6, 7]] }))).toThrow(
      /session 1 .*call 1, index 2: support\[2\] does not contain the sampled id 5/,
    );
    expect(refuse(with2nd({ support: [[3], [4]] }))).toThrow(/call 1, index 2: support has 2 entries/);
    expect(refuse(with2nd({ support: [[3], [4, -1], [5]] }))).toThrow(/index 1: support\[1\]\[1\] = -1/);
  });

  it('a trainable session without a finite reward', () => {
    expect(refuse(session({ reward: null }))).toThrow(
      /session 1 \(task "t1".*\): reward = null but status "completed" is trainable/,
    );
    expect(refuse(session({ status: 'truncated', reward: NaN }))).toThrow(
      /session 1 .*reward = NaN but status "truncated"/,
    );
    expect(() => validateSessions([session({ status: 'cancelled', reward: null })])).not.toThrow();
  });

  it('other malformed fields', () => {
    expect(refuse(with2nd({ version: -1 }))).toThrow(/call 1: version = -1/);
    expect(refuse(with2nd({ finishReason: 'eos' as never }))).toThrow(/call 1: finishReason = "eos"/);
    expect(refuse(with2nd({ promptIds: [] }))).toThrow(/call 1, index 0: promptIds is empty/);
    expect(refuse(session({ sample: -1 }))).toThrow(/session 1 .*: sample = -1/);
    expect(refuse(session({ status: 'done' as never }))).toThrow(/status = "done"/);
    expect(refuse(session({ termination: 'max_turns' }))).toThrow(
      /termination "max_turns" implies status "truncated", but status is "completed"/,
    );
    expect(refuse(session({ termination: 'oops' as never }))).toThrow(/termination = "oops"/);
  });

  it('a custom label and call noun', () => {
    expect(() => validateSession(with2nd({ sampledIds: [1, 2, -7] }), 0, 'episode X', 'action')).toThrow(
      /^episode X, action 1, index 2/,
    );
  });
});
