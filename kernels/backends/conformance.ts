/**
 * Op-by-op conformance cases for a backend against the CPU backend (every op is its reference
 * there): each case allocates its inputs from seeded random data, runs one op, and names the
 * tensors to compare. Shapes are odd on purpose (tails of every SIMD and tile width) and include
 * the model's own. Used by the wasm backend's tests (kernels/backends/wasm.test.ts); the
 * grouped-query attention cases (`gqaCases`, shapes every backend supports) also run on WebGPU
 * (kernels/backends/webgpu.test.ts), as do the cases of the kernels with a subgroup form
 * (`subgroupCases`), with subgroups on and off.
 */
import { randomArray } from '../common/random';
import type { AdamWHyper, Ops, Tensor } from '../ops';
import { compareClose } from '../testing/expect-close';
import { packBf16 } from '../bf16/bf16.ref';

interface ConformanceCase {
  name: string;
  /** Runs the op on `ops`; returns the tensors to compare, by name. */
  run(ops: Ops): Record<string, Tensor>;
  /** Float32 against float64 references: the tolerance grows with the reduction length. */
  atol: number;
  rtol: number;
}

/**
 * Runs `c` on `ops` and on `reference`; one message per tensor that differs beyond the case's
 * tolerance (`exact`: any difference at all), none when `ops` conforms.
 */
export async function caseMismatches(c: ConformanceCase, ops: Ops, reference: Ops, exact = false): Promise<string[]> {
  const want = c.run(reference);
  const got = c.run(ops);
  const out: string[] = [];
  for (const [name, t] of Object.entries(want)) {
    const tol = exact ? { atol: 0, rtol: 0 } : { atol: c.atol, rtol: c.rtol };
    const r = compareClose(await ops.read(got[name]), await reference.read(t), { ...tol, label: `${c.name}: ${name}` });
    if (!r.ok) out.push(r.message);
  }
  return out;
}

function f32(ops: Ops, label: string, n: number, seed: number, lo = -1, hi = 1): Tensor {
  const t = ops.alloc(label, n);
  ops.upload(t, randomArray(n, seed, lo, hi));
  return t;
}

function i32(ops: Ops, label: string, values: ArrayLike<number>): Tensor {
  const t = ops.alloc(label, values.length, 'i32');
  ops.upload(t, values);
  return t;
}

/** Segment ids of packed rows: chains of 1..5 ids, then padding (0) at the end of each row. */
function segments(B: number, T: number, seed: number): number[] {
  const r = randomArray(B * T, seed, 0, 1);
  const out: number[] = [];
  for (let b = 0; b < B; b++) {
    let seg = 1;
    let left = 0;
    const pad = Math.floor(r[b * T] * 3);
    for (let t = 0; t < T; t++) {
      if (t >= T - pad) out.push(0);
      else {
        if (left === 0) {
          left = 1 + Math.floor(r[b * T + t] * 5);
          seg++;
        }
        left--;
        out.push(seg);
      }
    }
  }
  return out;
}

const ids = (n: number, V: number, seed: number) => Array.from(randomArray(n, seed, 0, 1), (x) => Math.floor(x * V));

/** Attention forward then backward on packed rows of random segments; k, v, dk, dv have NKV heads. */
function attention(ops: Ops, B: number, T: number, NH: number, NKV: number, hs: number): Record<string, Tensor> {
  const [n, nkv] = [B * T * NH * hs, B * T * NKV * hs];
  const seg = i32(ops, 'seg', segments(B, T, 16));
  const [q, k, v] = [f32(ops, 'q', n, 17, -2, 2), f32(ops, 'k', nkv, 18, -2, 2), f32(ops, 'v', nkv, 19)];
  const out = ops.alloc('out', n);
  const lse = ops.alloc('lse', B * NH * T);
  ops.attentionForward(out, lse, q, k, v, seg, B, T, NH, NKV, hs);
  const [dq, dk, dv] = [f32(ops, 'dq', n, 20), f32(ops, 'dk', nkv, 21), f32(ops, 'dv', nkv, 22)];
  ops.attentionBackward(dq, dk, dv, f32(ops, 'dout', n, 23), q, k, v, out, lse, seg, B, T, NH, NKV, hs);
  return { out, lse, dq, dk, dv };
}

