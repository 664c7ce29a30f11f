import { describe, expect, it } from 'vitest';
import { nodeThread, nodeWasmBinary } from './node-wasm';
import { WasmThreadPool, type ThreadPort } from './threads';

/** A fake helper thread (named so): says 'ready' when started and then never runs a part. */
function silentHelper(): ThreadPort {
  let listener: ((m: unknown) => void) | null = null;
  return {
    postMessage: (m) => {
      if ((m as { type: string }).type === 'start') queueMicrotask(() => listener?.({ type: 'ready' }));
    },
    onMessage: (fn) => {
      listener = fn;
    },
    terminate: () => {},
  };
}

describe('WasmThreadPool: the caller blocks, so it must not wait for ever', () => {
  it('calls a helper that never finishes its part lost, naming it and the limit', async () => {
    const pool = await WasmThreadPool.start({}, {}, 1, ['matmulRows'], silentHelper);
    let ranHere = 0;
    const parts = [
      { fn: 0, args: [] },
      { fn: 0, args: [] },
    ];
    expect(() => pool.run(parts, () => ranHere++, 50)).toThrow(/helper thread 0 did not finish its part within 0.05 s/);
    expect(ranHere).toBe(1);
  });

  it('refuses to run once closed instead of waking helpers that are gone', async () => {
    const pool = await WasmThreadPool.start({}, {}, 1, ['matmulRows'], silentHelper);
    pool.close();
    expect(() => pool.run([{ fn: 0, args: [] }], () => {})).toThrow(/pool is closed/);
  });
});

describe('WasmThreadPool: real helper threads', () => {
  // A helper used to read its slot's job number only after saying ready: a first job posted in
  // between was taken for one already seen and never ran (a caller blocked for ever; CI hung on it).
  it('runs the first job posted the moment every helper says ready, pool after pool', async () => {
    const module = new WebAssembly.Module((await nodeWasmBinary('ops-mt.wasm')) as Uint8Array<ArrayBuffer>);
    // matmulRows over no rows (m0 = m1 = 0): a real kernel call that touches nothing.
    const noop = { fn: 0, args: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0] };
    for (let k = 0; k < 20; k++) {
      const memory = new WebAssembly.Memory({ initial: 16, maximum: 256, shared: true });
      const pool = await WasmThreadPool.start(module, memory, 2, ['matmulRows'], nodeThread);
      try {
        let here = 0;
        pool.run([noop, noop, noop], () => here++, 20_000);
        expect(here).toBe(1);
      } finally {
        pool.close();
      }
    }
  });
});
