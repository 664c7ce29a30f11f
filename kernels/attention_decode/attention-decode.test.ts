import { afterAll, describe, expect, it } from 'vitest';
import { Arena } from '../common/arena';
import { mulberry32, randomArray } from '../common/random';
import { uploadTensor } from '../common/tensor';
import { testGpuOps } from '../common/node-test-gpu';
import { attentionForward } from '../attention/attention';
import { expectClose } from '../testing/expect-close';
import { testTensors } from '../testing/gpu-tensors';
import { attentionDecode } from './attention-decode';
import { attentionDecodeRef } from './attention-decode.ref';

const gpu = await testGpuOps();

// Float32 on the GPU (a base-2 online softmax, one pass over the keys) against float64 in the
// reference. The error scales with |v| (out is a convex combination of values) and with the score
// range, so atol is relative to the largest expected value, as in kernels/attention. On
// SwiftShader the worst seen is 3.4e-7 of it (|qk| ≤ 4, |v| ≤ 1000).
const REL = 1e-5;
const tol = (want: ArrayLike<number>) => ({ atol: REL * Math.max(1e-30, ...Array.from(want, Math.abs)), rtol: REL });

interface Case {
  B: number;
  L: number;
  NH: number;
  /** kv heads (grouped-query attention); default NH. */
  NKV?: number;
  hs: number;
  lengths: number[];
  /** Half-widths of the uniform q/k and v ranges. */
  qk?: number;
  vo?: number;
}

/** Seeded lengths in 0..L with 0 and L among them (when B ≥ 2). */
function randomLengths(B: number, L: number, seed: number): number[] {
  const rand = mulberry32(seed);
  return Array.from({ length: B }, (_, b) => (b === 0 ? L : b === 1 ? 0 : Math.floor(rand() * (L + 1))));
}

