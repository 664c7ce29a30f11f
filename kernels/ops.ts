/**
 * The `Ops` interface: every tensor operation the model and the training step use, with two
 * backends selected at run time: `cpu` (the hand-written references over Float32Array) and
 * `webgpu` (the WGSL wrappers). Operations are recorded in order; `read` returns values after
 * everything recorded before it has run. Argument order: outputs, inputs, dims.
 */
import type { MatmulLayout, MatmulVariant } from './matmul/layout';

export type BackendName = 'cpu' | 'webgpu';

/** An opaque f32 tensor owned by one backend; shapes live with the caller. */
export interface Tensor {
  readonly backend: BackendName;
  readonly length: number;
  readonly label: string;
}

export interface MatmulOptions {
  /** Add to `out` instead of overwriting it (gradient accumulation). Default false. */
  accumulate?: boolean;
  /** Kernel choice on WebGPU; ignored on the CPU. Default 'auto'. */
  variant?: MatmulVariant;
}

export interface Ops {
  readonly backend: BackendName;
  alloc(label: string, length: number): Tensor;
  upload(t: Tensor, data: ArrayLike<number>): void;
  /** Values of `t` after all recorded work; rejects with `GpuDeviceLost` if the device is gone. */
  read(t: Tensor): Promise<Float32Array>;
  /** Submits recorded work without waiting for it. */
  flush(): Promise<void>;
  /** Waits until all recorded work has finished. */
  sync(): Promise<void>;
  free(t: Tensor): void;
  /**
   * out(M, N) (+)= op(A) · op(B). Layouts: nn A(M,K)·B(K,N); nt A(M,K)·B(N,K)ᵀ; tn A(K,M)ᵀ·B(K,N).
   */
  matmul(out: Tensor, a: Tensor, b: Tensor, M: number, K: number, N: number, layout: MatmulLayout, opts?: MatmulOptions): void;
}
