// Row and element-wise ops: RMSNorm, RoPE (HF rotate_half), SwiGLU, residual, embedding, logprob,
// AdamW and the gradient norm, as their references in kernels/*/*.ref.ts. f32 storage; reductions
// in f64 where the reference's float64 matters (norms, softmax sums, the gradient norm).
import { f32at, i32at, setf32 } from './vec';

export function rmsnormForward(out: usize, rstd: usize, inp: usize, w: usize, N: i32, C: i32, eps: f32): void {
  for (let n = 0; n < N; n++) {
    const row = n * C;
    let ss: f64 = 0;
    for (let c = 0; c < C; c++) {
      const x = <f64>f32at(inp, row + c);
      ss += x * x;
    }
    const r = <f32>(1 / Math.sqrt(ss / C + <f64>eps));
    setf32(rstd, n, r);
    for (let c = 0; c < C; c++) setf32(out, row + c, f32at(inp, row + c) * r * f32at(w, c));
  }
}

/** dinp += ...; dw += Σ_n dout·inp·rstd, in f32 row by row. */
export function rmsnormBackward(dinp: usize, dw: usize, dout: usize, inp: usize, w: usize, rstd: usize, N: i32, C: i32): void {
  for (let n = 0; n < N; n++) {
    const row = n * C;
    const r = f32at(rstd, n);
    let d: f64 = 0;
    for (let c = 0; c < C; c++) d += <f64>(f32at(dout, row + c) * f32at(w, c) * f32at(inp, row + c));
    const k = <f32>(d / C) * r * r * r;
    for (let c = 0; c < C; c++) {
      const i = row + c;
      const x = f32at(inp, i);
      const g = f32at(dout, i);
      setf32(dinp, i, f32at(dinp, i) + r * f32at(w, c) * g - x * k);
      // dw goes on from its value row by row in f32: rows split over calls (passes) sum alike.
      setf32(dw, c, f32at(dw, c) + g * x * r);
    }
  }
}

/** cos/sin of position·theta^(−2i/hs) per (n, i): the same angle for every head. */
@inline function angle(pos: i32, i: i32, hs: i32, theta: f64): f64 {
  return <f64>pos * Math.pow(theta, <f64>(-2 * i) / <f64>hs);
}

/** out = rope(inp) (dir 1) or dinp += Rᵀ dout (dir −1); tab: scratch for hs f32 (cos, sin of one position). */
export function rope(out: usize, inp: usize, positions: usize, N: i32, NH: i32, hs: i32, theta: f64, backward: bool, tab: usize): void {
  const half = hs >> 1;
  let last: i32 = -1;
  let haveLast = false;
  for (let n = 0; n < N; n++) {
    const pos = i32at(positions, n);
    if (!haveLast || pos != last) {
      for (let i = 0; i < half; i++) {
        const a = angle(pos, i, hs, theta);
        setf32(tab, i, <f32>Math.cos(a));
        setf32(tab, half + i, <f32>Math.sin(a));
      }
      last = pos;
      haveLast = true;
    }
    for (let h = 0; h < NH; h++) {
      const base = (n * NH + h) * hs;
      for (let i = 0; i < half; i++) {
        const c = f32at(tab, i);
        const s = f32at(tab, half + i);
        const x0 = f32at(inp, base + i);
        const x1 = f32at(inp, base + i + half);
        if (backward) {
          setf32(out, base + i, f32at(out, base + i) + x0 * c + x1 * s);
          setf32(out, base + i + half, f32at(out, base + i + half) + x1 * c - x0 * s);
        } else {
          setf32(out, base + i, x0 * c - x1 * s);
          setf32(out, base + i + half, x1 * c + x0 * s);
        }
      }
    }
  }
}

@inline function sigmoid(g: f32): f32 {
  return <f32>(1 / (1 + Math.exp(-<f64>g)));
}

export function swigluForward(out: usize, gate: usize, up: usize, n: i32): void {
  for (let i = 0; i < n; i++) {
    const g = f32at(gate, i);
    setf32(out, i, g * sigmoid(g) * f32at(up, i));
  }
}

export function swigluBackward(dgate: usize, dup: usize, dout: usize, gate: usize, up: usize, n: i32): void {
  for (let i = 0; i < n; i++) {
    const g = f32at(gate, i);
    const s = sigmoid(g);
    const d = f32at(dout, i);
    setf32(dgate, i, f32at(dgate, i) + d * f32at(up, i) * (s + g * s * (1 - s)));
    setf32(dup, i, f32at(dup, i) + d * g * s);
  }
}

