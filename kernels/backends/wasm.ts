/**
 * The `wasm` backend: tensors live in one WebAssembly linear memory and the ops run as
 * AssemblyScript kernels compiled with SIMD (kernels/wasm/assembly, built by
 * kernels/wasm/node-build.mjs). Like the CPU backend it runs each op at once, so `read` and `sync`
 * have nothing to wait for. The binary is handed in (`loadWasmBinary` in worker/, node-wasm.ts in
 * Node): kernels/ has no fetch and no file system.
 */
import { checkCopyRange } from '../common/dispatcher';
import { adamwScalars, checkAdamWSizes } from '../adamw/adamw.ref';
import { checkAttentionShapes } from '../attention/attention.ref';
import { checkAttentionDecodeShapes, checkDecodeLengths } from '../attention_decode/attention-decode.ref';
import { checkEmbeddingShapes, checkId } from '../embedding/embedding.ref';
import { checkKvScatterShapes, checkKvSlots } from '../kv_scatter/kv-scatter.ref';
import { checkOut, clipScaleRef } from '../gradnorm/gradnorm.ref';
import { checkLogprobScale, checkLogprobShapes, targetOf } from '../logprob/logprob.ref';
import { checkMatmulShapes } from '../matmul/matmul.ref';
import type { DType, Ops, Tensor } from '../ops';
import type { WasmSimd } from './info';
import { checkElementwise } from '../residual/residual.ref';
import { dropoutScalars } from '../dropout/dropout.ref';
import { checkBf16Shapes } from '../bf16/bf16.ref';
import { checkRmsnormEps, checkRmsnormShapes } from '../rmsnorm/rmsnorm.ref';
import { checkRopeShapes } from '../rope/rope.ref';
import { mulberry32 } from '../common/random';
import { checkSampleArgs, sampleLogitProblem, sampleRef } from '../sample/sample.ref';
import { WasmHeap } from '../wasm/heap';
import type { ThreadPort } from '../wasm/threads';
import { WasmThreadPool } from '../wasm/threads';
import { SplitTuner } from '../wasm/split-tuner';

