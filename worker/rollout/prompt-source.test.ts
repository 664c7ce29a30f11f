import { describe, expect, it, vi } from 'vitest';
import type { ArithTask } from '../data/arith';
import type { GenerateOptions } from './generate';
import { generate } from './generate';
import type { PromptReward, SampledSession } from './prompt-source';
import { Cancelled } from './prompt-source';
import { math, model, source, TASKS } from './node-test-source';

/** A sampler that draws with the real model and records each batch's prompts count and seed. */
function countingSampler() {
  return vi.fn((prompts: readonly ArrayLike<number>[], o: GenerateOptions) => generate(model, prompts, o));
}

describe('PromptSource', () => {
  it('draws the submissions of one tick as one batch; a later tick is another batch with another seed', async () => {
    const sampler = countingSampler();
    const src = source({ model: sampler, seed: 100 });
    const first = [...src.submit(TASKS[0], 2, { version: 3 }), ...src.submit(TASKS[1], 2, { version: 3 })];
    const a = await Promise.all(first);
    const b = await Promise.all(src.submit(TASKS[0], 2, { version: 3 }));
    expect(sampler.mock.calls.map(([p, o]) => [p.length, o.seed])).toEqual([
      [4, 103],
      [2, expect.any(Number)],
    ]);
    expect(sampler.mock.calls[1][1].seed).not.toBe(103);
    expect(a.map((s) => [s.task, s.sample])).toEqual([
      [TASKS[0].id, 0],
      [TASKS[0].id, 1],
      [TASKS[1].id, 0],
      [TASKS[1].id, 1],
    ]);
    expect(b.every((s) => s.calls[0].version === 3)).toBe(true);
  });

  it('a throwing reward rejects only its session', async () => {
    const boom = new Error('grader broke');
    const reward: PromptReward<ArithTask> = (text, task) => {
      if (task === TASKS[1]) throw boom;
      return math(text, task);
    };
    const src = source({ reward });
    const settled = await Promise.allSettled(TASKS.flatMap((t) => src.submit(t, 2, { version: 0 })));
    expect(settled.map((s) => s.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect(settled.filter((s) => s.status === 'rejected').map((s) => s.reason)).toEqual([boom, boom]);
    // A rejecting (async) reward and a non-finite score reject the same way.
    const asyncSrc = source({
      reward: async (text, task) => (task === TASKS[0] ? { score: Number.NaN } : math(text, task)),
    });
    const more = await Promise.allSettled(TASKS.flatMap((t) => asyncSrc.submit(t, 1, { version: 0 })));
    expect(more.map((s) => s.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    expect(String((more[0] as PromiseRejectedResult).reason)).toMatch(/reward of session 0 of task .* is NaN/);
  });

  it('a failing draw rejects every session of its batch with the error', async () => {
    const src = source({ model: () => Promise.reject(new Error('out of memory')) });
    const settled = await Promise.allSettled(src.submit(TASKS[0], 3, { version: 0 }));
    expect(settled.map((s) => (s.status === 'rejected' ? (s.reason as Error).message : 'fulfilled'))).toEqual([
      'out of memory',
      'out of memory',
      'out of memory',
    ]);
  });

  it('cancel rejects the cancelled promises with Cancelled: a queued one is not drawn, one being drawn is not scored', async () => {
    const sampler = countingSampler();
    const reward = vi.fn(math);
    const src = source({ model: sampler, reward });
    const queued = src.submit(TASKS[0], 3, { version: 0 });
    src.cancel([queued[1]]);
    const settled = await Promise.allSettled(queued);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const reason = (settled[1] as PromiseRejectedResult).reason as Error;
    expect(reason).toBeInstanceOf(Cancelled);
    expect(reason.name).toBe('Cancelled');
    expect(sampler.mock.calls[0][0]).toHaveLength(2);
    expect(reward).toHaveBeenCalledTimes(2);

    // Cancelled mid-draw: rejects at once, before the draw ends, and the reward never sees it.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = source({ model: async (p, o) => (await gate, generate(model, p, o)), reward });
    const drawing = slow.submit(TASKS[1], 2, { version: 0 });
    await new Promise((r) => setTimeout(r, 0)); // the batch has started
    slow.cancel([drawing[0]]);
    await expect(drawing[0]).rejects.toBeInstanceOf(Cancelled);
    release();
    expect((await drawing[1]).sample).toBe(1);
    expect(reward).toHaveBeenCalledTimes(3);
    // Cancelling a settled promise changes nothing; a foreign promise is refused.
    slow.cancel(drawing);
    await expect(drawing[1]).resolves.toMatchObject({ sample: 1 });
    expect(() => slow.cancel([Promise.resolve({} as SampledSession)])).toThrow(/did not return/);
  });

  it('close refuses later submits with a clear error; sessions submitted before still resolve', async () => {
    const src = source();
    const before = src.submit(TASKS[0], 2, { version: 0 });
    src.close();
    expect(() => src.submit(TASKS[0], 1, { version: 0 })).toThrow(/the source is closed/);
    expect((await Promise.all(before)).map((s) => s.sample)).toEqual([0, 1]);
  });
});
