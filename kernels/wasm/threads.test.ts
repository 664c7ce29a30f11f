import { describe, expect, it } from 'vitest';
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
