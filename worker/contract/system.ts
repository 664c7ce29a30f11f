/**
 * The backend and the companion as the app sees them: which backend trains and why (the types
 * themselves are kernels/backends/info.ts's), the self-test, and the companion's health. Types
 * only; part of the contract protocol.ts re-exports.
 */
import type { BackendInfo, BackendName } from '../../kernels/backends/info';
export type { AdapterSummary, BackendInfo, BackendName, BackendPreference } from '../../kernels/backends/info';

/** What a run records of the backend that trained it (BackendInfo less the adapter's details). */
export type RunBackendChoice = Pick<BackendInfo, 'reason' | 'threads' | 'probe'>;

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

/** The companion as `GET /v1/health` describes it (companion/server.ts). */
export interface CompanionHealth {
  version: string;
  runner: string;
  workers: number;
  running: number;
  queue: number;
  queueLimit: number;
  networkIsolation: boolean;
  limits: { wallSeconds: number; cpuSeconds: number; memoryBytes: number; messageBytes: number };
  /**
   * What the runner contains, from its probe at start (companion/containment.ts `Containment`):
   * who programs run as, the process bound (null: none), one line per property. Absent from an older companion.
   */
  containment?: {
    networkIsolation: boolean;
    dedicatedUser: boolean;
    user: string;
    maxProcesses: number | null;
    notes: string[];
  };
  /** Environment sessions (`/v1/sessions`): open now, the most at once, the idle timeout. Absent from an older companion. */
  sessions?: { open: number; max: number; idleSeconds: number };
}

/** The worker's connection to the companion: where, and its health or why it cannot be reached. */
export type CompanionStatus =
  { url: string; connected: true; health: CompanionHealth } | { url: string; connected: false; error: string };
