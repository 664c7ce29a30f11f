import { describe, expect, it } from 'vitest';
import { nodeWasmOps } from '../kernels/wasm/node-wasm';
import { importCheckpoint } from '../worker/model/checkpoint';
import { readCheckpointDir } from '../worker/model/node-checkpoint-dir';
import type { GrpoConfig } from '../worker/train/grpo';
import { GRPO_ARITH, GrpoRun } from '../worker/train/grpo';
import { ThreadSampler } from './thread-sampler';

const CONFIG: GrpoConfig = { ...GRPO_ARITH, steps: 3, prompts: 4, group: 4, evalN: 4, staleness: 1 };

async function steps(threads: ThreadSampler[] | null) {
  const base = importCheckpoint(readCheckpointDir('public/checkpoints/arith-base'));
  const services = threads
    ? {
        remoteSampler: () => {
          const t = new ThreadSampler(base.config);
          threads.push(t);
          return t;
        },
      }
    : {};
  const run = new GrpoRun(await nodeWasmOps(1), CONFIG, base, services);
  const out = [];
  for (let i = 0; i < CONFIG.steps; i++) {
    const s = await run.next();
    out.push({
      metrics: Object.entries(s.metrics).filter(([k]) => !/^perf\/|idle_ratio$/.test(k)),
      ids: s.generated.map((g) => Array.from(g.sampledIds)),
      versions: s.sessions.map((x) => x.calls[0].version),
    });
  }
  run.close();
  return out;
}

describe('ThreadSampler: the batches sampled ahead drawn on worker threads', () => {
  it('gives, bit for bit, what sampler models in this thread give (staleness 1, 3 steps), one thread a slot', async () => {
    const threads: ThreadSampler[] = [];
    const onThreads = await steps(threads);
    expect(onThreads).toEqual(await steps(null));
    expect(onThreads.map((s) => [...new Set(s.versions)])).toEqual([[0], [0], [1]]);
    expect(threads).toHaveLength(2); // s + 1 slots
  });

  it('names the thread in a failure: weights of another shape are refused there', async () => {
    const base = importCheckpoint(readCheckpointDir('public/checkpoints/arith-base'));
    const t = new ThreadSampler(base.config);
    try {
      await expect(t.publish(new Map([['model.embed_tokens.weight', new Float32Array(3)]]))).rejects.toThrow(
        /^the sampler thread: Error: setWeights: /,
      );
    } finally {
      t.close();
    }
  });
});
