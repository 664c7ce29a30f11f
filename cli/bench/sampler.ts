/**
 * `bench sampler [--model 30m-shape|smollm-135m-shape] [--runs N]`: what reaching a sampler worker
 * costs per batch (the `samplerWorker` option; worker/rollout/remote-sampler.ts), on a worker
 * thread (cli/thread-sampler.ts) holding a model of that shape (default smollm-135m-shape, 125M
 * parameters). For each of `runs` versions (default 3) the trainer's end publishes the weights,
 * written in place into the thread's shared wasm memory (worker/rollout/shared-weights.ts), and
 * draws one batch (4 prompts of 8 ids, 4 new ids each) under them. It counts the bytes of every
 * message posted to the thread as its structured clone takes them (`v8.serialize`), the init apart,
 * and times the write of a version. Beside them, the weights' own bytes: what each batch's message
 * carried before the weights were shared (the weights, cloned whole; the thread then uploaded them
 * into its wasm heap, a second copy). Random weights (params.ts `initialWeights`, seed 0).
 */
import { serialize } from 'node:v8';
import { mulberry32 } from '../../kernels/common/random';
import { initialWeights } from '../../worker/model/params';
import { median } from '../../worker/selftest';
import { threadEndpoint, threadSampler } from '../thread-sampler';
import type { BenchArgs } from './args';
import { MODEL_SHAPES } from './grpo-model';

const PROMPTS = 4;
const PROMPT_IDS = 8;
const MAX_NEW = 4;

export async function benchSampler(args: BenchArgs) {
  const shape = args.model ?? 'smollm-135m-shape';
  const { config } = MODEL_SHAPES[shape]; // index.ts checked the name
  const versions = args.runs ?? 3;
  process.stderr.write(`sampler: ${shape}: random weights\r`);
  const weights = initialWeights(config, 0);
  const weightBytes = [...weights.values()].reduce((n, w) => n + w.byteLength, 0);
  const posted: { type: string; bytes: number }[] = [];
  const end = threadEndpoint();
  const sampler = threadSampler(config, {
    ...end,
    postMessage: (m) => {
      posted.push({ type: (m as { type: string }).type, bytes: serialize(m).byteLength });
      end.postMessage(m);
    },
  });
  const rand = mulberry32(1);
  const prompts = Array.from({ length: PROMPTS }, () =>
    Array.from({ length: PROMPT_IDS }, () => Math.floor(rand() * config.vocab)),
  );
  const batches: { writeMs: number; postedBytes: number; drawMs: number }[] = [];
  try {
    for (let v = 0; v < versions; v++) {
      process.stderr.write(`sampler: ${shape}: version ${v + 1}/${versions}\r`);
      // The first publish waits for the thread to start its model; its write is timed apart from that.
      if (v === 0) await sampler.publish(0, weights);
      const t0 = performance.now();
      const draw = await sampler.publish(v, weights);
      const writeMs = performance.now() - t0;
      const before = posted.length;
      const t1 = performance.now();
      await draw(prompts, { maxNew: MAX_NEW, eos: 0, seed: v, temperature: 1 });
      const drawMs = performance.now() - t1;
      batches.push({ writeMs, drawMs, postedBytes: posted.slice(before).reduce((n, p) => n + p.bytes, 0) });
    }
  } finally {
    sampler.close();
  }
  process.stderr.write('\n');
  const init = posted.find((p) => p.type === 'init')!.bytes;
  const json = {
    bench: 'sampler',
    model: shape,
    parameters: weightBytes / 4,
    versions,
    batch: { prompts: PROMPTS, promptIds: PROMPT_IDS, maxNew: MAX_NEW },
    statistic: 'medians over the versions; bytes as v8.serialize (the structured clone) takes each message posted',
    weightBytes,
    initBytes: init,
    postedBytesPerBatch: median(batches.map((b) => b.postedBytes)),
    maxPostedBytesPerBatch: Math.max(...batches.map((b) => b.postedBytes)),
    writeMsPerVersion: median(batches.map((b) => b.writeMs)),
    drawMsPerBatch: median(batches.map((b) => b.drawMs)),
  };
  const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
  const table = [
    `sampler: a worker thread holding ${shape} (${(json.parameters / 1e6).toFixed(1)}M parameters), ${versions} versions, ` +
      `one batch of ${PROMPTS} × ${PROMPT_IDS} ids (+${MAX_NEW} new) each; medians`,
    '| weights (f32), what a batch posted before | posted per batch | init, once | write a version | draw a batch |',
    '|---|---|---|---|---|',
    `| ${mb(weightBytes)} | ${json.postedBytesPerBatch} B (max ${json.maxPostedBytesPerBatch} B) | ${init} B | ` +
      `${json.writeMsPerVersion.toFixed(0)} ms | ${json.drawMsPerBatch.toFixed(0)} ms |`,
  ].join('\n');
  return { table: `${table}\n`, json };
}
