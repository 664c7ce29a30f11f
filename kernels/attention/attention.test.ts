import { afterAll, describe, expect, it } from 'vitest';
import { Arena } from '../common/arena';
import { randomArray } from '../common/random';
import { uploadTensor } from '../common/tensor';
import { testGpuOps } from '../common/node-test-gpu';
import { packRows, randomChain, randomSegments } from '../testing/attention-fixtures';
import { expectClose } from '../testing/expect-close';
import { testTensors } from '../testing/gpu-tensors';
import { attentionBackward, attentionBackwardScratchLength, attentionForward } from './attention';
import { attentionBackwardRef, attentionForwardRef } from './attention.ref';

const gpu = await testGpuOps();

// Float32 on the GPU (a base-2 online softmax, one pass over the keys) against float64 in the
// reference. The error scales with the magnitude of each output (|v| for out and dv; |v|·|dout|
// and the score range for dq and dk), so atol is relative to the largest expected value: on
// SwiftShader the worst seen is 1.1e-6 of it (dk on the peaked, large-value case).
const REL = 1e-5;
const tol = (want: ArrayLike<number>) => ({ atol: REL * Math.max(...Array.from(want, Math.abs)), rtol: REL });

interface Case {
  B: number;
  T: number;
  NH: number;
  /** kv heads (grouped-query attention); default NH. */
  NKV?: number;
  hs: number;
  seg: Int32Array;
  /** Half-widths of the uniform q/k and v/dout ranges. */
  qk?: number;
  vo?: number;
}

