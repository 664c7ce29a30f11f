/**
 * CPU reference for segment-aware causal self-attention over packed rows: plain loops over the
 * softmax formula, float64 inside, stored into the caller's array (Float32Array in the backends,
 * Float64Array for finite differences in tests). The specification the WGSL kernels are tested
 * against; not derived from them.
 *
 * Layout: q, out (B, T, NH, hs) row-major (head h at columns h·hs.. of a (B·T, NH·hs) matrix);
 * k, v (B, T, NKV, hs) likewise with NKV key/value heads; segmentIds (B, T), 0 = padding;
 * lse (B, NH, T). Grouped-query attention (GQA): NH is a multiple of NKV and query head h reads
 * kv head g = floor(h / (NH / NKV)), as Hugging Face transformers' `repeat_kv` expands it; NKV = NH
 * is ordinary multi-head attention. Query t of row b attends to the keys s ≤ t with
 * segmentIds[b, s] == segmentIds[b, t] != 0, with scores scale · q_t · k_s, scale = 1/sqrt(hs).
 * A padding query outputs zeros (lse 0) and gets zero gradients; a padding key is never attended.
 */

type Out = Float32Array | Float64Array;

/** The allowed keys s ≤ t of query t in row b (empty for a padding query). */
function allowedKeys(segmentIds: ArrayLike<number>, b: number, t: number, T: number): number[] {
  const g = segmentIds[b * T + t];
  const keys: number[] = [];
  if (g === 0) return keys;
  for (let s = 0; s <= t; s++) if (segmentIds[b * T + s] === g) keys.push(s);
  return keys;
}

/** Softmax weights P[t, s] over `keys` and their log-sum-exp, in float64. */
function softmaxRow(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  qBase: number,
  keyBase: (s: number) => number,
  keys: number[],
  hs: number,
): { p: number[]; lse: number } {
  const scale = 1 / Math.sqrt(hs);
  const scores = keys.map((s) => {
    let dot = 0;
    for (let d = 0; d < hs; d++) dot += q[qBase + d] * k[keyBase(s) + d];
    return dot * scale;
  });
  const max = Math.max(...scores);
  const sum = scores.reduce((a, x) => a + Math.exp(x - max), 0);
  return { p: scores.map((x) => Math.exp(x - max) / sum), lse: max + Math.log(sum) };
}

/** The kv head that query head h reads: h / (NH / NKV), rounded down (transformers' repeat_kv). */
export function kvHeadOf(h: number, NH: number, NKV: number): number {
  return Math.floor(h / (NH / NKV));
}

/** out (B, T, NH, hs) and lse (B, NH, T) of segment-aware causal attention over k, v (B, T, NKV, hs). */
export function attentionForwardRef(
  out: Out,
  lse: Out,
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  segmentIds: ArrayLike<number>,
  B: number,
  T: number,
  NH: number,
  NKV: number,
  hs: number,
): void {
  checkAttentionShapes('attentionForward', { out, lse, q, k, v, segmentIds }, B, T, NH, NKV, hs);
  const head = (b: number, t: number, h: number) => ((b * T + t) * NH + h) * hs;
  const kvHead = (b: number, t: number, h: number) => ((b * T + t) * NKV + kvHeadOf(h, NH, NKV)) * hs;
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      const keys = allowedKeys(segmentIds, b, t, T);
      for (let h = 0; h < NH; h++) {
        const o = head(b, t, h);
        out.fill(0, o, o + hs);
        lse[(b * NH + h) * T + t] = 0;
        if (keys.length === 0) continue;
        const sm = softmaxRow(q, k, o, (s) => kvHead(b, s, h), keys, hs);
        lse[(b * NH + h) * T + t] = sm.lse;
        for (let d = 0; d < hs; d++) {
          let acc = 0;
          keys.forEach((s, j) => (acc += sm.p[j] * v[kvHead(b, s, h) + d]));
          out[o + d] = acc;
        }
      }
    }
  }
}

/**
 * dq (B, T, NH, hs), dk, dv (B, T, NKV, hs) += the gradients of Σ dout · out through
 * attentionForwardRef: dP = dout_t · v_s, dS = P ∘ (dP − Σ_s P dP), dq_t = scale Σ_s dS k_s,
 * dk_s = scale Σ_t dS q_t, dv_s = Σ_t P dout_t, where dk and dv of kv head g also sum over the
 * NH / NKV query heads of its group. P is recomputed from q and k in float64; `out` and `lse`
 * (what the GPU kernel reads instead) are taken for the shared signature and checked for size only.
 */
