/**
 * The `Ops` interface: every tensor operation the model and the training step use, with two
 * backends selected at run time: `cpu` (the hand-written references over Float32Array) and
 * `webgpu` (the WGSL wrappers). Operations are recorded in order; `read` returns values after
 * everything recorded before it has run. Argument order: outputs, inputs, dims.
 */
import type { AdamWHyper } from './adamw/adamw.ref';
import type { BackendName } from './backends/info';
import type { CopyRange } from './common/dispatcher';
import type { DropoutOptions } from './dropout/dropout.ref';
import type { MatmulLayout, MatmulVariant } from './matmul/layout';
import type { SamplingOptions } from './sample/distribution.ref';
import type { SampleOutput } from './sample/sample.ref';

/** The backends' names, declared in backends/info.ts. */
export type { BackendName };

/** `sample`'s settings and result, declared with its reference (kernels/sample/). */
export type { SampleOutput, SamplingOptions };

export type DType = 'f32' | 'i32';

/** An opaque tensor owned by one backend; shapes live with the caller. */
export interface Tensor {
  readonly backend: BackendName;
  readonly dtype: DType;
  readonly length: number;
  readonly label: string;
}

/**
 * AdamW hyperparameters (PyTorch torch.optim.AdamW semantics, bias-corrected): `AdamWHyper`,
 * defined with the reference in adamw/adamw.ref.ts; `AdamWParams` is the same type.
 */
export type { AdamWHyper, AdamWHyper as AdamWParams };

interface MatmulOptions {
  /** Add to `out` instead of overwriting it (gradient accumulation). Default false. */
  accumulate?: boolean;
  /** Kernel choice on WebGPU; ignored on the CPU. Default 'auto'. */
  variant?: MatmulVariant;
}

/**
 * The operations of the training step. Shapes are given by the dims that follow the tensors.
 * Backward ops ACCUMULATE (+=) into their gradient outputs; callers zero gradients explicitly.
 */
export interface Ops {
  readonly backend: BackendName;
  alloc(label: string, length: number, dtype?: DType): Tensor;
  /** Writes values (f32 tensors) or integers (i32 tensors, bit-exact). */
  upload(t: Tensor, data: ArrayLike<number>): void;
  /** Values of `t` after all recorded work; rejects with `GpuDeviceLost` if the device is gone. */
  read(t: Tensor): Promise<Float32Array>;
  /** Sets every element to 0 (in order with the recorded work). */
  zero(t: Tensor): void;
  /** dst = src (same length), or `count` elements from `srcOffset` to `dstOffset`. */
  copy(dst: Tensor, src: Tensor, range?: CopyRange): void;
  /** Submits recorded work without waiting for it. */
  flush(): Promise<void>;
  /** Waits until all recorded work has finished. */
  sync(): Promise<void>;
  free(t: Tensor): void;
  /**
   * out(M, N) (+)= op(A) · op(B). Layouts: nn A(M,K)·B(K,N); nt A(M,K)·B(N,K)ᵀ; tn A(K,M)ᵀ·B(K,N).
   */
  matmul(
    out: Tensor,
    a: Tensor,
    b: Tensor,
    M: number,
    K: number,
    N: number,
    layout: MatmulLayout,
    opts?: MatmulOptions,
  ): void;

