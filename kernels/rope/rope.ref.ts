/**
 * CPU reference for RoPE (rotary position embedding), Llama / Hugging Face convention: within
 * each head of size hs, the pair (i, i + hs/2) is rotated by a = position · theta^(−2i/hs)
 * (transformers `LlamaRotaryEmbedding` + `rotate_half`; not the interleaved (2i, 2i+1) layout of
 * the original paper / Meta checkpoints). Plain loops in float64, stored into the caller's array
 * (Float32Array in the backends, Float64Array for finite differences in tests). The
 * specification the WGSL kernels are tested against; not derived from them.
 */

/** out(N, NH, hs) = rope(inp) with per-token `positions` (N). out may not alias inp on the GPU. */
export function ropeForwardRef(
  out: Float32Array | Float64Array,
  inp: ArrayLike<number>,
  positions: ArrayLike<number>,
  N: number,
  NH: number,
  hs: number,
  theta: number,
): void {
  checkRopeShapes('ropeForward', out.length, inp.length, positions.length, N, NH, hs, theta);
  const half = hs / 2;
  for (let n = 0; n < N; n++) {
    for (let h = 0; h < NH; h++) {
      const base = (n * NH + h) * hs;
      for (let i = 0; i < half; i++) {
        const a = positions[n] * Math.pow(theta, (-2 * i) / hs);
        const c = Math.cos(a);
        const s = Math.sin(a);
        const x0 = inp[base + i];
        const x1 = inp[base + i + half];
        out[base + i] = x0 * c - x1 * s;
        out[base + i + half] = x1 * c + x0 * s;
      }
    }
  }
}

/** dinp(N, NH, hs) += Rᵀ · dout: the transpose (inverse) rotation, accumulated. */
export function ropeBackwardRef(
  dinp: Float32Array | Float64Array,
  dout: ArrayLike<number>,
  positions: ArrayLike<number>,
  N: number,
  NH: number,
  hs: number,
  theta: number,
): void {
  checkRopeShapes('ropeBackward', dinp.length, dout.length, positions.length, N, NH, hs, theta);
  const half = hs / 2;
  for (let n = 0; n < N; n++) {
    for (let h = 0; h < NH; h++) {
      const base = (n * NH + h) * hs;
      for (let i = 0; i < half; i++) {
        const a = positions[n] * Math.pow(theta, (-2 * i) / hs);
        const c = Math.cos(a);
        const s = Math.sin(a);
        const d0 = dout[base + i];
        const d1 = dout[base + i + half];
        dinp[base + i] += d0 * c + d1 * s;
        dinp[base + i + half] += d1 * c - d0 * s;
      }
    }
  }
}

/**
 * Throws with expected and actual sizes when the buffers do not match (N, NH, hs), when hs is odd
 * or theta is not a positive finite number.
 */
export function checkRopeShapes(
  op: 'ropeForward' | 'ropeBackward',
  outLen: number,
  inLen: number,
  posLen: number,
  N: number,
  NH: number,
  hs: number,
  theta: number,
): void {
  const [outName, inName] = op === 'ropeForward' ? ['out', 'inp'] : ['dinp', 'dout'];
  for (const [name, v] of [
    ['N', N],
    ['NH', NH],
    ['hs', hs],
  ] as const) {
    if (!Number.isInteger(v) || v < 0) throw new Error(`${op}: ${name} must be a non-negative integer, got ${v}`);
  }
  if (hs % 2 !== 0) throw new Error(`${op}: hs must be even (RoPE rotates pairs (i, i + hs/2)), got ${hs}`);
  if (!(theta > 0) || !Number.isFinite(theta))
    throw new Error(`${op}: theta must be a positive finite number (Llama uses 10000 or 500000), got ${theta}`);
  const size = N * NH * hs;
  if (outLen < size)
    throw new Error(`${op}: ${outName} has ${outLen} elements, needs N*NH*hs = ${N}*${NH}*${hs} = ${size}`);
  if (inLen < size)
    throw new Error(`${op}: ${inName} has ${inLen} elements, needs N*NH*hs = ${N}*${NH}*${hs} = ${size}`);
  if (posLen < N) throw new Error(`${op}: positions has ${posLen} elements, needs N = ${N}`);
}