/** out = a + b. */
export function add(out: usize, a: usize, b: usize, n: i32): void {
  const n4 = n & ~3;
  let i = 0;
  for (; i < n4; i += 4) {
    const o = <usize>i << 2;
    v128.store(out + o, f32x4.add(v128.load(a + o), v128.load(b + o)));
  }
  for (; i < n; i++) setf32(out, i, f32at(a, i) + f32at(b, i));
}

export function embeddingForward(out: usize, ids: usize, wte: usize, N: i32, C: i32): void {
  for (let n = 0; n < N; n++) memory.copy(out + ((<usize>n * C) << 2), wte + ((<usize>i32at(ids, n) * C) << 2), <usize>C << 2);
}

/** dwte += scatter of dout by ids. */
export function embeddingBackward(dwte: usize, dout: usize, ids: usize, N: i32, C: i32, V: i32): void {
  // In f32, id by id in order, on from the table's value: ids split over calls (passes) sum alike.
  for (let n = 0; n < N; n++) {
    const row = i32at(ids, n) * C;
    for (let c = 0; c < C; c++) setf32(dwte, row + c, f32at(dwte, row + c) + f32at(dout, n * C + c));
  }
}

/**
 * Log-softmax of the tempered logits z = scale·l per row (logprob.ref.ts): logp of the target
 * (0 when < 0), entropy and lse of softmax(z), in f64.
 */
export function logprobForward(logp: usize, entropy: usize, lse: usize, logits: usize, targets: usize, N: i32, V: i32, scale: f64): void {
  for (let t = 0; t < N; t++) {
    const row = t * V;
    let m: f64 = -Infinity;
    for (let v = 0; v < V; v++) m = Math.max(m, scale * <f64>f32at(logits, row + v));
    let s: f64 = 0;
    for (let v = 0; v < V; v++) s += Math.exp(scale * <f64>f32at(logits, row + v) - m);
    const rowLse = m + Math.log(s);
    let h: f64 = 0;
    for (let v = 0; v < V; v++) {
      const lp = scale * <f64>f32at(logits, row + v) - rowLse;
      h -= Math.exp(lp) * lp;
    }
    setf32(lse, t, <f32>rowLse);
    setf32(entropy, t, <f32>h);
    const target = i32at(targets, t);
    setf32(logp, t, target < 0 ? 0 : <f32>(scale * <f64>f32at(logits, row + target) - rowLse));
  }
}

/**
 * dlogits += scale · (dlogp · (onehot(target) − p) − dentropy · p · (log p + H)), p = softmax(scale·l), with
 * the forward's lse of scale·l (logprob.ref.ts logprobBackwardRef). The entropy term only when
 * withEntropy ≠ 0 (dentropy, entropy: N f32); without it a row with no target is skipped, as before.
 */
export function logprobBackward(
  dlogits: usize, dlogp: usize, logits: usize, targets: usize, lse: usize, N: i32, V: i32, scale: f64,
  dentropy: usize, entropy: usize, withEntropy: i32,
): void {
  for (let t = 0; t < N; t++) {
    const row = t * V;
    const target = i32at(targets, t);
    if (target < 0 && withEntropy == 0) continue;
    const seed = target < 0 ? 0 : scale * <f64>f32at(dlogp, t);
    const l = <f64>f32at(lse, t);
    if (withEntropy == 0) {
      for (let v = 0; v < V; v++) {
        const p = Math.exp(scale * <f64>f32at(logits, row + v) - l);
        setf32(dlogits, row + v, <f32>(<f64>f32at(dlogits, row + v) + seed * ((v == target ? 1 : 0) - p)));
      }
      continue;
    }
    const dent = scale * <f64>f32at(dentropy, t);
    const h = <f64>f32at(entropy, t);
    for (let v = 0; v < V; v++) {
      const lp = scale * <f64>f32at(logits, row + v) - l;
      const p = Math.exp(lp);
      const g = seed * ((v == target ? 1 : 0) - p) - dent * p * (lp + h);
      setf32(dlogits, row + v, <f32>(<f64>f32at(dlogits, row + v) + g));
    }
  }
}

/**
 * One AdamW step (adamw.ref.ts, PyTorch order), scalars precomputed by the caller: in f64, two
 * elements per f64x2 (IEEE sqrt and division, no fused multiply-add: each lane the scalar's bits).
 * Elements are independent: threads take ranges of them.
 */
