/**
 * A sampler that runs elsewhere (a Node worker thread: cli/thread-sampler.ts), one of the rollout
 * scheduler's slots (worker/train/scheduler.ts): the scheduler publishes a version's weights to it
 * before it draws a batch, and it draws as `generate` would on a model holding them.
 */
import type { Sampler } from './prompt-source';

export interface RemoteSampler {
  publish(weights: ReadonlyMap<string, Float32Array>): Promise<void>;
  sampler: Sampler;
  close(): void;
}