/** One decode step over caches of L slots (NKV heads), row b holding (5b) mod (L + 1) of them (0: an inactive row). */
function decode(ops: Ops, B: number, L: number, NH: number, NKV: number, hs: number): Record<string, Tensor> {
  const lengths = i32(
    ops,
    'lengths',
    Array.from({ length: B }, (_, b) => (b * 5) % (L + 1)),
  );
  const out = f32(ops, 'out', B * NH * hs, 24);
  ops.attentionDecode(
    out,
    f32(ops, 'q', B * NH * hs, 25, -2, 2),
    f32(ops, 'k', B * L * NKV * hs, 26, -2, 2),
    f32(ops, 'v', B * L * NKV * hs, 27),
    lengths,
    B,
    L,
    NH,
    NKV,
    hs,
  );
  return { out };
}

const MATMUL_SHAPES: [number, number, number][] = [
  [1, 1, 1],
  [17, 33, 5],
  [65, 17, 130],
  [5, 64, 25],
  [130, 64, 176],
  [64, 130, 9],
  [3, 300, 7],
  [70, 600, 21], // K over wasm's blocks of 256: a 64-row block and 6 rows, 8-column tiles, a 4-column one and a cell
];
const ATTN_SHAPES: [number, number, number, number][] = [
  [1, 1, 1, 1],
  [2, 9, 2, 4],
  [3, 37, 4, 16],
  [1, 64, 2, 6],
];
/** Grouped-query attention (B, T | L, NH, NKV, hs): groups of 2 and 3, and one kv head (multi-query); hs a multiple of 4 (WebGPU's vec4 heads). */
const GQA_SHAPES: [number, number, number, number, number][] = [
  [2, 9, 4, 2, 4],
  [3, 37, 6, 2, 16],
  [1, 20, 4, 1, 8],
];
const GQA_DECODE_SHAPES: [number, number, number, number, number][] = [
  [5, 9, 4, 2, 4],
  [33, 17, 6, 3, 8],
  [7, 40, 4, 1, 16],
];

/** Grouped-query attention cases (NKV < NH) on shapes every backend supports, WebGPU included. */
export function gqaCases(): ConformanceCase[] {
  return [
    ...GQA_SHAPES.map(([B, T, NH, NKV, hs]): ConformanceCase => ({
      name: `attention GQA ${B}x${T}x${NH}/${NKV}x${hs}`,
      atol: 2e-5,
      rtol: 1e-4,
      run: (ops) => attention(ops, B, T, NH, NKV, hs),
    })),
    ...GQA_DECODE_SHAPES.map(([B, L, NH, NKV, hs]): ConformanceCase => ({
      name: `attentionDecode GQA ${B}x${L}x${NH}/${NKV}x${hs}`,
      atol: 1e-5,
      rtol: 1e-4,
      run: (ops) => decode(ops, B, L, NH, NKV, hs),
    })),
  ];
}
/**
 * The fused log-softmax forward then backward, untempered (the default scale, then an explicit 1)
 * and at the sampler's temperature 0.7 (scale 1/0.7), seeded by dlogp alone and by dlogp and dentropy;
 * shapes every backend supports, WebGPU included.
 */
export function logprobCases(): ConformanceCase[] {
  const cases: ConformanceCase[] = [];
  for (const scale of [undefined, 1, 1 / 0.7]) {
    for (const [N, V] of [
      [1, 1],
      [9, 25],
      [70, 300],
    ]) {
      cases.push({
        name: `logprob ${N}x${V}${scale === undefined ? '' : ` scale ${scale.toPrecision(4)}`}`,
        atol: 2e-5,
        rtol: 1e-4,
        run: (ops) => {
          const logits = f32(ops, 'logits', N * V, 33, -5, 5);
          const targets = i32(
            ops,
            'targets',
            ids(N, V, 34).map((t, i) => (i % 5 === 2 ? -1 : t)),
          );
          const [logp, entropy, lse] = [ops.alloc('logp', N), ops.alloc('entropy', N), ops.alloc('lse', N)];
          ops.logprobForward(logp, entropy, lse, logits, targets, N, V, scale);
          const dlogits = f32(ops, 'dlogits', N * V, 35);
          ops.logprobBackward(dlogits, f32(ops, 'dlogp', N, 36), logits, targets, lse, N, V, scale);
          // Seeded by the entropy too (an entropy bonus): every row takes it, those without a target included.
          const dlogitsH = f32(ops, 'dlogitsH', N * V, 35);
          const dentropy = f32(ops, 'dentropy', N, 37);
          ops.logprobBackward(dlogitsH, f32(ops, 'dlogp', N, 36), logits, targets, lse, N, V, scale, {
            dentropy,
            entropy,
          });
          return { logp, entropy, lse, dlogits, dlogitsH };
        },
      });
    }
  }
  return cases;
}

