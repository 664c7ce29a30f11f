/**
 * A sampler worker (the `samplerWorker` option in the browser): one of the scheduler's sampler
 * slots as a Web Worker beside the trainer's worker, which starts it (worker/main.ts). It holds a
 * Model of the run's shape on the wasm backend and draws the batches sampled ahead, so a trainer
 * on WebGPU (or on the other cores) updates while the CPU samples: worker/rollout/remote-sampler.ts.
 * Its backend's memory is shared (the page must be cross-origin isolated): the trainer writes each
 * version's weights into it in place (worker/rollout/shared-weights.ts).
 */
import { serveSampler } from './rollout/remote-sampler';
import { browserWasmOps } from './wasm-backend';

serveSampler(
  {
    postMessage: (m) => self.postMessage(m),
    onMessage: (fn) => self.addEventListener('message', (e) => fn((e as MessageEvent).data)),
  },
  (threads) => browserWasmOps(threads, { shared: true }),
);
