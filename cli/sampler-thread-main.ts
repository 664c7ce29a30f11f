/**
 * The sampler thread (cli/thread-sampler.ts): worker/rollout/remote-sampler.ts's sampler end on a
 * one-thread wasm backend over a shared memory, which the trainer writes the weights into.
 */
import { parentPort } from 'node:worker_threads';
import { nodeWasmOps } from '../kernels/wasm/node-wasm';
import { defaultWasmSimd } from '../kernels/wasm/simd';
import { serveSampler } from '../worker/rollout/remote-sampler';

const port = parentPort!;
serveSampler({ postMessage: (m) => port.postMessage(m), onMessage: (fn) => port.on('message', fn) }, (threads) =>
  nodeWasmOps(threads, defaultWasmSimd(), { shared: true }),
);
