/**
 * The sampler thread (cli/thread-sampler.ts): a Model of the run's shape on its own one-thread
 * wasm backend, holding the weights last published to it, drawing with `generate` on request.
 * Messages: `{ id, type: 'weights', weights: [name, Float32Array][] }` and `{ id, type:
 * 'generate', prompts: number[][], options }` (GenerateOptions without its callback); each is
 * answered `{ id, generated? }` or `{ id, error }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { nodeWasmOps } from '../kernels/wasm/node-wasm';
import type { ModelConfig } from '../worker/model/config';
import { Model } from '../worker/model/model';
import type { GenerateOptions, Generated } from '../worker/rollout/generate';
import { generate } from '../worker/rollout/generate';

type Request =
  | { id: number; type: 'weights'; weights: [string, Float32Array][] }
  | { id: number; type: 'generate'; prompts: number[][]; options: GenerateOptions };

const port = parentPort!;
const model = new Model(await nodeWasmOps(1), (workerData as { config: ModelConfig }).config);
// One request at a time, in order: a generate never sees weights published after it was asked.
let queue = Promise.resolve();
port.on('message', (m: Request) => {
  queue = queue.then(async () => {
    try {
      if (m.type === 'weights') {
        model.setWeights(new Map(m.weights));
        port.postMessage({ id: m.id });
      } else {
        const generated: Generated[] = await generate(model, m.prompts, m.options);
        port.postMessage({ id: m.id, generated });
      }
    } catch (e) {
      port.postMessage({ id: m.id, error: `${(e as Error).name}: ${(e as Error).message}` });
    }
  });
});
port.postMessage({ id: 0 }); // ready
