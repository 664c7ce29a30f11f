/**
 * The worker's API as the app sees it through comlink (types only, plus the list of error names).
 * Only `name`, `message` and `stack` of an Error survive comlink: the app switches on `name`,
 * and every name a worker error can carry is in ERROR_NAMES.
 */

export const ERROR_NAMES = [
  'GpuUnavailable',
  'GpuDeviceLost',
  'GpuValidationError',
  'GpuOutOfMemory',
  'ShaderCompileError',
  'NotInitialized',
] as const;
export type ErrorName = (typeof ERROR_NAMES)[number];

export type BackendName = 'cpu' | 'webgpu';
export type BackendPreference = 'auto' | 'webgpu' | 'cpu';

export interface AdapterSummary {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  isFallbackAdapter: boolean;
  /** Key limits of the device in use. */
  limits: Record<string, number>;
  /** Features enabled on the device. */
  features: string[];
}

export interface BackendInfo {
  backend: BackendName;
  /** The WebGPU adapter in use (webgpu backend only). */
  adapter: AdapterSummary | null;
  /** Why the CPU backend is in use (cpu backend only). */
  fallbackReason: string | null;
}

export interface SelfTestCase {
  /** e.g. `matmul_tiled nt 65x17x130`. */
  name: string;
  maxAbsError: number;
  tolerance: number;
  passed: boolean;
}

export interface SelfTestResult {
  backend: BackendName;
  passed: boolean;
  /** Largest |GPU − reference| over all cases. */
  maxAbsError: number;
  /** Throughput of the default matmul at `gflopsSize`³ on the active backend, median of runs. */
  gflops: number;
  gflopsSize: number;
  cases: SelfTestCase[];
  /** Milliseconds the whole self-test took. */
  ms: number;
}

export interface WorkbenchApi {
  /** Selects the backend (default `auto`) and reports it; safe to call again to switch. */
  init(preference?: BackendPreference): Promise<BackendInfo>;
  /** Runs matmul on the active backend against the CPU reference. */
  selfTest(): Promise<SelfTestResult>;
}