/**
 * The ops whose WebGPU kernels have a subgroup form (kernels/common/subgroup_lib.wgsl): RMSNorm on
 * the model's widths, and the log-prob on rows wide enough (V ≥ 8192) for the one-workgroup-per-row
 * kernels. Run on WebGPU with the dispatcher's `subgroups` on and off (webgpu.test.ts): both sum in
 * f32 in different orders, so the tolerance is the f32 reductions' own (a few ulps · log2 of the
 * row), as for the other cases.
 */
export function subgroupCases(): ConformanceCase[] {
  const cases: ConformanceCase[] = [];
  for (const [N, C] of [
    [1, 1],
    [7, 13],
    [97, 64],
    [5, 576],
    [3, 1000],
  ]) {
    cases.push({
      name: `rmsnorm ${N}x${C}`,
      atol: 1e-5,
      rtol: 1e-4,
      run: (ops) => {
        const inp = f32(ops, 'inp', N * C, 8, -2, 2);
        const out = ops.alloc('out', N * C);
        const rstd = ops.alloc('rstd', N);
        ops.rmsnormForward(out, rstd, inp, f32(ops, 'w', C, 9), N, C, 1e-5);
        return { out, rstd };
      },
    });
  }
  for (const [N, V] of [
    [3, 8192],
    [2, 9001],
  ]) {
    cases.push({
      name: `logprob forward ${N}x${V}`,
      atol: 2e-5,
      rtol: 1e-4,
      run: (ops) => {
        const logits = f32(ops, 'logits', N * V, 45, -8, 8);
        const targets = i32(ops, 'targets', [...ids(N - 1, V, 46), -1]);
        const [logp, entropy, lse] = [ops.alloc('logp', N), ops.alloc('entropy', N), ops.alloc('lse', N)];
        ops.logprobForward(logp, entropy, lse, logits, targets, N, V, 1 / 0.7);
        return { logp, entropy, lse };
      },
    });
  }
  return cases;
}

const HP: AdamWHyper = { lr: 1e-2, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.1, step: 3 };

