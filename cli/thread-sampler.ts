/**
 * A sampler on a Node worker thread (`train --sampler thread`): the scheduler's sampler slots
 * (worker/train/scheduler.ts `RemoteSampler`) as threads of their own, each with a Model on a
 * one-thread wasm backend (cli/sampler-thread-main.ts). The trainer publishes a version's weights
 * to a slot before the slot draws a batch, so the arithmetic of sampling runs on another core
 * while the trainer updates. The thread keeps the process alive only while a request is pending.
 */
import { Worker } from 'node:worker_threads';
import type { ModelConfig } from '../worker/model/config';
import type { Generated, GenerateOptions } from '../worker/rollout/generate';
import type { RemoteSampler } from '../worker/rollout/remote-sampler';

type Pending = { resolve: (m: { generated?: Generated[] }) => void; reject: (e: Error) => void };

export class ThreadSampler implements RemoteSampler {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failure: Error | null = null;
  private readonly ready: Promise<void>;

  constructor(config: ModelConfig) {
    this.worker = new Worker(new URL('./sampler-thread.mjs', import.meta.url), { workerData: { config } });
    let started!: () => void;
    this.ready = new Promise<void>((resolve) => (started = resolve));
    this.worker.on('message', (m: { id: number; generated?: Generated[]; error?: string }) => {
      if (m.id === 0) return started();
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) this.worker.unref();
      if (m.error) p.reject(new Error(`the sampler thread: ${m.error}`));
      else p.resolve(m);
    });
    const fail = (e: Error) => {
      this.failure = new Error(`the sampler thread stopped: ${e.message}`);
      for (const p of this.pending.values()) p.reject(this.failure);
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`exit ${code}`)));
    this.worker.unref();
  }

  private async call(message: object): Promise<{ generated?: Generated[] }> {
    if (this.failure) throw this.failure;
    const id = this.nextId++;
    const answer = new Promise<{ generated?: Generated[] }>((resolve, reject) =>
      this.pending.set(id, { resolve, reject }),
    );
    this.worker.ref();
    await this.ready;
    this.worker.postMessage({ id, ...message });
    return answer;
  }

  async publish(weights: ReadonlyMap<string, Float32Array>): Promise<void> {
    await this.call({ type: 'weights', weights: [...weights] });
  }

  sampler = async (prompts: readonly ArrayLike<number>[], options: GenerateOptions): Promise<Generated[]> => {
    // The progress callback stays here: the thread's rows report nothing back.
    const { onProgress: _progress, ...rest } = options;
    const { generated } = await this.call({
      type: 'generate',
      prompts: prompts.map((p) => Array.from(p)),
      options: rest,
    });
    return generated!;
  };

  close(): void {
    void this.worker.terminate();
  }
}