export function adamw(param: usize, grad: usize, m: usize, v: usize, n: i32, scaleG: f64, decay: f64, omb1: f64, beta2: f64, omb2: f64, stepSize: f64, bc2Sqrt: f64, eps: f64): void {
  const n2 = n & ~1;
  const sg = f64x2.splat(scaleG), dc = f64x2.splat(decay), o1 = f64x2.splat(omb1), b2 = f64x2.splat(beta2);
  const o2 = f64x2.splat(omb2), ss = f64x2.splat(stepSize), bc = f64x2.splat(bc2Sqrt), ep = f64x2.splat(eps);
  let i = 0;
  for (; i < n2; i += 2) {
    const o = <usize>i << 2;
    const g = f64x2.mul(f64x2.promote_low_f32x4(v128.load64_zero(grad + o)), sg);
    const p = f64x2.mul(f64x2.promote_low_f32x4(v128.load64_zero(param + o)), dc);
    const m0 = f64x2.promote_low_f32x4(v128.load64_zero(m + o));
    const mi = f64x2.add(m0, f64x2.mul(o1, f64x2.sub(g, m0)));
    const vi = f64x2.add(f64x2.mul(b2, f64x2.promote_low_f32x4(v128.load64_zero(v + o))), f64x2.mul(f64x2.mul(o2, g), g));
    const denom = f64x2.add(f64x2.div(f64x2.sqrt(vi), bc), ep);
    v128.store64_lane(param + o, f32x4.demote_f64x2_zero(f64x2.sub(p, f64x2.mul(ss, f64x2.div(mi, denom)))), 0);
    v128.store64_lane(m + o, f32x4.demote_f64x2_zero(mi), 0);
    v128.store64_lane(v + o, f32x4.demote_f64x2_zero(vi), 0);
  }
  for (; i < n; i++) {
    const g = <f64>f32at(grad, i) * scaleG;
    const p = <f64>f32at(param, i) * decay;
    const m0 = <f64>f32at(m, i);
    const mi = m0 + omb1 * (g - m0);
    const vi = beta2 * <f64>f32at(v, i) + omb2 * g * g;
    const denom = Math.sqrt(vi) / bc2Sqrt + eps;
    setf32(param, i, <f32>(p - stepSize * (mi / denom)));
    setf32(m, i, <f32>mi);
    setf32(v, i, <f32>vi);
  }
}

/** n bytes from p set to 0 (memory.fill: a memset, where a typed array's fill over the shared memory went element by element). */
export function fillZero(p: usize, n: usize): void {
  memory.fill(p, 0, n);
}

/** Σ g² over n elements, in f64. */
export function sumSquares(g: usize, n: i32): f64 {
  let s: f64 = 0;
  for (let i = 0; i < n; i++) {
    const x = <f64>f32at(g, i);
    s += x * x;
  }
  return s;
}

// Seeded dropout (kernels/dropout/dropout.ref.ts): out[i] (+)= keep(offset + i) ? x[i]·scale : 0,
// keep(j) = mix32(key ^ j) >= threshold (unsigned); key, threshold and scale come from the host.
@inline function mix32(v: u32): u32 {
  let h = v;
  h ^= h >>> 16;
  h *= 0x7feb352d;
  h ^= h >>> 15;
  h *= 0x846ca68b;
  h ^= h >>> 16;
  return h;
}

export function dropout(out: usize, x: usize, n: i32, key: u32, threshold: u32, offset: u32, scale: f32, acc: bool): void {
  for (let i = 0; i < n; i++) {
    const v: f32 = mix32(key ^ (offset + <u32>i)) >= threshold ? f32at(x, i) * scale : 0;
    setf32(out, i, acc ? f32at(out, i) + v : v);
  }
}

// bf16 widening (kernels/bf16/bf16.ref.ts): out[i] = the f32 of bf16 element i, two to a word,
// element 2j the low half of word j. Eight at a time: the halves zero-extended in order, shifted up.
export function widenBf16(out: usize, packed: usize, n: i32): void {
  const n8 = n & ~7;
  let i = 0;
  for (; i < n8; i += 8) {
    const v = v128.load(packed + (<usize>i << 1));
    v128.store(out + (<usize>i << 2), i32x4.shl(i32x4.extend_low_i16x8_u(v), 16));
    v128.store(out + (<usize>i << 2), i32x4.shl(i32x4.extend_high_i16x8_u(v), 16), 16);
  }
  for (; i < n; i++) {
    const half = <u32>load<u16>(packed + (<usize>i << 1));
    store<u32>(out + (<usize>i << 2), half << 16);
  }
}
