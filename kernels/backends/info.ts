/**
 * The backends' names and what selection reports about the one in use: types and one list, and
 * no imports, so that worker/protocol.ts (the app's view of the worker) can re-export them without
 * seeing the rest of kernels/. The one declaration of each: ops.ts, common/context.ts and
 * backends/select.ts take them from here. Not the selection itself (select.ts).
 */

/** The backends `Ops` has (kernels/ops.ts). */
export type BackendName = 'cpu' | 'webgpu' | 'wasm';

/** What may be asked for: a backend, or `auto` (the fastest available, see select.ts). */
export type BackendPreference = 'auto' | 'webgpu' | 'wasm' | 'cpu';
export const BACKEND_PREFERENCES: readonly BackendPreference[] = ['auto', 'webgpu', 'wasm', 'cpu'];

/**
 * Which build of the wasm kernels runs: `relaxed` (relaxed SIMD's fused multiply-add, where the
 * engine has it: Chrome ≥ 114) or `plain` (SIMD multiply then add). kernels/wasm/simd.ts chooses.
 */
export type WasmSimd = 'relaxed' | 'plain';

/** What the UI and `dewpoint info` show about the adapter. */
export interface AdapterSummary {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  isFallbackAdapter: boolean;
  /** Key limits of the device actually created (after raising them to the adapter's maxima). */
  limits: Record<string, number>;
  /** Features enabled on the device. */
  features: string[];
}

/** The probe's timings: milliseconds per repetition of its workload, by backend. */
interface BackendProbe {
  workload: string;
  msPerRep: Partial<Record<BackendName, number>>;
}

/** The backend selection chose, and why. */
export interface BackendInfo {
  backend: BackendName;
  /** The WebGPU adapter (when one was acquired, whichever backend won). */
  adapter: AdapterSummary | null;
  /** Why this backend: requested, software adapter, probe, or why the faster ones were unavailable. */
  reason: string;
  /** Why the CPU backend is in use (cpu backend only). */
  fallbackReason: string | null;
  /** The measured probe, when `auto` ran one. */
  probe: BackendProbe | null;
  /** Threads the kernels run on (wasm; 1 elsewhere). */
  threads: number;
  /** The wasm kernels' SIMD build (wasm only; null elsewhere). */
  simd: WasmSimd | null;
  /**
   * How the wasm backend splits an op across its threads and why (wasm only; null elsewhere): by the
   * op's size, each thread's part at least a minimum of work, smaller ops on the calling thread.
   */
  split: string | null;
}