/** The parts of the WebAssembly JS API this backend uses (kernels/ is built without DOM or Node types). */
export interface WasmMemory {
  readonly buffer: ArrayBufferLike;
  grow(pages: number): number;
}
interface WasmApi {
  Memory: new (d: { initial: number; maximum: number; shared?: boolean }) => WasmMemory;
  Module: new (bytes: ArrayBufferView | ArrayBuffer) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
const WA = (): WasmApi => {
  const api = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;
  if (!api) throw new Error('the wasm backend needs WebAssembly, which this environment lacks');
  return api;
};

/** The kernels' exports (kernels/wasm/assembly/index.ts). Pointers are byte offsets. */
interface Kernels {
  heapBase(): number;
  fusedMultiplyAdd(): number;
  matmulRows(
    out: number,
    a: number,
    b: number,
    M: number,
    K: number,
    N: number,
    acc: number,
    m0: number,
    m1: number,
  ): void;
  matmulNtRows(
    out: number,
    a: number,
    b: number,
    K: number,
    N: number,
    acc: number,
    m0: number,
    m1: number,
    n0: number,
    n1: number,
  ): void;
  matmulTnRows(
    out: number,
    a: number,
    b: number,
    M: number,
    K: number,
    N: number,
    acc: number,
    m0: number,
    m1: number,
    pack: number,
  ): void;
  matmulNtColumnAlign(): number;
  matmulTnPackBytes(K: number, rows: number): number;
  attentionForward(
    out: number,
    lse: number,
    q: number,
    k: number,
    v: number,
    seg: number,
    B: number,
    T: number,
    NH: number,
    NKV: number,
    hs: number,
    scores: number,
  ): void;
  attentionBackward(
    dq: number,
    dk: number,
    dv: number,
    dout: number,
    q: number,
    k: number,
    v: number,
    seg: number,
    B: number,
    T: number,
    NH: number,
    NKV: number,
    hs: number,
    scores: number,
    dps: number,
  ): void;
  attentionDecode(
    out: number,
    q: number,
    kc: number,
    vc: number,
    lengths: number,
    B: number,
    L: number,
    NH: number,
    NKV: number,
    hs: number,
    scores: number,
  ): void;
  kvScatter(cache: number, rows: number, slots: number, B: number, L: number, KV: number): void;
  rmsnormForward(out: number, rstd: number, inp: number, w: number, N: number, C: number, eps: number): void;
  rmsnormBackward(
    dinp: number,
    dw: number,
    dout: number,
    inp: number,
    w: number,
    rstd: number,
    N: number,
    C: number,
  ): void;
  rope(
    out: number,
    inp: number,
    positions: number,
    N: number,
    NH: number,
    hs: number,
    theta: number,
    backward: number,
    tab: number,
  ): void;
  swigluForward(out: number, gate: number, up: number, n: number): void;
  swigluBackward(dgate: number, dup: number, dout: number, gate: number, up: number, n: number): void;
  add(out: number, a: number, b: number, n: number): void;
  widenBf16(out: number, packed: number, n: number): void;
  dropout(
    out: number,
    x: number,
    n: number,
    key: number,
    threshold: number,
    offset: number,
    scale: number,
    acc: number,
  ): void;
  embeddingForward(out: number, ids: number, wte: number, N: number, C: number): void;
  embeddingBackward(dwte: number, dout: number, ids: number, N: number, C: number, V: number): void;
  logprobForward(
    logp: number,
    entropy: number,
    lse: number,
    logits: number,
    targets: number,
    N: number,
    V: number,
    scale: number,
  ): void;
  logprobBackward(
    dlogits: number,
    dlogp: number,
    logits: number,
    targets: number,
    lse: number,
    N: number,
    V: number,
    scale: number,
    dentropy: number,
    entropy: number,
    withEntropy: number,
  ): void;
  adamw(
    param: number,
    grad: number,
    m: number,
    v: number,
    n: number,
    scale: number,
    decay: number,
    omb1: number,
    beta2: number,
    omb2: number,
    stepSize: number,
    bc2Sqrt: number,
    eps: number,
  ): void;
  sumSquares(g: number, n: number): number;
  fillZero(p: number, bytes: number): void;
  sampleRows(
    ids: number,
    logp: number,
    flags: number,
    logits: number,
    uniforms: number,
    N: number,
    V: number,
    T: number,
    topK: number,
    topP: number,
    work: number,
  ): void;
  sampleWorkBytes(V: number): number;
  fdlibmExp(x: number): number;
  fdlibmExpInPlace(p: number, n: number): void;
  fdlibmLog(x: number): number;
}

/** 4 GiB, memory32's limit: the maximum the binaries declare (kernels/wasm/node-build.mjs). */
const MAX_PAGES = 65536;

interface WasmTensor extends Tensor {
  readonly backend: 'wasm';
  /** Byte offset of element 0 in the memory. */
  readonly ptr: number;
}

export interface WasmOps extends Ops {
  readonly backend: 'wasm';
  /** Threads the kernels run on (1: single-threaded). */
  readonly threads: number;
  /** The build the binary is (it says so itself): fused multiply-adds (`relaxed`) or not. */
  readonly simd: WasmSimd;
  /**
   * Null when `sample` runs the wasm kernel; otherwise why it runs the reference on the logits in
   * place (the kernels' exp or log differ from this engine's Math.exp/Math.log: sampleSelfCheck).
   */
  readonly sampleFallback: string | null;
  /** How ops are split across the threads, and why (shown with the backend: BackendInfo.split). */
  readonly splitPolicy: string;
  /** Ops that could split (matmul, attention, sampling) run so far, how many did, and the threshold now (SplitTuner). */
  splitStats(): { ops: number; split: number; minWork: number };
  /** Stops the helper threads (multi-threaded only); the ops must not be used after. */
  close(): void;
  /** Bytes held by live tensors now, and the most ever held. */
  memoryStats(): { liveBytes: number; peakBytes: number };
  /**
   * The linear memory the tensors live in, and a live tensor's byte offset in it. Over a shared
   * memory (createThreadedWasmOps) another thread may read or write a tensor in place: a sampler
   * worker's weights, which the trainer writes (worker/rollout/shared-weights.ts).
   */
  readonly memory: WasmMemory;
  byteOffset(t: Tensor): number;
}

/** The single-threaded backend over ops.wasm (`binary`: its bytes or a compiled module). */
export function createWasmOps(binary: ArrayBuffer | ArrayBufferView | object): WasmOps {
  const api = WA();
  const module = compile(api, binary);
  const memory = new api.Memory({ initial: 16, maximum: MAX_PAGES });
  return wasmOpsOver(api, module, memory, null, new SplitTuner(PART_MIN_WORK));
}

/**
 * The backend over ops-mt.wasm: a shared memory (SharedArrayBuffer: the page must be cross-origin
 * isolated) and `threads − 1` helper threads from `spawn`, none for one thread (the memory shared
 * with another agent alone: a sampler worker's). Matmuls split by rows, attention and sampling by
 * batch rows, into as many parts as have PART_MIN_WORK multiply-adds each, a threshold SplitTuner
 * raises while splits do not pay (`splitPolicy`); `partMinWork` pins it instead (tests pass 1 to
 * split every op that can be). The numbers are those of ops.wasm, bit for bit, whatever the split.
 */
export async function createThreadedWasmOps(
  binaryMt: ArrayBuffer | ArrayBufferView | object,
  threads: number,
  spawn: () => ThreadPort,
  { partMinWork }: { partMinWork?: number } = {},
): Promise<WasmOps> {
  if (!Number.isInteger(threads) || threads < 1)
    throw new Error(`createThreadedWasmOps: threads must be an integer ≥ 1, got ${threads}`);
  const api = WA();
  const module = compile(api, binaryMt);
  const memory = new api.Memory({ initial: 16, maximum: MAX_PAGES, shared: true });
  if (partMinWork !== undefined && !(partMinWork >= 1))
    throw new Error(`createThreadedWasmOps: partMinWork must be ≥ 1 (multiply-adds), got ${partMinWork}`);
  const pool = threads > 1 ? await WasmThreadPool.start(module, memory, threads - 1, PARALLEL, spawn) : null;
  const tuner = partMinWork === undefined ? new SplitTuner(PART_MIN_WORK) : new SplitTuner(partMinWork, partMinWork);
  return wasmOpsOver(api, module, memory, pool, tuner);
}

function compile(api: WasmApi, binary: ArrayBuffer | ArrayBufferView | object): object {
  return binary instanceof ArrayBuffer || ArrayBuffer.isView(binary) ? new api.Module(binary) : binary;
}

/** The kernels helper threads run, by index. */
const PARALLEL = [
  'matmulRows',
  'matmulNtRows',
  'matmulTnRows',
  'attentionForward',
  'attentionBackward',
  'attentionDecode',
  'sampleRows',
  'adamw',
  'logprobForward',
  'logprobBackward',
  'swigluForward',
  'swigluBackward',
] as const;
const fnIndex = (name: (typeof PARALLEL)[number]) => PARALLEL.indexOf(name);
/**
 * Multiply-adds each thread's part of an op needs before the op is split, on free cores: an op of w
 * runs in min(threads, ⌊w / PART_MIN_WORK⌋) parts, so one below 2·PART_MIN_WORK stays on the calling
 * thread. Handing a part to a helper costs about 10 µs when a core is free (Atomics.notify, the
 * helper's wake-up, the caller's wait); 2²¹ multiply-adds are 100–200 µs of work, which pays for it.
 * On busy cores a helper wakes a scheduler slice later (ms) and the caller's wait costs another:
 * SplitTuner raises the threshold while the splits near it measure no speedup. One threshold of
 * the whole op's size (2¹⁸, before) split a 100k model's decoding matmuls (0.5–1.5M multiply-adds)
 * in two, and on this project's shared 2-core machine two threads lost to one.
 */
const PART_MIN_WORK = 1 << 21;
/**
 * Below this many rows an A·Bᵀ splits N's columns (in multiples of the kernel's block of B's rows,
 * matmulNtColumnAlign), not M's rows: split by rows, every thread read all of B, so a decoding step
 * (32 rows against megabytes of weights per matrix) streamed the model's weights once per thread.
 */
const NT_SPLIT_ROWS_FROM = 128;
/** Multiply-adds one logit of Ops.sample is worth (two fdlibm exps and two divisions, ~100 cycles). */
const SAMPLE_WORK_PER_LOGIT = 128;
/** Multiply-adds one logit of logprobForward or logprobBackward is worth (one or two exps in f64). */
const LOGPROB_WORK_PER_LOGIT = 64;
/** Multiply-adds one element of SwiGLU is worth (an f64 exp and a division: ~60, measured against the matmuls at 135M). */
const SWIGLU_WORK_PER_ELEMENT = 64;
/** Multiply-adds one element of AdamW is worth (f64 square root and two divisions, two to a vector). */
const ADAMW_WORK_PER_ELEMENT = 8;

/**
 * Why the sampling kernel cannot stand in for the reference here, or null: its exp and log
 * (kernels/wasm/assembly/fdlibm.ts, V8's fdlibm) against this engine's Math.exp and Math.log on
 * the ranges sampling feeds them (scaled logits ≤ 0, sums ≥ 1) and on seeded values and edge
 * cases elsewhere, bit for bit. An engine whose Math differs (another libm) gets the reference.
 */
export function sampleSelfCheck(
  k: Pick<Kernels, 'fdlibmExp' | 'fdlibmLog'>,
  /** The kernels' two-lane exp (fdlibmExp2) over an array: the path the sampling kernel takes most. */
  expPairs: (xs: Float64Array) => Float64Array,
): string | null {
  const rand = mulberry32(0x5eed);
  const xs = [
    0,
    -0,
    1,
    -1,
    0.5,
    -0.5,
    2 ** -30,
    -(2 ** -30),
    709.78,
    709.79,
    -745.1,
    -745.2,
    -708.5,
    Infinity,
    -Infinity,
  ];
  for (let i = 0; i < 512; i++) xs.push(-60 * rand(), -750 * rand(), 1420 * rand() - 710, (rand() - 0.5) * 2 ** -20);
  for (let i = 0; i < 256; i++) xs.push(-2 * rand(), -0.5 * rand(), -(2 ** (-40 * rand())));
  const pairs = expPairs(Float64Array.from(xs));
  for (const [i, x] of xs.entries()) {
    const [got, want] = [k.fdlibmExp(x), Math.exp(x)];
    if (!Object.is(got, want)) return `the kernels' exp(${x}) = ${got}, this engine's Math.exp gives ${want}`;
    if (!Object.is(pairs[i], want))
      return `the kernels' two-lane exp(${x}) = ${pairs[i]}, this engine's Math.exp gives ${want}`;
  }
  const ys = [1, 2, 0.5, 2 ** -1074, 2 ** -1022, Number.MAX_VALUE, 1 + 2 ** -52, 1 - 2 ** -53, Infinity, 0];
  for (let i = 0; i < 512; i++)
    ys.push(1 + 32000 * rand(), Math.exp(1400 * rand() - 700), 1 + (rand() - 0.5) * 2 ** -18);
  for (const y of ys) {
    const [got, want] = [k.fdlibmLog(y), Math.log(y)];
    if (!Object.is(got, want)) return `the kernels' log(${y}) = ${got}, this engine's Math.log gives ${want}`;
  }
  return null;
}

/** performance.now (kernels/ is typed without DOM or Node). */
const now = (): number => (globalThis as unknown as { performance: { now(): number } }).performance.now();

/** `n` in millions (2.1M), or as is below a million. */
const mega = (n: number): string => (n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : `${n}`);

/** [start, end) ranges splitting 0..n into at most `parts` pieces, each a multiple of `align` but the last. */
function split(n: number, parts: number, align: number): [number, number][] {
  const per = Math.ceil(n / parts / align) * align;
  const out: [number, number][] = [];
  for (let s = 0; s < n; s += per) out.push([s, Math.min(n, s + per)]);
  return out;
}

function wasmOpsOver(
  api: WasmApi,
  module: object,
  memory: WasmMemory,
  pool: WasmThreadPool | null,
  tuner: SplitTuner,
): WasmOps {
  const abort = () => {
    throw new Error('wasm kernel aborted');
  };
  const k = new api.Instance(module, { env: { memory, abort } }).exports as unknown as Kernels;
  const heap = new WasmHeap(memory, k.heapBase(), MAX_PAGES * 65536);
  let buffer: ArrayBufferLike | null = null;
  let f32v: Float32Array = new Float32Array(0);
  let i32v: Int32Array = new Int32Array(0);
  const refresh = () => {
    if (buffer !== memory.buffer) {
      buffer = memory.buffer;
      f32v = new Float32Array(buffer);
      i32v = new Int32Array(buffer);
    }
  };
  const live = new Set<WasmTensor>();
  const tensor = (t: Tensor, dtype: DType | null = null): WasmTensor => {
    if (t.backend !== 'wasm') throw new Error(`wasm backend got a '${t.backend}' tensor '${t.label}'`);
    if (!live.has(t as WasmTensor)) throw new Error(`wasm tensor '${t.label}' was freed`);
    if (dtype && t.dtype !== dtype) throw new Error(`'${t.label}' is ${t.dtype}; this operand must be ${dtype}`);
    return t as WasmTensor;
  };
  /** Pointer of an f32 operand. */
  const p = (t: Tensor): number => tensor(t, 'f32').ptr;
  /** A view of an f32 tensor (valid until the memory grows: take views after any alloc). */
  const d = (t: Tensor): Float32Array => {
    const w = tensor(t, 'f32');
    refresh();
    return f32v.subarray(w.ptr >>> 2, (w.ptr >>> 2) + w.length);
  };
  const ints = (t: Tensor): Int32Array => {
    const w = tensor(t, 'i32');
    refresh();
    return i32v.subarray(w.ptr >>> 2, (w.ptr >>> 2) + w.length);
  };
  /** Pointer of an i32 operand. */
  const i = (t: Tensor): number => tensor(t, 'i32').ptr;
  const checkTargets = (targets: Tensor, N: number, V: number) => {
    const tv = ints(targets);
    for (let t = 0; t < N; t++) targetOf(tv, t, V);
  };
  const view = (t: Tensor): Float32Array | Int32Array => (t.dtype === 'i32' ? ints(t) : d(t));
  // Scratch for one op at a time (softmax rows, f64 accumulators): grown as needed, kept.
  let scratch = { ptr: -1, bytes: 0 };
  const scratchOf = (bytes: number): number => {
    if (bytes > scratch.bytes) {
      if (scratch.ptr >= 0) heap.release(scratch.ptr);
      scratch = { ptr: heap.alloc(bytes).ptr, bytes };
    }
    return scratch.ptr;
  };

  const threads = pool?.size ?? 1;
  /** The work of the op `partsFor` was last asked about: the op `parallel` runs next (each op calls both, in turn). */
  let opWork = 0;
  /** Parts for an op of `work` multiply-adds over `units` splittable rows (SplitTuner). */
  const partsFor = (work: number, units: number): number => {
    opWork = work;
    return tuner.parts(work, units, threads);
  };
  /** Ranges of n independent elements (multiples of 4) for an op of `workPerElement` multiply-adds an element. */
  const elementRanges = (n: number, workPerElement: number) =>
    split(n, partsFor(n * workPerElement, Math.ceil(n / 4)), 4);
  const splitStats = { ops: 0, split: 0 };
  /**
   * Runs kernel `fn` once per range of `split`, across the threads or all on this one; `perPart`
   * gives part j's arguments. A split op's timing goes to the tuner.
   */
  const parallel = (
    fn: (typeof PARALLEL)[number],
    ranges: [number, number][],
    perPart: (range: [number, number], j: number) => number[],
  ) => {
    const here = (args: number[]) => (k[fn] as (...a: number[]) => void)(...args);
    splitStats.ops++;
    if (!pool || ranges.length < 2) {
      ranges.forEach((r, j) => here(perPart(r, j)));
      return;
    }
    splitStats.split++;
    let hereMs = 0;
    const t0 = now();
    pool.run(
      ranges.map((r, j) => ({ fn: fnIndex(fn), args: perPart(r, j) })),
      (part) => {
        const t = now();
        here(part.args);
        hereMs = now() - t;
      },
    );
    tuner.record(ranges.length, opWork / ranges.length, hereMs, now() - t0);
  };
  const splitPolicy =
    threads === 1
      ? 'one thread: every op runs on the calling thread'
      : `an op splits across up to ${threads} threads when each gets ≥ ${mega(tuner.base)} multiply-adds of it, ` +
        'smaller ones run on the calling thread (handing a part to a helper costs ~10 µs on a free core)' +
        (tuner.max > tuner.base
          ? '; the threshold doubles while such splits measure no speedup (busy cores wake helpers late) and comes back when they do'
          : ' (pinned)');
  const sampleFallback = sampleSelfCheck(k, (xs) => {
    const at = scratchOf(xs.length * 8);
    new Float64Array(memory.buffer, at, xs.length).set(xs);
    k.fdlibmExpInPlace(at, xs.length);
    return new Float64Array(memory.buffer, at, xs.length).slice();
  });

  return {
    backend: 'wasm',
    threads,
    simd: k.fusedMultiplyAdd() ? 'relaxed' : 'plain',
    sampleFallback,
    splitPolicy,
    splitStats: () => ({ ...splitStats, minWork: tuner.minWork }),
    close: () => pool?.close(),
    memoryStats: () => ({ liveBytes: heap.liveBytes, peakBytes: heap.peakBytes }),
    memory,
    byteOffset: (t) => tensor(t).ptr,
    alloc(label, length, dtype: DType = 'f32') {
      if (!Number.isInteger(length) || length < 0)
        throw new Error(`alloc '${label}': length must be a non-negative integer, got ${length}`);
      const { ptr, dirty } = heap.alloc(length * 4);
      const t: WasmTensor = { backend: 'wasm', dtype, label, length, ptr };
      live.add(t);
      // Every tensor starts zeroed; memory never handed out before already is.
      if (dirty > 0) view(t).fill(0, 0, Math.ceil(dirty / 4));
      return t;
    },
    upload(t, data) {
      const target = view(t);
      if (data.length !== target.length)
        throw new Error(`upload to '${t.label}': expected ${target.length} values, got ${data.length}`);
      target.set(data);
    },
    async read(t) {
      return Float32Array.from(view(t));
    },
    async flush() {},
    async sync() {},
    free(t) {
      const w = tensor(t);
      live.delete(w);
      heap.release(w.ptr);
    },
    zero(t) {
      // A memset in the kernels: Float32Array.fill over the shared memory took 2 s a step at 135M.
      const w = tensor(t, t.dtype === 'i32' ? 'i32' : 'f32');
      k.fillZero(w.ptr, w.length * 4);
    },
    copy(dst, src, range) {
      const r = checkCopyRange(src, dst, range);
      const s = view(src);
      view(dst).set(s.subarray(r.srcOffset, r.srcOffset + r.count), r.dstOffset);
    },
    matmul(out, a, b, M, K, N, layout, opts) {
      checkMatmulShapes(out.length, a.length, b.length, M, K, N, layout);
      const acc = opts?.accumulate ? 1 : 0;
      if (M === 0 || N === 0) return;
      if (K === 0) {
        if (!acc) d(out).fill(0, 0, M * N);
        return;
      }
      const [po, pa] = [p(out), p(a)];
      const pb = p(b);
      // A·Bᵀ as dot products of rows (both contiguous along K); the others on (K, N) rows of B.
      if (layout === 'nt' && M < NT_SPLIT_ROWS_FROM) {
        // A decoding step's few rows: parts take N's columns, each streaming its share of B once.
        const align = k.matmulNtColumnAlign();
        const cols = split(N, partsFor(M * K * N, Math.ceil(N / align)), align);
        parallel('matmulNtRows', cols, ([n0, n1]) => [po, pa, pb, K, N, acc, 0, M, n0, n1]);
        return;
      }
      const ranges = split(M, partsFor(M * K * N, Math.ceil(M / 4)), 4);
      if (layout === 'nt') parallel('matmulNtRows', ranges, ([m0, m1]) => [po, pa, pb, K, N, acc, m0, m1, 0, N]);
      else if (layout === 'nn') parallel('matmulRows', ranges, ([m0, m1]) => [po, pa, pb, M, K, N, acc, m0, m1]);
      else {
        // Each part packs its panels of A into scratch of its own, sized to the op (the memory plan
        // counts tensors, not this).
        const bytes = k.matmulTnPackBytes(K, ranges[0][1] - ranges[0][0]);
        const pack = scratchOf(ranges.length * bytes);
        parallel('matmulTnRows', ranges, ([m0, m1], j) => [po, pa, pb, M, K, N, acc, m0, m1, pack + j * bytes]);
      }
    },
    embeddingForward(out, ids, wte, N, C, V) {
      checkEmbeddingShapes('embeddingForward', { rows: out.length, ids: ids.length, table: wte.length }, N, C, V);
      const idv = ints(ids);
      for (let n = 0; n < N; n++) checkId('embeddingForward', idv, n, V);
      k.embeddingForward(p(out), i(ids), p(wte), N, C);
    },
    embeddingBackward(dwte, dout, ids, N, C, V) {
      checkEmbeddingShapes('embeddingBackward', { rows: dout.length, ids: ids.length, table: dwte.length }, N, C, V, {
        rows: 'dout',
        table: 'dwte',
      });
      const idv = ints(ids);
      for (let n = 0; n < N; n++) checkId('embeddingBackward', idv, n, V);
      k.embeddingBackward(p(dwte), p(dout), i(ids), N, C, V);
    },
    rmsnormForward(out, rstd, inp, w, N, C, eps) {
      checkRmsnormShapes('rmsnormForward', { out, inp }, { rstd }, { weight: w }, N, C);
      checkRmsnormEps(eps);
      k.rmsnormForward(p(out), p(rstd), p(inp), p(w), N, C, eps);
    },
    rmsnormBackward(dinp, dw, dout, inp, w, rstd, N, C) {
      checkRmsnormShapes('rmsnormBackward', { dinp, dout, inp }, { rstd }, { dweight: dw, weight: w }, N, C);
      k.rmsnormBackward(p(dinp), p(dw), p(dout), p(inp), p(w), p(rstd), N, C);
    },
    ropeForward(out, inp, pos, N, NH, hs, theta) {
      checkRopeShapes('ropeForward', out.length, inp.length, pos.length, N, NH, hs, theta);
      k.rope(p(out), p(inp), i(pos), N, NH, hs, theta, 0, scratchOf(hs * 4));
    },
    ropeBackward(dinp, dout, pos, N, NH, hs, theta) {
      checkRopeShapes('ropeBackward', dinp.length, dout.length, pos.length, N, NH, hs, theta);
      k.rope(p(dinp), p(dout), i(pos), N, NH, hs, theta, 1, scratchOf(hs * 4));
    },
    attentionForward(out, lse, q, kk, v, seg, B, T, NH, NKV, hs) {
      checkAttentionShapes('attentionForward', { out, lse, q, k: kk, v, segmentIds: seg }, B, T, NH, NKV, hs);
      // Batch rows are independent: each part takes rows [b0, b1) through offset pointers, and its own scratch.
      // Work: q·k and p·v over the causal half of T × T, per head.
      const ranges = split(B, partsFor(B * T * T * NH * hs, B), 1);
      const scores = scratchOf(ranges.length * T * 4);
      const [po, pl, pq, pk, pv, ps] = [p(out), p(lse), p(q), p(kk), p(v), i(seg)];
      const [row, kvRow] = [T * NH * hs * 4, T * NKV * hs * 4];
      parallel('attentionForward', ranges, ([b0, b1], j) => [
        po + b0 * row,
        pl + b0 * NH * T * 4,
        pq + b0 * row,
        pk + b0 * kvRow,
        pv + b0 * kvRow,
        ps + b0 * T * 4,
        b1 - b0,
        T,
        NH,
        NKV,
        hs,
        scores + j * T * 4,
      ]);
    },
    attentionBackward(dq, dk, dv, dout, q, kk, v, out, lse, seg, B, T, NH, NKV, hs) {
      checkAttentionShapes(
        'attentionBackward',
        { dq, dk, dv, dout, q, k: kk, v, out, lse, segmentIds: seg },
        B,
        T,
        NH,
        NKV,
        hs,
      );
      const ranges = split(B, partsFor(2 * B * T * T * NH * hs, B), 1); // twice the forward's products
      const scores = scratchOf(ranges.length * T * 8);
      const [pdq, pdk, pdv, pdo, pq, pk, pv, ps] = [p(dq), p(dk), p(dv), p(dout), p(q), p(kk), p(v), i(seg)];
      const [row, kvRow] = [T * NH * hs * 4, T * NKV * hs * 4];
      parallel('attentionBackward', ranges, ([b0, b1], j) => [
        pdq + b0 * row,
        pdk + b0 * kvRow,
        pdv + b0 * kvRow,
        pdo + b0 * row,
        pq + b0 * row,
        pk + b0 * kvRow,
        pv + b0 * kvRow,
        ps + b0 * T * 4,
        b1 - b0,
        T,
        NH,
        NKV,
        hs,
        scores + j * T * 8,
        scores + j * T * 8 + T * 4,
      ]);
    },
    attentionDecode(out, q, kc, vc, lengths, B, L, NH, NKV, hs) {
      checkAttentionDecodeShapes('attentionDecode', { out, q, kCache: kc, vCache: vc, lengths }, B, L, NH, NKV, hs);
      checkDecodeLengths(ints(lengths), B, L);
      const ranges = split(B, partsFor(2 * B * L * NH * hs, B), 1);
      const scores = scratchOf(ranges.length * L * 4);
      const [po, pq, pk, pv, pl] = [p(out), p(q), p(kc), p(vc), i(lengths)];
      const [head, kvHead] = [NH * hs * 4, NKV * hs * 4];
      parallel('attentionDecode', ranges, ([b0, b1], j) => [
        po + b0 * head,
        pq + b0 * head,
        pk + b0 * L * kvHead,
        pv + b0 * L * kvHead,
        pl + b0 * 4,
        b1 - b0,
        L,
        NH,
        NKV,
        hs,
        scores + j * L * 4,
      ]);
    },
    kvScatter(cache, rows, slots, B, L, KV) {
      // B row copies of KV floats: too little work to pay for waking a helper thread.
      checkKvScatterShapes('kvScatter', { cache, rows, slots }, B, L, KV);
      checkKvSlots(ints(slots), B, L);
      k.kvScatter(p(cache), p(rows), i(slots), B, L, KV);
    },
    swigluForward(out, gate, up, n) {
      checkElementwise('swigluForward', n, { out, gate, up });
      // Elements are independent: each part takes [j0, j1) through offset pointers.
      const ranges = elementRanges(n, SWIGLU_WORK_PER_ELEMENT);
      const [po, pg, pu] = [p(out), p(gate), p(up)];
      parallel('swigluForward', ranges, ([j0, j1]) => [po + j0 * 4, pg + j0 * 4, pu + j0 * 4, j1 - j0]);
    },
    swigluBackward(dgate, dup, dout, gate, up, n) {
      checkElementwise('swigluBackward', n, { dgate, dup, dout, gate, up });
      const ranges = elementRanges(n, 2 * SWIGLU_WORK_PER_ELEMENT);
      const [pdg, pdu, pdo, pg, pu] = [p(dgate), p(dup), p(dout), p(gate), p(up)];
      parallel('swigluBackward', ranges, ([j0, j1]) => [pdg, pdu, pdo, pg, pu].map((q) => q + j0 * 4).concat(j1 - j0));
    },
    residualForward(out, a, b, n) {
      checkElementwise('residualForward', n, { out, a, b });
      k.add(p(out), p(a), p(b), n);
    },
    accumulate(dst, src, n) {
      checkElementwise('accumulate', n, { dst, src });
      k.add(p(dst), p(dst), p(src), n);
    },
    widenBf16(out, packed, n) {
      checkBf16Shapes(n, out, packed);
      k.widenBf16(p(out), i(packed), n);
    },
    dropout(out, x, n, o) {
      checkElementwise('dropout', n, { out, x });
      if (out === x) throw new Error('dropout: out and x must be different tensors');
      const { key, threshold, scale } = dropoutScalars('dropout', o);
      k.dropout(p(out), p(x), n, key, threshold, o.offset, scale, o.accumulate ? 1 : 0);
    },
    logprobForward(logp, entropy, lse, logits, targets, N, V, scale = 1) {
      checkLogprobShapes(
        'logprobForward',
        { logp: logp.length, entropy: entropy.length, lse: lse.length, logits: logits.length, targets: targets.length },
        N,
        V,
      );
      checkLogprobScale('logprobForward', scale);
      checkTargets(targets, N, V);
      // Rows are independent: each part takes rows [r0, r1) through offset pointers.
      const ranges = split(N, partsFor(N * V * LOGPROB_WORK_PER_LOGIT, N), 1);
      const [pl, pe, ps, pz, pt] = [p(logp), p(entropy), p(lse), p(logits), i(targets)];
      parallel('logprobForward', ranges, ([r0, r1]) => [
        pl + r0 * 4,
        pe + r0 * 4,
        ps + r0 * 4,
        pz + r0 * V * 4,
        pt + r0 * 4,
        r1 - r0,
        V,
        scale,
      ]);
    },
    logprobBackward(dlogits, dlogp, logits, targets, lse, N, V, scale = 1, entropyGrad) {
      const sizes: Record<string, number> = {
        dlogits: dlogits.length,
        dlogp: dlogp.length,
        logits: logits.length,
        targets: targets.length,
        lse: lse.length,
      };
      if (entropyGrad)
        Object.assign(sizes, { dentropy: entropyGrad.dentropy.length, entropy: entropyGrad.entropy.length });
      checkLogprobShapes('logprobBackward', sizes, N, V);
      checkLogprobScale('logprobBackward', scale);
      checkTargets(targets, N, V);
      // Without the entropy seed its two pointers are never read: dlogp stands in for them.
      const dentropy = entropyGrad ? p(entropyGrad.dentropy) : p(dlogp);
      const entropy = entropyGrad ? p(entropyGrad.entropy) : p(dlogp);
      const ranges = split(N, partsFor(N * V * LOGPROB_WORK_PER_LOGIT, N), 1);
      const [pd, pg, pz, pt, ps] = [p(dlogits), p(dlogp), p(logits), i(targets), p(lse)];
      const withEntropy = entropyGrad ? 1 : 0;
      parallel('logprobBackward', ranges, ([r0, r1]) => [
        pd + r0 * V * 4,
        pg + r0 * 4,
        pz + r0 * V * 4,
        pt + r0 * 4,
        ps + r0 * 4,
        r1 - r0,
        V,
        scale,
        dentropy + r0 * 4,
        entropy + r0 * 4,
        withEntropy,
      ]);
    },
    async sample(logits, uniforms, N, V, options) {
      checkSampleArgs('sample', logits.length, uniforms, N, V, options);
      if (sampleFallback) return sampleRef(d(logits), uniforms, N, V, options);
      if (N === 0) return { ids: new Int32Array(0), logProbs: new Float64Array(0), filtered: new Uint8Array(0) };
      const { temperature = 1, topK = 0, topP = 1 } = options;
      // Rows are independent: each part draws rows [r0, r1) with scratch of its own.
      const ranges = split(N, partsFor(N * V * SAMPLE_WORK_PER_LOGIT, N), 1);
      const work = Math.ceil(k.sampleWorkBytes(V) / 64) * 64;
      const io = Math.ceil((N * 24) / 64) * 64;
      const base = scratchOf(io + ranges.length * work);
      const [pu, plp, pid, pfl, pl] = [base, base + N * 8, base + N * 16, base + N * 20, p(logits)];
      new Float64Array(memory.buffer, pu, N).set(uniforms);
      parallel('sampleRows', ranges, ([r0, r1], j) => [
        pid + r0 * 4,
        plp + r0 * 8,
        pfl + r0 * 4,
        pl + r0 * V * 4,
        pu + r0 * 8,
        r1 - r0,
        V,
        temperature,
        Math.min(topK, V),
        topP,
        base + io + j * work,
      ]);
      const buf = memory.buffer;
      const ids = new Int32Array(buf, pid, N).slice();
      const flags = new Int32Array(buf, pfl, N);
      for (let r = 0; r < N; r++)
        if (flags[r] >= 2) {
          const i = flags[r] === 3 ? ids[r] : -1;
          throw new Error(sampleLogitProblem('sample', r, i, i < 0 ? 0 : d(logits)[r * V + i], V));
        }
      return { ids, logProbs: new Float64Array(buf, plp, N).slice(), filtered: Uint8Array.from(flags) };
    },
    adamw(param, grad, m, v, n, hp, gradScale) {
      checkAdamWSizes('adamw', { param: param.length, grad: grad.length, m: m.length, v: v.length }, n);
      const s = adamwScalars(hp);
      // The clip scale is used as is, non-finite included (as the reference and the GPU do).
      const scale = gradScale ? d(gradScale)[0] : 1;
      // Elements are independent: each part takes [j0, j1) through offset pointers.
      const ranges = elementRanges(n, ADAMW_WORK_PER_ELEMENT);
      const [pp, pg, pm, pv] = [p(param), p(grad), p(m), p(v)];
      parallel('adamw', ranges, ([j0, j1]) => [
        pp + j0 * 4,
        pg + j0 * 4,
        pm + j0 * 4,
        pv + j0 * 4,
        j1 - j0,
        scale,
        s.decay,
        s.oneMinusBeta1,
        hp.beta2,
        s.oneMinusBeta2,
        s.stepSize,
        s.bc2Sqrt,
        hp.eps,
      ]);
    },
    gradNormSquared(out, grads) {
      checkOut('gradNormSquared', 'out', out.length);
      let sum = 0;
      for (const g of grads) sum += k.sumSquares(p(g), g.length);
      d(out)[0] = sum;
    },
    clipScale: (scale, normSq, maxNorm) => clipScaleRef(d(scale), d(normSq), maxNorm),
  };
}