export function conformanceCases(): ConformanceCase[] {
  const cases: ConformanceCase[] = [];
  for (const layout of ['nn', 'nt', 'tn'] as const) {
    for (const accumulate of [false, true]) {
      for (const [M, K, N] of MATMUL_SHAPES) {
        cases.push({
          name: `matmul ${layout}${accumulate ? ' +=' : ''} ${M}x${K}x${N}`,
          atol: 2e-6 * K,
          rtol: 1e-5,
          run: (ops) => {
            const out = f32(ops, 'out', M * N, 3);
            ops.matmul(out, f32(ops, 'a', M * K, 1), f32(ops, 'b', K * N, 2), M, K, N, layout, { accumulate });
            return { out };
          },
        });
      }
    }
  }
  for (const [N, C, V] of [
    [1, 1, 1],
    [13, 7, 5],
    [100, 64, 25],
  ]) {
    cases.push({
      name: `embedding ${N}x${C} of ${V}`,
      atol: 1e-6,
      rtol: 1e-6,
      run: (ops) => {
        const tok = i32(ops, 'ids', ids(N, V, 4));
        const out = ops.alloc('out', N * C);
        ops.embeddingForward(out, tok, f32(ops, 'wte', V * C, 5), N, C, V);
        const dwte = f32(ops, 'dwte', V * C, 6);
        ops.embeddingBackward(dwte, f32(ops, 'dout', N * C, 7), tok, N, C, V);
        return { out, dwte };
      },
    });
  }
  for (const [N, C] of [
    [1, 1],
    [7, 13],
    [97, 64],
  ]) {
    cases.push({
      name: `rmsnorm ${N}x${C}`,
      atol: 1e-5,
      rtol: 1e-4,
      run: (ops) => {
        const inp = f32(ops, 'inp', N * C, 8, -2, 2);
        const w = f32(ops, 'w', C, 9);
        const out = ops.alloc('out', N * C);
        const rstd = ops.alloc('rstd', N);
        ops.rmsnormForward(out, rstd, inp, w, N, C, 1e-5);
        const dinp = f32(ops, 'dinp', N * C, 10);
        const dw = f32(ops, 'dw', C, 11);
        ops.rmsnormBackward(dinp, dw, f32(ops, 'dout', N * C, 12), inp, w, rstd, N, C);
        return { out, rstd, dinp, dw };
      },
    });
  }
  for (const [N, NH, hs] of [
    [1, 1, 2],
    [9, 3, 6],
    [70, 4, 16],
  ]) {
    cases.push({
      name: `rope ${N}x${NH}x${hs}`,
      atol: 1e-5,
      rtol: 1e-5,
      run: (ops) => {
        const pos = i32(
          ops,
          'pos',
          Array.from({ length: N }, (_, i) => (i * 7) % 61),
        );
        const out = ops.alloc('out', N * NH * hs);
        ops.ropeForward(out, f32(ops, 'inp', N * NH * hs, 13), pos, N, NH, hs, 10000);
        const dinp = f32(ops, 'dinp', N * NH * hs, 14);
        ops.ropeBackward(dinp, f32(ops, 'dout', N * NH * hs, 15), pos, N, NH, hs, 10000);
        return { out, dinp };
      },
    });
  }
  for (const [B, T, NH, hs] of ATTN_SHAPES)
    cases.push({
      name: `attention ${B}x${T}x${NH}x${hs}`,
      atol: 2e-5,
      rtol: 1e-4,
      run: (ops) => attention(ops, B, T, NH, NH, hs),
    });
  for (const [B, L, NH, hs] of [
    [1, 1, 1, 1],
    [5, 9, 2, 4],
    [128, 40, 4, 16],
  ]) {
    cases.push({
      name: `attentionDecode ${B}x${L}x${NH}x${hs}`,
      atol: 1e-5,
      rtol: 1e-4,
      run: (ops) => decode(ops, B, L, NH, NH, hs),
    });
  }
  cases.push(...gqaCases());
  // GQA with a head size that is no multiple of 4 (the wasm kernels' scalar tails; WebGPU refuses it).
  cases.push({
    name: 'attention GQA 2x11x6/3x6',
    atol: 2e-5,
    rtol: 1e-4,
    run: (ops) => attention(ops, 2, 11, 6, 3, 6),
  });
  cases.push({
    name: 'attentionDecode GQA 4x7x4/2x6',
    atol: 1e-5,
    rtol: 1e-4,
    run: (ops) => decode(ops, 4, 7, 4, 2, 6),
  });
  for (const [B, L, KV] of [
    [1, 1, 1],
    [5, 9, 7],
    [64, 40, 128],
  ]) {
    cases.push({
      name: `kvScatter ${B}x${L}x${KV}`,
      atol: 0,
      rtol: 0,
      run: (ops) => {
        const cache = f32(ops, 'cache', B * L * KV, 43);
        const slots = i32(
          ops,
          'slots',
          Array.from({ length: B }, (_, b) => (b * 7) % L),
        );
        ops.kvScatter(cache, f32(ops, 'rows', B * KV, 44), slots, B, L, KV);
        return { cache };
      },
    });
  }
  for (const n of [1, 7, 1003]) {
    cases.push({
      name: `elementwise ${n}`,
      atol: 1e-6,
      rtol: 1e-5,
      run: (ops) => {
        const gate = f32(ops, 'gate', n, 28, -6, 6);
        const up = f32(ops, 'up', n, 29);
        const out = ops.alloc('out', n);
        ops.swigluForward(out, gate, up, n);
        const dgate = f32(ops, 'dgate', n, 30);
        const dup = f32(ops, 'dup', n, 31);
        ops.swigluBackward(dgate, dup, f32(ops, 'dout', n, 32), gate, up, n);
        const sum = ops.alloc('sum', n);
        ops.residualForward(sum, gate, up, n);
        ops.accumulate(up, gate, n);
        return { out, dgate, dup, sum, up };
      },
    });
  }
  for (const [n, seed, offset] of [
    [1, 0, 0],
    [1003, 0xfffffff0, 0xfffffe00],
  ]) {
    cases.push({
      name: `dropout ${n}`,
      atol: 0,
      rtol: 0,
      run: (ops) => {
        const x = f32(ops, 'x', n, 33);
        const out = ops.alloc('out', n);
        ops.dropout(out, x, n, { p: 0.3, seed, offset });
        const acc = f32(ops, 'acc', n, 34);
        ops.dropout(acc, x, n, { p: 0.3, seed, offset, accumulate: true });
        return { out, acc };
      },
    });
  }
  for (const n of [1, 8, 1003]) {
    cases.push({
      name: `widenBf16 ${n}`,
      atol: 0,
      rtol: 0,
      run: (ops) => {
        const out = ops.alloc('out', n);
        ops.widenBf16(out, i32(ops, 'packed', packBf16(randomArray(n, 35, -4, 4))), n);
        return { out };
      },
    });
  }
  cases.push(...logprobCases());
  for (const n of [1, 5, 1030]) {
    cases.push({
      name: `adamw, grad norm, clip ${n}`,
      atol: 1e-6,
      rtol: 1e-5,
      run: (ops) => {
        const grads = [f32(ops, 'g0', n, 37), f32(ops, 'g1', 3, 38, -5, 5)];
        const normSq = ops.alloc('normSq', 1);
        ops.gradNormSquared(normSq, grads);
        const scale = ops.alloc('scale', 1);
        ops.clipScale(scale, normSq, 0.5);
        const [param, m, v] = [f32(ops, 'param', n, 39), f32(ops, 'm', n, 40), f32(ops, 'v', n, 41, 0, 1)];
        ops.adamw(param, grads[0], m, v, n, HP, scale);
        const p2 = f32(ops, 'p2', n, 42);
        ops.adamw(p2, grads[0], ops.alloc('m2', n), ops.alloc('v2', n), n, { ...HP, step: 1 }, null);
        return { normSq, scale, param, m, v, p2 };
      },
    });
  }
  return cases;
}

