import { MessageChannel } from 'node:worker_threads';
import { serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import type { WasmOps } from '../../kernels/backends/wasm';
import { nodeWasmOps } from '../../kernels/wasm/node-wasm';
import { defaultWasmSimd } from '../../kernels/wasm/simd';
import { importCheckpoint } from '../model/checkpoint';
import { Model } from '../model/model';
import { readCheckpointDir } from '../model/node-checkpoint-dir';
import { generate } from './generate';
import { PortSampler, serveSampler } from './remote-sampler';
import type { SamplerEndpoint } from './remote-sampler';

/** A one-thread wasm backend over a shared memory, as a sampler's (whatever threads it is asked for). */
const sharedOps = (): Promise<WasmOps> => nodeWasmOps(1, defaultWasmSimd(), { shared: true });

/**
 * Both ends in this thread over a real MessageChannel (a Worker's channel without the Worker);
 * `posted` records each message to the sampler and the bytes its structured clone takes.
 */
function channel(opsFor: (threads: number) => Promise<WasmOps>) {
  const { port1, port2 } = new MessageChannel();
  const threads: number[] = [];
  const posted: { type: string; bytes: number }[] = [];
  serveSampler({ postMessage: (m) => port2.postMessage(m), onMessage: (fn) => port2.on('message', fn) }, (t) => {
    threads.push(t);
    return opsFor(t);
  });
  const end: SamplerEndpoint = {
    postMessage: (m) => {
      posted.push({ type: (m as { type: string }).type, bytes: serialize(m).byteLength });
      port1.postMessage(m);
    },
    onMessage: (fn) => port1.on('message', fn),
    onFailure: () => {},
    terminate: () => (port1.close(), port2.close()),
  };
  return { end, threads, posted };
}

describe('PortSampler and serveSampler: a sampler slot over a message port', () => {
  const base = importCheckpoint(readCheckpointDir('public/checkpoints/arith-base'));
  const prompts = [base.tokenizer.encode('12+7='), base.tokenizer.encode('3+4=')];
  const options = { maxNew: 6, temperature: 1, seed: 5, eos: base.tokenizer.eos };
  const ids = (g: { sampledIds: Int32Array }[]) => g.map((x) => Array.from(x.sampledIds));
  /** The base's weights with every value scaled: a second version that draws differently. */
  const scaled = new Map([...base.weights].map(([name, w]) => [name, w.map((x) => x * 0.5)]));

  it('draws, with the published weights, what generate draws on a model holding them; asks for the threads it was given', async () => {
    const { end, threads } = channel(sharedOps);
    const remote = new PortSampler(end, base.config, 'the sampler worker', 3);
    try {
      const draw = await remote.publish(0, base.weights);
      const here = new Model(await nodeWasmOps(1), base.config);
      here.setWeights(base.weights);
      const expected = await generate(here, prompts, options);
      const got = await draw(prompts, options);
      expect(ids(got)).toEqual(ids(expected));
      expect(got.map((g) => Array.from(g.behaviorLogProbs))).toEqual(
        expected.map((g) => Array.from(g.behaviorLogProbs)),
      );
      expect(threads).toEqual([3]);
    } finally {
      remote.close();
    }
  });

  it('posts no weights: a version is written into the shared memory, and each draw posts its prompts and options alone', async () => {
    const { end, posted } = channel(sharedOps);
    const remote = new PortSampler(end, base.config, 'the sampler worker');
    try {
      const weightBytes = [...base.weights.values()].reduce((n, w) => n + w.byteLength, 0);
      const first = await remote.publish(0, base.weights);
      const a = await first(prompts, options);
      await first(prompts, { ...options, seed: 6 });
      const second = await remote.publish(1, scaled);
      const c = await second(prompts, options);
      // The second version reached the sampler's model: the same draw under it differs.
      expect(ids(c)).not.toEqual(ids(a));
      expect(posted.map((p) => p.type)).toEqual(['init', 'generate', 'generate', 'generate']);
      // Two prompts and the options: a few hundred bytes, where the weights are 1000 times more.
      for (const p of posted) expect(p.bytes).toBeLessThan(weightBytes / 1000);
    } finally {
      remote.close();
    }
  });

  it('a draw refuses weights written over its version; a publish of the wrong shape is refused before writing anything', async () => {
    const { end } = channel(sharedOps);
    const remote = new PortSampler(end, base.config, 'the sampler worker');
    try {
      const first = await remote.publish(0, base.weights);
      const expected = ids(await first(prompts, options));
      const second = await remote.publish(1, scaled);
      await expect(first(prompts, options)).rejects.toThrow(
        /^the sampler worker: Error: a draw under weights version 0, before the draw: version 1 was \(a slot's weights/,
      );
      const wrong = new Map(base.weights).set('model.norm.weight', new Float32Array(3));
      await expect(remote.publish(2, wrong)).rejects.toThrow(
        /^the sampler worker: writeWeights: 'model.norm.weight' has 3 values, expected \d+$/,
      );
      // Version 1 is still held whole, and version 0 written again draws what it drew.
      expect(ids(await second(prompts, options))).not.toEqual(expected);
      expect(ids(await (await remote.publish(0, base.weights))(prompts, options))).toEqual(expected);
    } finally {
      remote.close();
    }
  });

  it('names where it runs and why its model could not start, on every publish', async () => {
    const { end } = channel(async () => {
      throw new Error('no wasm here');
    });
    const remote = new PortSampler(end, base.config, 'the sampler worker');
    try {
      for (const version of [0, 1])
        await expect(remote.publish(version, base.weights)).rejects.toThrow(
          /^the sampler worker: Error: its model could not start: Error: no wasm here$/,
        );
    } finally {
      remote.close();
    }
  });

  it('refuses a backend whose memory is not shared: the trainer could not write the weights there', async () => {
    const { end } = channel(() => nodeWasmOps(1));
    const remote = new PortSampler(end, base.config, 'the sampler worker');
    try {
      await expect(remote.publish(0, base.weights)).rejects.toThrow(
        /^the sampler worker: Error: its model could not start: Error: shareWeights: the wasm memory is not shared/,
      );
    } finally {
      remote.close();
    }
  });
});
