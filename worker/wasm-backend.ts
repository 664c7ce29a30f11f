/**
 * The wasm backend in a browser worker (the trainer's, worker/main.ts, and each sampler worker's,
 * worker/sampler-worker.ts): on `threads` threads over a shared memory when the page is
 * cross-origin isolated (the dev server and `npm start` send COOP/COEP), else single-threaded; the
 * relaxed-SIMD build where the browser has it (kernels/wasm/simd.ts). Its binaries are bundled by
 * Vite from kernels/wasm/build (each URL written out whole, so that Vite sees it).
 */
import type { WasmOps } from '../kernels/backends/wasm';
import { createThreadedWasmOps, createWasmOps } from '../kernels/backends/wasm';
import { relaxedSimdAvailable } from '../kernels/wasm/simd';
import type { ThreadPort } from '../kernels/wasm/threads';

async function fetchBytes(url: URL): Promise<ArrayBuffer> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url.pathname}: HTTP ${res.status}`);
  return res.arrayBuffer();
}

/**
 * `shared`: over a shared memory even on one thread (a sampler worker's, whose weights the trainer
 * writes in place: worker/rollout/shared-weights.ts); refused on a page that is not cross-origin isolated.
 */
export async function browserWasmOps(threads: number, { shared = false }: { shared?: boolean } = {}): Promise<WasmOps> {
  const relaxed = relaxedSimdAvailable();
  if (shared && !self.crossOriginIsolated)
    throw new Error(
      'a shared wasm memory needs SharedArrayBuffer, which this page lacks: it is not cross-origin isolated ' +
        '(serve it with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp, as npm start does)',
    );
  if (self.crossOriginIsolated && (threads > 1 || shared)) {
    const spawn = (): ThreadPort => {
      const w = new Worker(new URL('../kernels/wasm/thread.mjs', import.meta.url), {
        type: 'module',
        name: 'dewpoint-wasm-thread',
      });
      return {
        postMessage: (m) => w.postMessage(m),
        onMessage: (fn) => w.addEventListener('message', (e) => fn(e.data)),
        onExit: (fn) => w.addEventListener('error', (e) => fn(e.message || 'the worker failed')),
        terminate: () => w.terminate(),
      };
    };
    return createThreadedWasmOps(
      await fetchBytes(
        relaxed
          ? new URL('../kernels/wasm/build/ops-mt-relaxed.wasm', import.meta.url)
          : new URL('../kernels/wasm/build/ops-mt.wasm', import.meta.url),
      ),
      threads,
      spawn,
    );
  }
  return createWasmOps(
    await fetchBytes(
      relaxed
        ? new URL('../kernels/wasm/build/ops-relaxed.wasm', import.meta.url)
        : new URL('../kernels/wasm/build/ops.wasm', import.meta.url),
    ),
  );
}
