import { describe, expect, it } from 'vitest';
import { createUpdateQueue } from './update-queue';

/** A hand-driven clock and timer: `advance` fires due timers in time order, each as its own task. */
function fakeTime() {
  let t = 0;
  let timers: { at: number; fn: () => void; id: number }[] = [];
  let ids = 0;
  return {
    now: () => t,
    /** Time passing inside a job (a redraw that takes `ms`). */
    spend: (ms: number) => (t += ms),
    later: (fn: () => void, ms: number) => {
      const id = ids++;
      timers.push({ at: t + ms, fn, id });
      return () => (timers = timers.filter((x) => x.id !== id));
    },
    advance(ms: number) {
      const end = t + ms;
      for (;;) {
        const next = timers.filter((x) => x.at <= end).sort((a, b) => a.at - b.at || a.id - b.id)[0];
        if (!next) break;
        timers = timers.filter((x) => x !== next);
        t = Math.max(t, next.at);
        next.fn();
      }
      t = Math.max(t, end);
    },
    timers: () => timers.length,
  };
}

const setup = (minGapMs = 250, budgetMs = 30) => {
  const time = fakeTime();
  const queue = createUpdateQueue<string>({ minGapMs, budgetMs, now: time.now, later: time.later });
  const log: string[] = [];
  const job =
    (name: string, cost = 0) =>
    () => {
      log.push(`${name}@${time.now()}`);
      time.spend(cost);
    };
  return { time, queue, log, job };
};

describe('createUpdateQueue', () => {
  it('runs a first job in the next task, never inside push', () => {
    const { time, queue, log, job } = setup();
    queue.push('a', job('a1'));
    expect(log).toEqual([]);
    time.advance(0);
    expect(log).toEqual(['a1@0']);
    expect(queue.waiting()).toBe(0);
    expect(time.timers()).toBe(0);
  });

  it('runs one key at most once per minGapMs, and only its latest job', () => {
    const { time, queue, log, job } = setup(250);
    queue.push('a', job('a1'));
    time.advance(0);
    // Three updates within the gap: only the last is drawn, when the gap has passed.
    for (const [i, dt] of [50, 50, 50].entries()) {
      time.advance(dt);
      queue.push('a', job(`a${i + 2}`));
    }
    time.advance(99);
    expect(log).toEqual(['a1@0']);
    time.advance(1);
    expect(log).toEqual(['a1@0', 'a4@250']);
    // Updates arriving every 100 ms for 1 s: at most 4 per second are drawn.
    const before = log.length;
    for (let i = 0; i < 10; i++) {
      time.advance(100);
      queue.push('a', job(`b${i}`));
    }
    time.advance(1000);
    const drawn = log.slice(before).map((s) => Number(s.split('@')[1]));
    expect(drawn.length).toBeLessThanOrEqual(5);
    for (let i = 1; i < drawn.length; i++) expect(drawn[i] - drawn[i - 1]).toBeGreaterThanOrEqual(250);
    // The last update is never lost.
    expect(log.at(-1)).toMatch(/^b9@/);
  });

  it('paces each key on its own: another key is not held back by the first', () => {
    const { time, queue, log, job } = setup(250);
    queue.push('a', job('a1'));
    time.advance(0);
    queue.push('a', job('a2'));
    queue.push('b', job('b1'));
    time.advance(0);
    expect(log).toEqual(['a1@0', 'b1@0']);
    time.advance(250);
    expect(log).toEqual(['a1@0', 'b1@0', 'a2@250']);
  });

  it('yields to other tasks once a task has spent its budget, running at least one job a task', () => {
    const { time, queue, log, job } = setup(250, 30);
    // Five charts to redraw, 20 ms each: two a task (20, then 40 ≥ 30 ms), in three tasks.
    for (const k of ['a', 'b', 'c', 'd', 'e']) queue.push(k, job(k, 20));
    let tasks = 0;
    const task = () => {
      const n = log.length;
      time.advance(0);
      if (log.length > n) tasks++;
    };
    task();
    expect(log).toEqual(['a@0', 'b@20']);
    task();
    task();
    expect(tasks).toBe(3);
    expect(log.map((s) => s.split('@')[0])).toEqual(['a', 'b', 'c', 'd', 'e']);
    // A job longer than the budget still runs, alone in its task.
    queue.push('f', job('f', 100));
    queue.push('g', job('g', 1));
    time.advance(0);
    expect(log.slice(5)).toEqual(['f@100']);
    time.advance(0);
    expect(log.slice(5)).toEqual(['f@100', 'g@200']);
  });

  it('keeps the order in which keys started waiting, a replaced job keeping its place', () => {
    const { time, queue, log, job } = setup(250, 0);
    queue.push('a', job('a1'));
    queue.push('b', job('b1'));
    queue.push('a', job('a2'));
    time.advance(0);
    expect(log).toEqual(['a2@0', 'b1@0']);
  });

  it('forgets a key: its waiting job never runs and it is due at once when pushed again', () => {
    const { time, queue, log, job } = setup(250);
    queue.push('a', job('a1'));
    time.advance(0);
    queue.push('a', job('a2'));
    queue.forget('a');
    expect(queue.waiting()).toBe(0);
    expect(time.timers()).toBe(0);
    time.advance(1000);
    expect(log).toEqual(['a1@0']);
    queue.push('a', job('a3'));
    time.advance(0);
    expect(log).toEqual(['a1@0', 'a3@1000']);
  });

  it('still runs the other jobs when one throws', () => {
    const { time, queue, log, job } = setup(250, 30);
    queue.push('a', () => {
      throw new Error('boom');
    });
    queue.push('b', job('b1'));
    expect(() => time.advance(0)).toThrow('boom');
    time.advance(0);
    expect(log).toEqual(['b1@0']);
  });
});
