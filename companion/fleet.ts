/**
 * `SandboxFleet`: N workers over one runner and a bounded queue. `submit` returns at once (a
 * promise of the outcome, or a refusal when the queue is full); `run` queues a batch all or none
 * and keeps its order; an aborted signal cancels a waiting job (it never starts) or a running one
 * (the runner kills it); `close` cancels everything and waits until every program is dead and its
 * directory deleted. Reference: dew SandboxFleet (docs/rl-core.md "Sandboxes").
 */
import { RunCancelled } from './process-runner';
import type { Outcome, Program, SandboxLimits } from './protocol';

/** What runs one program: ProcessRunner (a container runner later). */
export interface Runner {
  readonly name: string;
  run(program: Program, limits: SandboxLimits, signal?: AbortSignal): Promise<Outcome>;
}

/** The queue cannot take the job (or the whole batch): try again later. Never a verdict. */
export class QueueFull extends Error {
  override name = 'QueueFull';
}

export interface Job {
  program: Program;
  limits: SandboxLimits;
}

interface Waiting {
  start: () => void;
  cancel: (e: Error) => void;
}

export class SandboxFleet {
  private active = 0;
  private readonly waiting: Waiting[] = [];
  /** One controller per running job, so close() can cancel them all. */
  private readonly controllers = new Set<AbortController>();
  private readonly runs = new Set<Promise<unknown>>();
  private closed = false;

  constructor(
    readonly runner: Runner,
    readonly workers: number,
    readonly queueLimit: number,
  ) {
    if (!Number.isInteger(workers) || workers < 1)
      throw new Error(`SandboxFleet: workers must be an integer ≥ 1, got ${workers}`);
    if (!Number.isInteger(queueLimit) || queueLimit < 0)
      throw new Error(`SandboxFleet: queueLimit must be an integer ≥ 0, got ${queueLimit}`);
  }

  get running(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** How many jobs could be taken now: free workers plus free queue places. */
  private room(): number {
    return this.workers - this.active + this.queueLimit - this.waiting.length;
  }

  /** Queues one job; rejects with QueueFull at once when there is no room, RunCancelled when `signal` aborts. */
  submit(job: Job, signal?: AbortSignal): Promise<Outcome> {
    if (this.closed) return Promise.reject(new RunCancelled('the fleet is closed'));
    if (this.room() < 1)
      return Promise.reject(
        new QueueFull(
          `the queue is full (${this.active} running, ${this.waiting.length} of ${this.queueLimit} waiting)`,
        ),
      );
    return this.enqueue(job, signal);
  }

  /** Queues every job or none (QueueFull); the outcomes come in the jobs' order. A failure cancels the rest. */
  async run(jobs: readonly Job[], signal?: AbortSignal): Promise<Outcome[]> {
    if (this.closed) throw new RunCancelled('the fleet is closed');
    if (jobs.length > this.room())
      throw new QueueFull(
        `a batch of ${jobs.length} does not fit (room for ${this.room()}: ${this.workers} workers, ${this.queueLimit} queue places)`,
      );
    const batch = new AbortController();
    const onAbort = () => batch.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const all = jobs.map((j) => this.enqueue(j, batch.signal));
      try {
        return await Promise.all(all);
      } catch (e) {
        batch.abort();
        await Promise.allSettled(all);
        throw e;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Cancels every waiting and running job, and resolves once every program is dead and its directory gone. */
  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) w.cancel(new RunCancelled('the fleet is closing'));
    for (const c of this.controllers) c.abort();
    await Promise.allSettled([...this.runs]);
  }

  private enqueue(job: Job, signal?: AbortSignal): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      const start = () => {
        this.active++;
        const controller = new AbortController();
        const forward = () => controller.abort();
        signal?.addEventListener('abort', forward, { once: true });
        if (signal?.aborted) controller.abort();
        this.controllers.add(controller);
        const run = this.runner.run(job.program, job.limits, controller.signal).then(resolve, reject);
        this.runs.add(run);
        void run.finally(() => {
          this.runs.delete(run);
          this.controllers.delete(controller);
          signal?.removeEventListener('abort', forward);
          this.active--;
          this.waiting.shift()?.start();
        });
      };
      if (this.active < this.workers) return start();
      const entry: Waiting = {
        start: () => {
          signal?.removeEventListener('abort', dropWaiting);
          start();
        },
        cancel: reject,
      };
      const dropWaiting = () => {
        const i = this.waiting.indexOf(entry);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(new RunCancelled('cancelled while waiting in the queue'));
      };
      if (signal?.aborted) return dropWaiting();
      signal?.addEventListener('abort', dropWaiting, { once: true });
      this.waiting.push(entry);
    });
  }
}
