import { serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { nodeWasmOps } from '../kernels/wasm/node-wasm';
import { importCheckpoint } from '../worker/model/checkpoint';
import { readCheckpointDir } from '../worker/model/node-checkpoint-dir';
import type { GrpoRunOptions } from '../worker/contract/options';
import { GRPO_ARITH, GrpoRun } from '../worker/train/grpo';
import { GRPO_CALC, EpisodeRun } from '../worker/train/grpo-episodes';
import type { ModelConfig } from '../worker/model/config';
import type { PortSampler, RemoteSampler } from '../worker/rollout/remote-sampler';
import { threadEndpoint, threadSampler } from './thread-sampler';

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

  it('copies no weights per batch: a batch posts its prompts and options, and each version is written once into its slot', async () => {
    const base = importCheckpoint(readCheckpointDir('public/checkpoints/arith-base'));
    const posted: { slot: number; type: string; bytes: number }[] = [];
    const written: [slot: number, version: number][] = [];
    const slots: PortSampler[] = [];
    const remoteSampler = (config: ModelConfig): RemoteSampler => {
      const slot = slots.length;
      const end = threadEndpoint();
      const postMessage = (m: unknown) => {
        posted.push({ slot, type: (m as { type: string }).type, bytes: serialize(m).byteLength });
        end.postMessage(m);
      };
      const t = threadSampler(config, { ...end, postMessage });
      slots.push(t);
      return {
        publish: (version, w) => (written.push([slot, version]), t.publish(version, w)),
        close: () => t.close(),
      };
    };
    const run = new GrpoRun(await nodeWasmOps(1), { ...CONFIG, steps: 4, samplerWorker: true }, base, {
      remoteSampler,
    });
    for (let i = 0; i < 4; i++) await run.next();
    run.close();
    // Batches 1 and 2 draw version 0 on slots of their own; batch 3 version 1 on batch 1's slot, batch 4 version 2 on batch 2's.
    expect(written).toEqual([
      [0, 0],
      [1, 0],
      [0, 1],
      [1, 2],
    ]);
    // One init a slot (posted as each thread says it listens, in either order).
    expect(posted.filter((p) => p.type === 'init').map((p) => p.slot)).toHaveLength(2);
    expect(new Set(posted.filter((p) => p.type === 'init').map((p) => p.slot))).toEqual(new Set([0, 1]));
    expect(new Set(posted.map((p) => p.type))).toEqual(new Set(['init', 'generate']));
    // Every message of the run together is under a tenth of one copy of the weights (409 kB here).
    const weightBytes = [...base.weights.values()].reduce((n, w) => n + w.byteLength, 0);
    expect(posted.reduce((n, p) => n + p.bytes, 0)).toBeLessThan(weightBytes / 10);
  });

  it('names the thread in a failure: weights of another shape are refused before they are written there', async () => {
    const base = importCheckpoint(readCheckpointDir('public/checkpoints/arith-base'));
    const t = threadSampler(base.config);
    try {
      await expect(t.publish(0, new Map([['model.embed_tokens.weight', new Float32Array(3)]]))).rejects.toThrow(
        /^the sampler thread: writeWeights: 'model.embed_tokens.weight' has 3 values, expected \d+$/,
      );
    } finally {
      t.close();
    }
  });
});