export function attentionBackwardRef(
  dq: Out,
  dk: Out,
  dv: Out,
  dout: ArrayLike<number>,
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  out: ArrayLike<number>,
  lse: ArrayLike<number>,
  segmentIds: ArrayLike<number>,
  B: number,
  T: number,
  NH: number,
  NKV: number,
  hs: number,
): void {
  checkAttentionShapes('attentionBackward', { dq, dk, dv, dout, q, k, v, out, lse, segmentIds }, B, T, NH, NKV, hs);
  const scale = 1 / Math.sqrt(hs);
  const head = (b: number, t: number, h: number) => ((b * T + t) * NH + h) * hs;
  const kvHead = (b: number, t: number, h: number) => ((b * T + t) * NKV + kvHeadOf(h, NH, NKV)) * hs;
  const dot = (x: ArrayLike<number>, i: number, y: ArrayLike<number>, j: number) => {
    let acc = 0;
    for (let d = 0; d < hs; d++) acc += x[i + d] * y[j + d];
    return acc;
  };
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      const keys = allowedKeys(segmentIds, b, t, T);
      if (keys.length === 0) continue;
      for (let h = 0; h < NH; h++) {
        const qt = head(b, t, h);
        const { p } = softmaxRow(q, k, qt, (s) => kvHead(b, s, h), keys, hs);
        const dp = keys.map((s) => dot(dout, qt, v, kvHead(b, s, h)));
        const D = p.reduce((a, pj, j) => a + pj * dp[j], 0);
        keys.forEach((s, j) => {
          const ks = kvHead(b, s, h);
          const ds = p[j] * (dp[j] - D);
          for (let d = 0; d < hs; d++) {
            dq[qt + d] += scale * ds * k[ks + d];
            dk[ks + d] += scale * ds * q[qt + d];
            dv[ks + d] += p[j] * dout[qt + d];
          }
        });
      }
    }
  }
}

/** Throws unless NKV (kv heads) divides NH (query heads), as grouped-query attention needs. */
export function checkKvHeads(op: string, NH: number, NKV: number): void {
  if (!Number.isInteger(NKV) || NKV < 0) throw new Error(`${op}: NKV must be a non-negative integer, got ${NKV}`);
  if (NKV === 0 ? NH !== 0 : NH % NKV !== 0) {
    throw new Error(
      `${op}: NH (${NH} query heads) must be a multiple of NKV (${NKV} kv heads): each group of NH/NKV query heads shares one kv head`,
    );
  }
}

/** Throws with expected and actual sizes when a buffer is shorter than (B, T, NH | NKV, hs) needs. */
export function checkAttentionShapes(
  op: string,
  buffers: Record<string, { length: number }>,
  B: number,
  T: number,
  NH: number,
  NKV: number,
  hs: number,
): void {
  for (const [name, x] of [
    ['B', B],
    ['T', T],
    ['NH', NH],
    ['hs', hs],
  ] as const) {
    if (!Number.isInteger(x) || x < 0) throw new Error(`${op}: ${name} must be a non-negative integer, got ${x}`);
  }
  if (hs === 0) throw new Error(`${op}: hs must be positive`);
  checkKvHeads(op, NH, NKV);
  const kv = new Set(['k', 'v', 'dk', 'dv']);
  const need = (name: string): [number, string] =>
    name === 'lse'
      ? [B * NH * T, `B*NH*T = ${B}*${NH}*${T}`]
      : name === 'segmentIds'
        ? [B * T, `B*T = ${B}*${T}`]
        : kv.has(name)
          ? [B * T * NKV * hs, `B*T*NKV*hs = ${B}*${T}*${NKV}*${hs}`]
          : [B * T * NH * hs, `B*T*NH*hs = ${B}*${T}*${NH}*${hs}`];
  for (const [name, x] of Object.entries(buffers)) {
    const [n, formula] = need(name);
    if (x.length < n) throw new Error(`${op}: ${name} has ${x.length} elements, needs ${formula} = ${n}`);
  }
}
