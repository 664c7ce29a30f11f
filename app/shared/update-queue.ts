/**
 * Paced redraws: jobs keyed by what they redraw (a chart), run at most once per `minGapMs` per key,
 * a newer job replacing one of the same key still waiting, and run in short tasks that yield to
 * input once `budgetMs` is spent (at least one job a task). A live run reports several events a
 * second; redrawing every chart on each of them in one task blocked the page for hundreds of
 * milliseconds (issue 27, bug 8). Pure: the clock and the timer are given, so the tests drive them.
 * Not a frame scheduler and not tied to echarts: Chart.tsx passes its `setOption` calls as jobs.
 */

interface UpdateQueueOptions {
  /** Least time between the starts of two jobs of one key (ms): a chart redraws at most 1000 / minGapMs times a second. */
  minGapMs: number;
  /** A task runs due jobs until this much time has passed, then yields (ms). */
  budgetMs: number;
  now: () => number;
  /** Calls `fn` in a new task after `ms`; returns what cancels it. */
  later: (fn: () => void, ms: number) => () => void;
}

interface UpdateQueue<K> {
  /** Runs `job` once `key` is due, replacing a job of `key` that is still waiting. */
  push: (key: K, job: () => void) => void;
  /** Drops the waiting job of `key` and its pacing (what it redraws is gone). */
  forget: (key: K) => void;
  /** How many jobs are waiting. */
  waiting: () => number;
}

export function createUpdateQueue<K>({ minGapMs, budgetMs, now, later }: UpdateQueueOptions): UpdateQueue<K> {
  // Insertion order is the order keys started waiting: a key that waits longest runs first.
  const pending = new Map<K, () => void>();
  const lastRun = new Map<K, number>();
  let timer: { at: number; cancel: () => void } | null = null;

  const dueAt = (key: K) => (lastRun.get(key) ?? -Infinity) + minGapMs;

  const schedule = () => {
    if (pending.size === 0) {
      timer?.cancel();
      timer = null;
      return;
    }
    const t = now();
    const at = Math.max(t, Math.min(...[...pending.keys()].map(dueAt)));
    if (timer && timer.at <= at) return;
    timer?.cancel();
    timer = { at, cancel: later(drain, at - t) };
  };

  function drain() {
    timer = null;
    const start = now();
    let ran = 0;
    try {
      while (ran === 0 || now() - start < budgetMs) {
        const t = now();
        const key = [...pending.keys()].find((k) => dueAt(k) <= t);
        if (key === undefined) break;
        const job = pending.get(key)!;
        pending.delete(key);
        lastRun.set(key, t);
        ran++;
        job();
      }
    } finally {
      // Jobs left (due or not): the next task, so input waiting since this one began goes first.
      schedule();
    }
  }

  return {
    push: (key, job) => {
      pending.set(key, job);
      schedule();
    },
    forget: (key) => {
      pending.delete(key);
      lastRun.delete(key);
      schedule();
    },
    waiting: () => pending.size,
  };
}

/** The page's clock and timer: each `later` is a task of its own (setTimeout), so input runs between them. */
export const taskTimer: Pick<UpdateQueueOptions, 'now' | 'later'> = {
  now: () => performance.now(),
  later: (fn, ms) => {
    const id = setTimeout(fn, ms);
    return () => clearTimeout(id);
  },
};
