import { describe, expect, it } from 'vitest';
import { nodeWasmOps } from '../kernels/wasm/node-wasm';
import { importCheckpoint } from '../worker/model/checkpoint';
import { readCheckpointDir } from '../worker/model/node-checkpoint-dir';
import type { GrpoRunOptions } from '../worker/contract/options';
import { GRPO_ARITH, GrpoRun } from '../worker/train/grpo';
import { GRPO_CALC, EpisodeRun } from '../worker/train/grpo-episodes';
import type { ModelConfig } from '../worker/model/config';
import type { PortSampler } from '../worker/rollout/remote-sampler';
import { threadSampler } from './thread-sampler';

const CONFIG: GrpoRunOptions = { ...GRPO_ARITH, steps: 3, prompts: 4, group: 4, evalN: 4, staleness: 1 };

async function steps(threads: PortSampler[] | null) {
  const base = importCheckpoint(readCheckpointDir('public/checkpoints/arith-base'));
  const services = {
    remoteSampler: (config: ModelConfig) => {
      const t = threadSampler(config);
      threads?.push(t);
      return t;
    },
  };
  const config = threads ? { ...CONFIG, samplerWorker: true } : CONFIG;
  const run = new GrpoRun(await nodeWasmOps(1), config, base, services);
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

describe('threadSampler: the batches sampled ahead drawn on worker threads', () => {
  it('gives, bit for bit, what sampler models in this thread give (staleness 1, 3 steps), one thread a slot', async () => {
    const threads: PortSampler[] = [];
    const onThreads = await steps(threads);
    expect(onThreads).toEqual(await steps(null));
    expect(onThreads.map((s) => [...new Set(s.versions)])).toEqual([[0], [0], [1]]);
    expect(threads).toHaveLength(2); // s + 1 slots
  });

  it('draws multi-turn episodes too: grpo-calc at staleness 1 gives, bit for bit, its in-thread numbers (2 steps)', async () => {
    const base = importCheckpoint(readCheckpointDir('public/checkpoints/calc-base'));
    const config = { ...GRPO_CALC, steps: 2, prompts: 2, group: 4, evalN: 4, filterGroups: undefined, staleness: 1 };
    const episodes = async (samplerWorker: boolean) => {
      let started = 0;
      const remoteSampler = (c: ModelConfig) => (started++, threadSampler(c));
      const run = new EpisodeRun(
        await nodeWasmOps(1),
        { environment: 'calc', options: { ...config, samplerWorker } },
        base,
        null,
        {
          remoteSampler,
        },
      );
      const out = [];
      for (let i = 0; i < 2; i++) {
        const s = await run.next();
        out.push({
          metrics: Object.entries(s.metrics).filter(([k]) => !/^perf\/|idle_ratio$/.test(k)),
          calls: s.sessions.map((x) => x.calls.map((c) => [c.version, ...Array.from(c.sampledIds)])),
        });
      }
      run.close();
      return { out, started };
    };
    const onThreads = await episodes(true);
    const here = await episodes(false);
    expect(onThreads.out).toEqual(here.out);
    expect([onThreads.started, here.started]).toEqual([2, 0]);
    // Every call of the second batch was sampled ahead, under version 0, and trained at version 1.
    expect(new Set(onThreads.out[1].calls.flatMap((session) => session.map((c) => c[0])))).toEqual(new Set([0]));
  });

  it('names the thread in a failure: weights of another shape are refused there', async () => {
    const base = importCheckpoint(readCheckpointDir('public/checkpoints/arith-base'));
    const t = threadSampler(base.config);
    try {
      await expect(t.publish(new Map([['model.embed_tokens.weight', new Float32Array(3)]]))).rejects.toThrow(
        /^the sampler thread: Error: setWeights: /,
      );
    } finally {
      t.close();
    }
  });
});