  /** out(N, C) = wte[ids] with ids (N) i32; ids outside 0..V-1 give zero rows. */
  embeddingForward(out: Tensor, ids: Tensor, wte: Tensor, N: number, C: number, V: number): void;
  /** dwte(V, C) += scatter of dout(N, C) by ids. */
  embeddingBackward(dwte: Tensor, dout: Tensor, ids: Tensor, N: number, C: number, V: number): void;
  /** out(N, C) = inp / rms(inp) · weight; rstd (N) saved for backward. */
  rmsnormForward(out: Tensor, rstd: Tensor, inp: Tensor, weight: Tensor, N: number, C: number, eps: number): void;
  rmsnormBackward(
    dinp: Tensor,
    dweight: Tensor,
    dout: Tensor,
    inp: Tensor,
    weight: Tensor,
    rstd: Tensor,
    N: number,
    C: number,
  ): void;
  /** out(N, NH, hs) = rope(inp) at positions (N) i32 (HF rotate_half convention); out ≠ inp. */
  ropeForward(out: Tensor, inp: Tensor, positions: Tensor, N: number, NH: number, hs: number, theta: number): void;
  ropeBackward(dinp: Tensor, dout: Tensor, positions: Tensor, N: number, NH: number, hs: number, theta: number): void;
  /**
   * Segment-aware causal attention; q, out (B, T, NH, hs); k, v (B, T, NKV, hs); lse (B, NH, T);
   * segmentIds (B, T) i32. Grouped-query attention: NKV divides NH and query head h reads kv head
   * h / (NH / NKV) (transformers' repeat_kv); NKV = NH is multi-head attention.
   */
  attentionForward(
    out: Tensor,
    lse: Tensor,
    q: Tensor,
    k: Tensor,
    v: Tensor,
    segmentIds: Tensor,
    B: number,
    T: number,
    NH: number,
    NKV: number,
    hs: number,
  ): void;
  /** dq (B, T, NH, hs), dk, dv (B, T, NKV, hs) +=; dk and dv of a kv head sum over its group of query heads. */
  attentionBackward(
    dq: Tensor,
    dk: Tensor,
    dv: Tensor,
    dout: Tensor,
    q: Tensor,
    k: Tensor,
    v: Tensor,
    out: Tensor,
    lse: Tensor,
    segmentIds: Tensor,
    B: number,
    T: number,
    NH: number,
    NKV: number,
    hs: number,
  ): void;
  /**
   * Sampling with a KV cache: out (B, NH, hs) = attention of q (B, NH, hs) over the cached keys and
   * values (B, L, NKV, hs) 0..lengths[b]−1 of its row (lengths (B) i32; 0 = inactive row, zeros).
   */
  attentionDecode(
    out: Tensor,
    q: Tensor,
    kCache: Tensor,
    vCache: Tensor,
    lengths: Tensor,
    B: number,
    L: number,
    NH: number,
    NKV: number,
    hs: number,
  ): void;
  /**
   * Appends one vector per row to a KV cache: cache[b, slots[b], :] = rows[b, :] for cache (B, L, KV),
   * rows (B, KV) and slots (B) i32, in one call (decoding's new k or v, written at each row's length).
   * A slot outside 0..L−1 throws where the backend can check it (cpu, wasm); WebGPU skips that row.
   */
  kvScatter(cache: Tensor, rows: Tensor, slots: Tensor, B: number, L: number, KV: number): void;
  /** out (n) = silu(gate) · up. */
  swigluForward(out: Tensor, gate: Tensor, up: Tensor, n: number): void;
  swigluBackward(dgate: Tensor, dup: Tensor, dout: Tensor, gate: Tensor, up: Tensor, n: number): void;
  /** out (n) = a + b. */
  residualForward(out: Tensor, a: Tensor, b: Tensor, n: number): void;
  /** dst (n) += src. */
  accumulate(dst: Tensor, src: Tensor, n: number): void;
  /**
   * out (n) (+)= x with a seeded dropout mask: each element kept (scaled by 1/(1 − p)) or zeroed by
   * a hash of (seed, offset + i), the same on every backend (kernels/dropout/dropout.ref.ts).
   */
  dropout(out: Tensor, x: Tensor, n: number, o: DropoutOptions): void;
  /** out (n) f32 = the bf16 values packed two to a word in `packed` (i32, ⌈n / 2⌉), exactly (kernels/bf16). */
  widenBf16(out: Tensor, packed: Tensor, n: number): void;
  /**
   * Per row of logits l (N, V), at inverse temperature `scale` s = 1/T (finite, > 0; default 1):
   * logp = log_softmax(s·l)[target] for targets (N) i32 (0 where target < 0), the entropy of
   * softmax(s·l), and lse = logsumexp(s·l) (verl's actor divides the logits by the temperature).
   */
  logprobForward(
    logp: Tensor,
    entropy: Tensor,
    lse: Tensor,
    logits: Tensor,
    targets: Tensor,
    N: number,
    V: number,
    scale?: number,
  ): void;
  /** dlogits(N, V) += s · dlogp_t · (onehot(target_t) − softmax(s·l)_t); `scale` s and `lse` as in the forward. */
  logprobBackward(
    dlogits: Tensor,
    dlogp: Tensor,
    logits: Tensor,
    targets: Tensor,
    lse: Tensor,
    N: number,
    V: number,
    scale?: number,
  ): void;
  /**
   * One id per row of logits (N, V) under `options` (temperature, top-k, top-p), drawn with
   * uniforms[r] in [0, 1) (NaN skips row r: id −1, log-prob NaN): the ids, their behaviour
   * log-probs (float64) and whether each row's distribution was filtered, bit for bit those of
   * `sampleRef` (kernels/sample/sample.ref.ts) on every backend. The logits stay where they are;
   * only N entries come back. Rejects a bad argument, or a row with a NaN or +∞ logit or none finite.
   */
  sample(
    logits: Tensor,
    uniforms: ArrayLike<number>,
    N: number,
    V: number,
    options: SamplingOptions,
  ): Promise<SampleOutput>;
  /** One AdamW step on param (n) with grad · gradScale[0] (gradScale (1), e.g. from clipScale). */
  adamw(param: Tensor, grad: Tensor, m: Tensor, v: Tensor, n: number, hp: AdamWHyper, gradScale: Tensor | null): void;
  /** out (1) = Σ over every tensor of Σ g². */
  gradNormSquared(out: Tensor, grads: readonly Tensor[]): void;
  /** scale (1) = min(1, maxNorm / (sqrt(normSq[0]) + 1e-6)). */
  clipScale(scale: Tensor, normSq: Tensor, maxNorm: number): void;
}
