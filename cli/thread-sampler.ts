/**
 * A sampler on a Node worker thread (`train --sampler thread`, the `samplerWorker` option): one of
 * the scheduler's sampler slots (worker/train/scheduler.ts) as a thread of its own, with a Model on
 * a one-thread wasm backend (cli/sampler-thread-main.ts), over the messages of
 * worker/rollout/remote-sampler.ts. The trainer publishes a version's weights to a slot before the
 * slot draws a batch, so the arithmetic of sampling runs on another core while the trainer updates.
 * The thread keeps the process alive only while a request is pending.
 */
import { Worker } from 'node:worker_threads';
import type { ModelConfig } from '../worker/model/config';
import { PortSampler } from '../worker/rollout/remote-sampler';

export function threadSampler(config: ModelConfig): PortSampler {
  const worker = new Worker(new URL('./sampler-thread.mjs', import.meta.url));
  return new PortSampler(
    {
      postMessage: (m) => worker.postMessage(m),
      onMessage: (fn) => worker.on('message', fn),
      onFailure: (fn) => {
        worker.on('error', fn);
        worker.on('exit', (code) => fn(new Error(`exit ${code}`)));
      },
      terminate: () => void worker.terminate(),
      keepAlive: (on) => (on ? worker.ref() : worker.unref()),
    },
    config,
    'the sampler thread',
  );
}