describe.runIf(gpu)('attentionDecode on WebGPU vs attentionDecodeRef', () => {
  afterAll(() => gpu?.ctx.device.destroy());

  async function check({ B, L, NH, NKV = NH, hs, lengths, qk = 1, vo = 1 }: Case) {
    const ops = gpu!;
    const [nq, nc] = [B * NH * hs, B * L * NKV * hs];
    const seed = B * 7919 + L * 131 + NH * 17 + hs;
    const q = randomArray(nq, seed, -qk, qk);
    const k = randomArray(nc, seed + 1, -qk, qk);
    const v = randomArray(nc, seed + 2, -vo, vo);
    // Slots past a row's length are stale: NaN there would poison any output that read them.
    const W = NKV * hs;
    for (let b = 0; b < B; b++) for (const x of [k, v]) x.fill(NaN, (b * L + lengths[b]) * W, (b + 1) * L * W);
    const { tensor, destroyAll } = testTensors(ops);
    const tout = tensor('out', new Float32Array(nq).fill(7)); // an inactive row must be written with zeros
    attentionDecode(
      ops.rt,
      tout,
      tensor('q', q),
      tensor('kCache', k),
      tensor('vCache', v),
      tensor('lengths', Int32Array.from(lengths)),
      B,
      L,
      NH,
      NKV,
      hs,
    );
    const want = new Float32Array(nq);
    attentionDecodeRef(want, q, k, v, lengths, B, L, NH, NKV, hs);
    const got = await ops.rt.read(tout);
    expectClose(got, want, {
      ...tol(want),
      label: `B=${B} L=${L} NH=${NH} NKV=${NKV} hs=${hs} lengths=${lengths.join(',')} |qk|<=${qk} |v|<=${vo}`,
    });
    destroyAll();
    return got;
  }

  it('matches on tiny cases, hs = 4: one slot, odd B and L, lengths 0 and L', async () => {
    await check({ B: 1, L: 1, NH: 1, hs: 4, lengths: [1] });
    await check({ B: 5, L: 7, NH: 3, hs: 4, lengths: [0, 7, 3, 1, 5] });
  });

  it('matches on hs = 16 and 64, odd B and L, more rows than a workgroup', async () => {
    await check({ B: 3, L: 33, NH: 2, hs: 16, lengths: [33, 0, 17] });
    await check({ B: 7, L: 65, NH: 1, hs: 64, lengths: randomLengths(7, 65, 1) });
    await check({ B: 37, L: 13, NH: 4, hs: 16, lengths: randomLengths(37, 13, 2) });
    await check({ B: 9, L: 21, NH: 3, hs: 8, lengths: randomLengths(9, 21, 3) });
  });

  it('matches for every head size 4, 8, .., 64 (each vec4 register of the kernel)', async () => {
    for (let hs = 4; hs <= 64; hs += 4) await check({ B: 3, L: 5, NH: 2, hs, lengths: [5, 0, 3] });
  });

  it('stays accurate on peaked softmaxes and large values', async () => {
    await check({ B: 5, L: 31, NH: 2, hs: 16, lengths: randomLengths(5, 31, 4), qk: 4, vo: 1000 });
    await check({ B: 3, L: 17, NH: 2, hs: 64, lengths: [17, 0, 9], qk: 3, vo: 1e6 });
  });

  it('matches with grouped-query attention: NKV = 1, 2, 3 of NH = 6, and 2 of 4 with hs = 64', async () => {
    for (const NKV of [1, 2, 3]) await check({ B: 5, L: 9, NH: 6, NKV, hs: 8, lengths: [9, 0, 4, 1, 7] });
    await check({ B: 37, L: 13, NH: 4, NKV: 2, hs: 64, lengths: randomLengths(37, 13, 5), qk: 3, vo: 100 });
  });

  it('writes zeros for every head of an inactive row', async () => {
    const got = await check({ B: 3, L: 5, NH: 2, hs: 8, lengths: [0, 5, 0] });
    expect([...got.subarray(0, 16), ...got.subarray(32, 48)]).toEqual(new Array(32).fill(0));
  });

  it('clamps lengths outside 0..L on the GPU (the reference throws)', async () => {
    const ops = gpu!;
    const [B, L, NH, hs] = [3, 6, 2, 4];
    const [q, k, v] = [B * NH * hs, B * L * NH * hs, B * L * NH * hs].map((n, i) => randomArray(n, 40 + i));
    const { tensor, empty, destroyAll } = testTensors(ops);
    const [tq, tk, tv] = [tensor('q', q), tensor('kCache', k), tensor('vCache', v)];
    const [a, b] = [empty('a', B * NH * hs), tensor('b', new Float32Array(B * NH * hs).fill(7))];
    attentionDecode(ops.rt, a, tq, tk, tv, tensor('lengths', Int32Array.of(6, 0, 2)), B, L, NH, NH, hs);
    attentionDecode(ops.rt, b, tq, tk, tv, tensor('outOfRange', Int32Array.of(1000, -3, 2)), B, L, NH, NH, hs);
    expect(await ops.rt.read(b)).toEqual(await ops.rt.read(a));
    destroyAll();
  });

  it('equals the GPU training attention at every position t when the cache holds positions 0..t (MHA and GQA)', async () => {
    const ops = gpu!;
    for (const [T, NH, NKV, hs] of [
      [9, 2, 2, 4],
      [33, 3, 3, 16],
      [20, 1, 1, 64],
      [17, 4, 2, 8],
    ]) {
      const [n, nkv] = [T * NH * hs, T * NKV * hs];
      const q = randomArray(n, 100 * T + 1, -2, 2);
      const [k, v] = [2, 3].map((s) => randomArray(nkv, 100 * T + s, -2, 2));
      const { tensor, empty, destroyAll } = testTensors(ops);
      const train = empty('trainOut', n);
      attentionForward(
        ops.rt,
        train,
        empty('lse', NH * T),
        tensor('q', q),
        tensor('k', k),
        tensor('v', v),
        tensor('seg', new Int32Array(T).fill(1)),
        1,
        T,
        NH,
        NKV,
        hs,
      );
      // Same arithmetic in the same order as attention_forward: on SwiftShader the two agree bit
      // for bit; the tolerance leaves room for other compilers' contractions.
      // Row b: the whole sequence as its cache (slots > b are later positions, to be ignored),
      // length b + 1, and the query of position b.
      const [kc, vc] = [new Float32Array(T * nkv), new Float32Array(T * nkv)];
      for (let b = 0; b < T; b++) {
        kc.set(k, b * nkv);
        vc.set(v, b * nkv);
      }
      const decode = empty('decodeOut', n);
      const lengths = Int32Array.from({ length: T }, (_, b) => b + 1);
      attentionDecode(
        ops.rt,
        decode,
        tensor('q', q),
        tensor('kCache', kc),
        tensor('vCache', vc),
        tensor('lengths', lengths),
        T,
        T,
        NH,
        NKV,
        hs,
      );
      const want = await ops.rt.read(train);
      expectClose(await ops.rt.read(decode), want, {
        ...tol(want),
        label: `decode vs training attention, T=${T} NH=${NH} NKV=${NKV} hs=${hs}`,
      });
      destroyAll();
    }
  });

  it('runs on arena views at non-zero offsets and with any workgroup size', async () => {
    const ops = gpu!;
    const [B, L, NH, hs] = [5, 11, 2, 8];
    const [nq, nc] = [B * NH * hs, B * L * NH * hs];
    const acts = new Arena(ops.ctx, 'acts', [
      { name: 'pad', length: 3 },
      { name: 'q', length: nq },
      { name: 'lengths', length: B },
    ]);
    const cache = new Arena(ops.ctx, 'cache', [
      { name: 'k', length: nc },
      { name: 'v', length: nc },
    ]);
    const outs = new Arena(ops.ctx, 'outs', [
      { name: 'pad', length: 5 },
      { name: 'out', length: nq },
    ]);
    const [q, k, v] = [nq, nc, nc].map((n, i) => randomArray(n, 60 + i));
    const lengths = randomLengths(B, L, 6);
    uploadTensor(ops.ctx, acts.get('q'), q);
    uploadTensor(ops.ctx, acts.get('lengths'), Int32Array.from(lengths));
    uploadTensor(ops.ctx, cache.get('k'), k);
    uploadTensor(ops.ctx, cache.get('v'), v);
    const want = new Float32Array(nq);
    attentionDecodeRef(want, q, k, v, lengths, B, L, NH, NH, hs);
    for (const wg of [1, 4, 64]) {
      attentionDecode(
        ops.rt,
        outs.get('out'),
        acts.get('q'),
        cache.get('k'),
        cache.get('v'),
        acts.get('lengths'),
        B,
        L,
        NH,
        NH,
        hs,
        wg,
      );
      expectClose(await ops.rt.read(outs.get('out')), want, { ...tol(want), label: `arena views, WG=${wg}` });
    }
    expect(ops.ctx.errors.map((e) => e.message)).toEqual([]);
    for (const x of [acts, cache, outs]) x.destroy();
  });

  it('refuses bad head sizes, short buffers and an output sharing a buffer with an input', () => {
    const ops = gpu!;
    const { empty, destroyAll } = testTensors(ops);
    const [x, y, lens] = [empty('x', 256), empty('y', 256), empty('lens', 4)];
    expect(() => attentionDecode(ops.rt, y, x, x, x, lens, 1, 4, 1, 1, 6)).toThrow(/hs must be a multiple of 4/);
    expect(() => attentionDecode(ops.rt, y, x, x, x, lens, 1, 1, 1, 1, 68)).toThrow(
      /hs must be a multiple of 4 in 4..64/,
    );
    expect(() => attentionDecode(ops.rt, x, x, y, y, lens, 2, 4, 2, 2, 4)).toThrow(
      /out \('x'\) shares a buffer with q/,
    );
    expect(() => attentionDecode(ops.rt, y, x, x, x, lens, 2, 8, 2, 2, 16)).toThrow(
      /kCache has 256 elements, needs B\*L\*NKV\*hs = 2\*8\*2\*16 = 512/,
    );
    expect(() => attentionDecode(ops.rt, y, x, x, x, lens, 5, 2, 2, 2, 4)).toThrow(
      /lengths has 4 elements, needs B = 5/,
    );
    expect(() => attentionDecode(ops.rt, y, x, x, x, lens, 2, 2, 4, 3, 4)).toThrow(
      /NH \(4 query heads\) must be a multiple of NKV \(3 kv heads\)/,
    );
    destroyAll();
  });
});
