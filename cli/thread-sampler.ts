/**
 * A sampler on a Node worker thread (`train --sampler thread`, the `samplerWorker` option): one of
 * the scheduler's sampler slots (worker/train/scheduler.ts) as a thread of its own, with a Model on
 * a one-thread wasm backend (cli/sampler-thread-main.ts), over the messages of
 * worker/rollout/remote-sampler.ts. The trainer writes a version's weights into the thread's shared
 * wasm memory before the slot draws a batch (worker/rollout/shared-weights.ts), so the arithmetic
 * of sampling runs on another core while the trainer updates, and no message carries weights.
 * The thread keeps the process alive only while a request is pending.
 */
import { Worker } from 'node:worker_threads';
import type { ModelConfig } from '../worker/model/config';
import type { SamplerEndpoint } from '../worker/rollout/remote-sampler';
import { PortSampler } from '../worker/rollout/remote-sampler';

/** A started sampler thread, as the trainer's end of its messages (the bench and tests watch what crosses it). */
export function threadEndpoint(): SamplerEndpoint {
  const worker = new Worker(new URL('./sampler-thread.mjs', import.meta.url));
  return {
    postMessage: (m) => worker.postMessage(m),
    onMessage: (fn) => worker.on('message', fn),
    onFailure: (fn) => {
      worker.on('error', fn);
      worker.on('exit', (code) => fn(new Error(`exit ${code}`)));
    },
    terminate: () => void worker.terminate(),
    keepAlive: (on) => (on ? worker.ref() : worker.unref()),
  };
}

export function threadSampler(config: ModelConfig, endpoint: SamplerEndpoint = threadEndpoint()): PortSampler {
  return new PortSampler(endpoint, config, 'the sampler thread');
}
