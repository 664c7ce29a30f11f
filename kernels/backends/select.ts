/**
 * Run-time backend selection. A forced choice (`webgpu`, `wasm`, `cpu`) refuses rather than
 * falls back. `auto` takes the fastest available backend: wasm when the WebGPU adapter is a
 * software one (SwiftShader, a fallback adapter: a CPU emulating a GPU loses to SIMD on the same
 * CPU) or missing; on a hardware adapter, the faster of WebGPU and wasm on a short measured probe
 * shaped like a training step's matmuls. The CPU backend (the references) only when neither
 * WebGPU nor WebAssembly can be had. The result says why, with the probe's numbers.
 */
import { acquireGpu } from '../common/context';
import type { Ops } from '../ops';
import { createCpuOps } from './cpu';
import type { AdapterSummary, BackendInfo, BackendName, BackendPreference } from './info';
import type { WasmOps } from './wasm';
import { createWebGpuOps } from './webgpu';

// Declared in info.ts; re-exported for the callers of selection (cli/backend.ts).
export { BACKEND_PREFERENCES } from './info';
export type { BackendInfo, BackendPreference } from './info';

/** What selection may use: the WebGPU entry point, and a maker of the wasm backend (the host decides its threads). */
interface BackendSources {
  gpu?: GPU;
  wasm?: () => Promise<WasmOps>;
}

type SelectResult = { ok: true; ops: Ops; info: BackendInfo } | { ok: false; reason: string };

/** A software adapter: Chrome's and Dawn's SwiftShader, or any adapter flagged as a fallback. */
function isSoftwareAdapter(a: AdapterSummary): boolean {
  return a.isFallbackAdapter || /swiftshader/i.test(`${a.architecture} ${a.description} ${a.device}`);
}

async function loadWasm(sources: BackendSources): Promise<{ ok: true; ops: WasmOps } | { ok: false; reason: string }> {
  if (!sources.wasm) return { ok: false, reason: 'no wasm backend was supplied' };
  try {
    return { ok: true, ops: await sources.wasm() };
  } catch (e) {
    return { ok: false, reason: `the wasm backend failed to load: ${(e as Error).message}` };
  }
}

/** performance.now (kernels/ is typed without DOM or Node). */
const now = (): number => (globalThis as unknown as { performance: { now(): number } }).performance.now();

const PROBE = { M: 1024, K: 64, N: 176, reps: 3 };

/** Milliseconds per repetition of a forward/backward-shaped trio of matmuls (nt, nn, tn), after one warm-up. */
async function probeOps(ops: Ops): Promise<number> {
  const { M, K, N, reps } = PROBE;
  const x = ops.alloc('probe.x', M * K);
  const w = ops.alloc('probe.w', N * K);
  const y = ops.alloc('probe.y', M * N);
  const dx = ops.alloc('probe.dx', M * K);
  const dw = ops.alloc('probe.dw', N * K);
  ops.upload(
    x,
    Float32Array.from({ length: M * K }, (_, i) => Math.sin(i)),
  );
  ops.upload(
    w,
    Float32Array.from({ length: N * K }, (_, i) => Math.cos(i)),
  );
  const rep = () => {
    ops.matmul(y, x, w, M, K, N, 'nt');
    ops.matmul(dx, y, w, M, N, K, 'nn');
    ops.matmul(dw, y, x, N, M, K, 'tn');
  };
  rep();
  await ops.read(dw);
  const t0 = now();
  for (let r = 0; r < reps; r++) rep();
  await ops.read(dw);
  const ms = (now() - t0) / reps;
  [x, w, y, dx, dw].forEach((t) => ops.free(t));
  return ms;
}

export async function selectBackend(
  sources: BackendSources,
  preference: BackendPreference = 'auto',
): Promise<SelectResult> {
  const info = (backend: BackendName, reason: string, extra: Partial<BackendInfo> = {}): BackendInfo => ({
    backend,
    adapter: null,
    reason,
    fallbackReason: null,
    probe: null,
    threads: 1,
    simd: null,
    split: null,
    ...extra,
  });
  // What the info says of a wasm backend: its threads, its SIMD build and how it splits ops.
  const ofWasm = (ops: WasmOps) => ({ threads: ops.threads, simd: ops.simd, split: ops.splitPolicy });
  if (preference === 'cpu') {
    const reason = 'the CPU backend was requested';
    return { ok: true, ops: createCpuOps(), info: info('cpu', reason, { fallbackReason: reason }) };
  }
  if (preference === 'wasm') {
    const wasm = await loadWasm(sources);
    return wasm.ok
      ? {
          ok: true,
          ops: wasm.ops,
          info: info('wasm', 'the wasm backend was requested', ofWasm(wasm.ops)),
        }
      : wasm;
  }
  const acquired = await acquireGpu(sources.gpu);
  if (preference === 'webgpu') {
    if (!acquired.ok) return { ok: false, reason: acquired.reason };
    return {
      ok: true,
      ops: createWebGpuOps(acquired.ctx),
      info: info('webgpu', 'the WebGPU backend was requested', { adapter: acquired.ctx.adapter }),
    };
  }
  const wasm = await loadWasm(sources);
  if (!acquired.ok) {
    if (wasm.ok)
      return {
        ok: true,
        ops: wasm.ops,
        info: info('wasm', `no WebGPU: ${acquired.reason}`, ofWasm(wasm.ops)),
      };
    const reason = `no WebGPU (${acquired.reason}) and ${wasm.reason}`;
    return { ok: true, ops: createCpuOps(), info: info('cpu', reason, { fallbackReason: reason }) };
  }
  const adapter = acquired.ctx.adapter;
  if (!wasm.ok)
    return {
      ok: true,
      ops: createWebGpuOps(acquired.ctx),
      info: info('webgpu', `WebGPU, the only fast backend available (${wasm.reason})`, { adapter }),
    };
  if (isSoftwareAdapter(adapter)) {
    acquired.ctx.device.destroy();
    return {
      ok: true,
      ops: wasm.ops,
      info: info(
        'wasm',
        `the WebGPU adapter is a software one (${adapter.vendor}/${adapter.architecture}): wasm SIMD on the same CPU is faster`,
        { adapter, ...ofWasm(wasm.ops) },
      ),
    };
  }
  const gpuOps = createWebGpuOps(acquired.ctx);
  const workload = `${PROBE.reps} × matmul nt, nn, tn at ${PROBE.M}×${PROBE.K}×${PROBE.N}`;
  const msPerRep = { webgpu: await probeOps(gpuOps), wasm: await probeOps(wasm.ops) };
  const probe = { workload, msPerRep };
  const winner = msPerRep.wasm < msPerRep.webgpu ? 'wasm' : 'webgpu';
  const reason = `probe: webgpu ${msPerRep.webgpu.toFixed(2)} ms, wasm ${msPerRep.wasm.toFixed(2)} ms per repetition`;
  if (winner === 'wasm') {
    acquired.ctx.device.destroy();
    return {
      ok: true,
      ops: wasm.ops,
      info: info('wasm', reason, { adapter, probe, ...ofWasm(wasm.ops) }),
    };
  }
  wasm.ops.close();
  return { ok: true, ops: gpuOps, info: info('webgpu', reason, { adapter, probe }) };
}