/** Shapes past the multi-threaded backend's split thresholds: a threaded run must equal a single-threaded one exactly. */
export function bigCases(): ConformanceCase[] {
  const cases: ConformanceCase[] = [];
  // The last: nt under wasm's 128 rows splits N's columns (blocks of 32, a 2-column tail).
  for (const [layout, M, K, N] of [
    ['nn', 301, 64, 176],
    ['nt', 301, 64, 176],
    ['tn', 301, 64, 176],
    ['nt', 33, 70, 130],
  ] as const) {
    cases.push({
      name: `matmul ${layout} ${M}x${K}x${N}`,
      atol: 0,
      rtol: 0,
      run: (ops) => {
        const out = f32(ops, 'out', M * N, 3);
        ops.matmul(out, f32(ops, 'a', M * K, 1), f32(ops, 'b', K * N, 2), M, K, N, layout, { accumulate: true });
        return { out };
      },
    });
  }
  const [B, T, NH, hs] = [9, 64, 4, 16];
  const [D, L] = [128, 64];
  for (const NKV of [NH, 2]) {
    const gqa = NKV === NH ? '' : ` GQA /${NKV}`;
    cases.push({
      name: `attention${gqa} ${B}x${T}x${NH}x${hs}`,
      atol: 0,
      rtol: 0,
      run: (ops) => attention(ops, B, T, NH, NKV, hs),
    });
    cases.push({
      name: `attentionDecode${gqa} ${D}x${L}x${NH}x${hs}`,
      atol: 0,
      rtol: 0,
      run: (ops) => decode(ops, D, L, NH, NKV, hs),
    });
  }
  // Rows (logprob) and elements (SwiGLU, AdamW) split between threads: exactly the single thread's numbers.
  const exact = (c: ConformanceCase): ConformanceCase => ({ ...c, atol: 0, rtol: 0 });
  cases.push(
    ...logprobCases()
      .filter((c) => c.name.startsWith('logprob 70x300'))
      .map(exact),
  );
  cases.push(
    ...conformanceCases()
      .filter((c) => c.name === 'adamw, grad norm, clip 1030' || c.name === 'elementwise 1003')
      .map(exact),
  );
  return cases;
}