describe.runIf(gpu)('attention on WebGPU vs attentionRef', () => {
  afterAll(() => gpu?.ctx.device.destroy());

  async function check({ B, T, NH, NKV = NH, hs, seg, qk = 1, vo = 1 }: Case) {
    const ops = gpu!;
    const [n, nkv] = [B * T * NH * hs, B * T * NKV * hs];
    const seed = B * 7919 + T * 131 + NH * 17 + hs;
    const [q, k] = [n, nkv].map((len, i) => randomArray(len, seed + i, -qk, qk));
    const [v, dout] = [nkv, n].map((len, i) => randomArray(len, seed + 2 + i, -vo, vo));
    const inits = [n, nkv, nkv].map((len, i) => randomArray(len, seed + 4 + i));
    const { tensor, empty, destroyAll } = testTensors(ops);
    const t = {
      q: tensor('q', q),
      k: tensor('k', k),
      v: tensor('v', v),
      dout: tensor('dout', dout),
      seg: tensor('segmentIds', seg),
    };
    const [tout, tlse] = [empty('out', n), empty('lse', B * NH * T)];
    const [tdq, tdk, tdv] = inits.map((x, i) => tensor(['dq', 'dk', 'dv'][i], x));
    attentionForward(ops.rt, tout, tlse, t.q, t.k, t.v, t.seg, B, T, NH, NKV, hs);
    attentionBackward(ops.rt, tdq, tdk, tdv, t.dout, t.q, t.k, t.v, tout, tlse, t.seg, B, T, NH, NKV, hs);
    const label = `B=${B} T=${T} NH=${NH} NKV=${NKV} hs=${hs} |qk|<=${qk} |v|<=${vo}`;
    const [out, lse] = [new Float32Array(n), new Float32Array(B * NH * T)];
    attentionForwardRef(out, lse, q, k, v, seg, B, T, NH, NKV, hs);
    const grads = inits.map((x) => x.slice());
    attentionBackwardRef(grads[0], grads[1], grads[2], dout, q, k, v, out, lse, seg, B, T, NH, NKV, hs);
    expectClose(await ops.rt.read(tout), out, { ...tol(out), label: `out ${label}` });
    expectClose(await ops.rt.read(tlse), lse, { ...tol(lse), label: `lse ${label}` });
    for (const [i, name] of ['dq', 'dk', 'dv'].entries()) {
      const got = await ops.rt.read([tdq, tdk, tdv][i]);
      expectClose(got, grads[i], { ...tol(grads[i]), label: `${name} (+=) ${label}` });
      // A padding position is neither query nor key: its gradient rows stay exactly as they were.
      const W = (i === 0 ? NH : NKV) * hs;
      for (let j = 0; j < B * T; j++)
        if (seg[j] === 0) expect(got.subarray(j * W, (j + 1) * W)).toEqual(inits[i].subarray(j * W, (j + 1) * W));
    }
    destroyAll();
  }

  it('matches on T = 1 and T = 7 with hs = 4, several segments and padding tails', async () => {
    await check({ B: 1, T: 1, NH: 1, hs: 4, seg: Int32Array.of(1) });
    await check({ B: 2, T: 7, NH: 3, hs: 4, seg: Int32Array.of(1, 1, 1, 2, 2, 0, 0, 4, 4, 4, 4, 4, 4, 4) });
  });

  it('matches on T = 33 and T = 65 (two workgroups), hs = 16, 8 and 64', async () => {
    await check({ B: 3, T: 33, NH: 2, hs: 16, seg: randomSegments(3, 33, 12, 1) });
    await check({ B: 1, T: 65, NH: 2, hs: 8, seg: randomSegments(1, 65, 40, 2) });
    await check({ B: 1, T: 20, NH: 1, hs: 64, seg: randomSegments(1, 20, 20, 3) });
  });

  it('stays accurate on peaked softmaxes and large values', async () => {
    await check({ B: 2, T: 24, NH: 2, hs: 16, seg: randomSegments(2, 24, 16, 4), qk: 4, vo: 1000 });
  });

  it('matches with grouped-query attention: NKV = 1, 2, 3 of NH = 6, and 2 of 4 over two workgroups', async () => {
    const seg = Int32Array.of(1, 1, 1, 2, 2, 0, 0, 4, 4, 4, 5, 4, 5, 5);
    for (const NKV of [1, 2, 3]) await check({ B: 2, T: 7, NH: 6, NKV, hs: 4, seg });
    await check({ B: 2, T: 67, NH: 4, NKV: 2, hs: 16, seg: randomSegments(2, 67, 30, 6) });
    await check({ B: 1, T: 20, NH: 4, NKV: 1, hs: 64, seg: randomSegments(1, 20, 20, 7), qk: 3, vo: 100 });
  });

  it('gives a chain the same outputs and gradients alone, packed after another chain, and swapped', async () => {
    const ops = gpu!;
    const [T, NH, hs] = [12, 2, 8];
    const [a, b] = [randomChain(5, NH, hs, 11), randomChain(6, NH, hs, 21)];
    const rows = packRows(
      [
        [[a, 1]],
        [
          [b, 1],
          [a, 2],
        ],
        [
          [a, 7],
          [b, 3],
        ],
      ],
      T,
      NH,
      hs,
      31,
    );
    const n = 3 * T * NH * hs;
    const { tensor, empty, destroyAll } = testTensors(ops);
    const t = {
      q: tensor('q', rows.q),
      k: tensor('k', rows.k),
      v: tensor('v', rows.v),
      dout: tensor('dout', rows.dout),
      seg: tensor('segmentIds', rows.segmentIds),
    };
    const [tout, tlse, tdq, tdk, tdv] = [n, 3 * NH * T, n, n, n].map((len, i) => empty(`t${i}`, len));
    const scratch = empty('scratch', attentionBackwardScratchLength(3, T, NH));
    attentionForward(ops.rt, tout, tlse, t.q, t.k, t.v, t.seg, 3, T, NH, NH, hs);
    attentionBackward(ops.rt, tdq, tdk, tdv, t.dout, t.q, t.k, t.v, tout, tlse, t.seg, 3, T, NH, NH, hs, scratch);
    const W = NH * hs;
    const span = (x: Float32Array, row: number, t0: number, len: number) =>
      x.subarray((row * T + t0) * W, (row * T + t0 + len) * W);
    for (const [name, x] of [
      ['out', tout],
      ['dq', tdq],
      ['dk', tdk],
      ['dv', tdv],
    ] as const) {
      const got = await ops.rt.read(x);
      expectClose(span(got, 1, 6, a.len), span(got, 0, 0, a.len), {
        atol: 0,
        rtol: 0,
        label: `${name} of a: after b vs alone`,
      });
      expectClose(span(got, 2, 0, a.len), span(got, 0, 0, a.len), {
        atol: 0,
        rtol: 0,
        label: `${name} of a: before b vs alone`,
      });
      expectClose(span(got, 2, 5, b.len), span(got, 1, 0, b.len), {
        atol: 0,
        rtol: 0,
        label: `${name} of b: after a vs first`,
      });
    }
    destroyAll();
  });

  it('runs on arena views: inputs in one buffer, dq, dk, dv in another', async () => {
    const ops = gpu!;
    const [B, T, NH, hs] = [2, 9, 2, 8];
    const n = B * T * NH * hs;
    const acts = new Arena(ops.ctx, 'acts', [
      ...['q', 'k', 'v', 'dout'].map((name) => ({ name, length: n })),
      { name: 'seg', length: B * T },
    ]);
    const saved = new Arena(ops.ctx, 'saved', [
      { name: 'out', length: n },
      { name: 'lse', length: B * NH * T },
    ]);
    const grads = new Arena(
      ops.ctx,
      'grads',
      ['dq', 'dk', 'dv'].map((name) => ({ name, length: n })),
    );
    const [q, k, v, dout] = [1, 2, 3, 4].map((s) => randomArray(n, s));
    const seg = randomSegments(B, T, 5, 5);
    [q, k, v, dout, seg].forEach((x, i) => uploadTensor(ops.ctx, acts.get(['q', 'k', 'v', 'dout', 'seg'][i]), x));
    for (const g of ['dq', 'dk', 'dv']) uploadTensor(ops.ctx, grads.get(g), new Float32Array(n));
    const a = (name: string) => acts.get(name);
    attentionForward(ops.rt, saved.get('out'), saved.get('lse'), a('q'), a('k'), a('v'), a('seg'), B, T, NH, NH, hs);
    attentionBackward(
      ops.rt,
      grads.get('dq'),
      grads.get('dk'),
      grads.get('dv'),
      a('dout'),
      a('q'),
      a('k'),
      a('v'),
      saved.get('out'),
      saved.get('lse'),
      a('seg'),
      B,
      T,
      NH,
      NH,
      hs,
    );
    const [out, lse] = [new Float32Array(n), new Float32Array(B * NH * T)];
    attentionForwardRef(out, lse, q, k, v, seg, B, T, NH, NH, hs);
    const want = [new Float32Array(n), new Float32Array(n), new Float32Array(n)];
    attentionBackwardRef(want[0], want[1], want[2], dout, q, k, v, out, lse, seg, B, T, NH, NH, hs);
    expectClose(await ops.rt.read(saved.get('out')), out, { ...tol(out), label: 'out (arena)' });
    for (const [i, name] of ['dq', 'dk', 'dv'].entries())
      expectClose(await ops.rt.read(grads.get(name)), want[i], { ...tol(want[i]), label: `${name} (arena)` });
    expect(ops.ctx.errors.map((e) => e.message)).toEqual([]);
    for (const x of [acts, saved, grads]) x.destroy();
  });

  it('refuses bad head sizes, shared output buffers and a short scratch before dispatching', () => {
    const ops = gpu!;
    const { empty, destroyAll } = testTensors(ops);
    const x = empty('x', 64);
    const y = empty('y', 64);
    const seg = empty('seg', 8);
    const lse = empty('lse', 16);
    expect(() => attentionForward(ops.rt, y, y, x, x, x, seg, 1, 8, 1, 1, 6)).toThrow(/hs must be a multiple of 4/);
    expect(() => attentionForward(ops.rt, x, y, x, x, x, seg, 1, 8, 2, 2, 4)).toThrow(
      /out \('x'\) shares a buffer with q/,
    );
    expect(() => attentionBackward(ops.rt, y, y, y, x, x, x, x, x, lse, seg, 1, 8, 2, 2, 4, seg)).toThrow(
      /scratch has 8 elements, needs 4\*B\*NH\*T = 64/,
    );
    expect(() => attentionBackward(ops.rt, y, y, y, x, x, x, x, x, lse, seg, 1, 8, 2, 2, 4)).toThrow(
      /output 'y' overlaps 'y' \(dq and dk/,
    );
    expect(() => attentionForward(ops.rt, y, y, x, x, x, seg, 1, 8, 2, 2, 8)).toThrow(
      /out has 64 elements, needs B\*T\*NH\*hs = 1\*8\*2\*8 = 128/,
    );
    expect(() => attentionForward(ops.rt, y, empty('lse3', 24), x, x, x, seg, 1, 8, 3, 2, 4)).toThrow(
      /NH \(3 query heads\) must be a multiple of NKV \(2 kv heads\)/,
    );
    destroyAll();
  });
});
