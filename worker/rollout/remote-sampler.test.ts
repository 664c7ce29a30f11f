import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { importCheckpoint } from '../model/checkpoint';
import { Model } from '../model/model';
import { readCheckpointDir } from '../model/node-checkpoint-dir';
import { generate } from './generate';
import { PortSampler, serveSampler } from './remote-sampler';
import type { SamplerEndpoint } from './remote-sampler';

/** Both ends in this thread over a real MessageChannel (a Worker's channel without the Worker). */
function channel(opsFor: (threads: number) => Promise<ReturnType<typeof createCpuOps>>): {
  end: SamplerEndpoint;
  threads: number[];
} {
  const { port1, port2 } = new MessageChannel();
  const threads: number[] = [];
  serveSampler({ postMessage: (m) => port2.postMessage(m), onMessage: (fn) => port2.on('message', fn) }, (t) => {
    threads.push(t);
    return opsFor(t);
  });
  const end: SamplerEndpoint = {
    postMessage: (m) => port1.postMessage(m),
    onMessage: (fn) => port1.on('message', fn),
    onFailure: () => {},
    terminate: () => (port1.close(), port2.close()),
  };
  return { end, threads };
}

describe('PortSampler and serveSampler: a sampler slot over a message port', () => {
  const base = importCheckpoint(readCheckpointDir('public/checkpoints/arith-base'));
  const prompts = [base.tokenizer.encode('12+7='), base.tokenizer.encode('3+4=')];
  const options = { maxNew: 6, temperature: 1, seed: 5, eos: base.tokenizer.eos };

  it('draws, with the published weights, what generate draws on a model holding them; asks for the threads it was given', async () => {
    const { end, threads } = channel(async () => createCpuOps());
    const remote = new PortSampler(end, base.config, 'the sampler worker', 3);
    try {
      await remote.publish(base.weights);
      const here = new Model(createCpuOps(), base.config);
      here.setWeights(base.weights);
      const expected = await generate(here, prompts, options);
      const got = await remote.sampler(prompts, options);
      expect(got.map((g) => Array.from(g.sampledIds))).toEqual(expected.map((g) => Array.from(g.sampledIds)));
      expect(got.map((g) => Array.from(g.behaviorLogProbs))).toEqual(
        expected.map((g) => Array.from(g.behaviorLogProbs)),
      );
      expect(threads).toEqual([3]);
    } finally {
      remote.close();
    }
  });

  it('names where it runs and why its model could not start, on every request after', async () => {
    const { end } = channel(async () => {
      throw new Error('no wasm here');
    });
    const remote = new PortSampler(end, base.config, 'the sampler worker');
    try {
      await expect(remote.publish(base.weights)).rejects.toThrow(
        /^the sampler worker: Error: its model could not start: Error: no wasm here$/,
      );
      await expect(remote.sampler(prompts, options)).rejects.toThrow(/^the sampler worker: .*no wasm here$/);
    } finally {
      remote.close();
    }
  });
});
