import { afterAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../backends/cpu';
import { sampleSelfCheck } from '../backends/wasm';
import { mulberry32 } from '../common/random';
import { testGpuOps } from '../common/node-test-gpu';
import type { Ops, SamplingOptions } from '../ops';
import { nodeWasmOps } from '../wasm/node-wasm';
import { samplingDistribution } from './distribution.ref';
import type { SampleOutput } from './sample.ref';
import { sampleRef } from './sample.ref';

const wasm1 = await nodeWasmOps(1);
const wasm3 = await nodeWasmOps(3, undefined, { partMinWork: 1 }); // rows split across threads at every size
const gpu = await testGpuOps();
afterAll(() => {
  wasm3.close();
  gpu?.ctx.device.destroy();
});
const BACKENDS: [string, Ops][] = [
  ['cpu', createCpuOps()],
  ['wasm × 1 thread', wasm1],
  ['wasm × 3 threads', wasm3],
  ...(gpu ? [['webgpu', gpu] as [string, Ops]] : []),
];

/**
 * Seeded logits (N, V): uniform in [−spread, spread), rounded to `step` when given (ties), with
 * about `masked` of them −∞ (never a whole row).
 */
function logitsOf(N: number, V: number, seed: number, spread: number, step = 0, masked = 0): Float32Array {
  const rand = mulberry32(seed);
  const l = new Float32Array(N * V);
  for (let i = 0; i < l.length; i++) {
    const x = (2 * rand() - 1) * spread;
    l[i] = step > 0 ? Math.round(x / step) * step : x;
    if (rand() < masked && i % V !== 0) l[i] = -Infinity;
  }
  return l;
}

/** Uniforms for N rows: seeded, with the edges 0 and 1 − 2⁻⁵³ and a skipped row (NaN) among them. */
function uniformsOf(N: number, seed: number): Float64Array {
  const rand = mulberry32(seed);
  const u = Float64Array.from({ length: N }, rand);
  if (N > 2) [u[0], u[1], u[2]] = [0, 1 - 2 ** -53, NaN];
  return u;
}

/**
 * Uniforms on the reference's own boundaries: row r's u·total lands on the running sum of a seeded
 * position of its support, where a sum off by one ulp (another exp, another order) flips the draw.
 */
function boundaryUniforms(logits: Float32Array, N: number, V: number, o: SamplingOptions, seed: number): Float64Array {
  const rand = mulberry32(seed);
  return Float64Array.from({ length: N }, (_, r) => {
    const p = Array.from(samplingDistribution(logits.subarray(r * V, (r + 1) * V), o).logProbs, Math.exp);
    const total = p.reduce((a, b) => a + b, 0);
    const cut = Math.floor(rand() * p.length);
    const u = p.slice(0, cut + 1).reduce((a, b) => a + b, 0) / total;
    return u < 1 ? u : rand();
  });
}

async function sampleOn(ops: Ops, logits: Float32Array, u: Float64Array, N: number, V: number, o: SamplingOptions) {
  const t = ops.alloc('logits', logits.length);
  try {
    ops.upload(t, logits);
    return await ops.sample(t, u, N, V, o);
  } finally {
    ops.free(t);
  }
}

/** Where `got` differs from `want` in any bit: row, field, values; empty when identical. */
function differences(got: SampleOutput, want: SampleOutput): string[] {
  const out: string[] = [];
  for (let r = 0; r < want.ids.length; r++) {
    if (got.ids[r] !== want.ids[r]) out.push(`row ${r}: id ${got.ids[r]}, want ${want.ids[r]}`);
    if (!Object.is(got.logProbs[r], want.logProbs[r]))
      out.push(`row ${r}: log-prob ${got.logProbs[r]}, want ${want.logProbs[r]}`);
    if (got.filtered[r] !== want.filtered[r])
      out.push(`row ${r}: filtered ${got.filtered[r]}, want ${want.filtered[r]}`);
  }
  return out.slice(0, 5);
}

// Settings × logits that reach every branch of the reference: greedy, nothing filtered, top-k
// (with ties at the threshold), top-p (cut inside a run of ties), both, a temperature so small that
// scaled logits underflow to −∞, masked ids, one id, and logits spread wide enough to underflow exp.
const SETTINGS: SamplingOptions[] = [
  {},
  { temperature: 0 },
  { temperature: 0.7 },
  { temperature: 1.6 },
  { topK: 1 },
  { topK: 5, temperature: 0.8 },
  { topP: 0.9 },
  { topP: 0.3, temperature: 1.3 },
  { topK: 40, topP: 0.95, temperature: 0.9 },
  { topK: 3, topP: 1e-9 },
  { temperature: 1e-300 },
  { temperature: 5e-324, topK: 4 },
  { topP: 0.5 },
  { topK: 6, topP: 0.25 },
];
const SHAPES: { N: number; V: number; spread: number; step?: number; masked?: number }[] = [
  { N: 5, V: 1, spread: 3 },
  { N: 3, V: 8, spread: 0 }, // all ±0: top-p reaches 1/4, 1/2 exactly; −0 and +0 tie

  { N: 7, V: 13, spread: 4, step: 0.5, masked: 0.3 },
  { N: 9, V: 1000, spread: 8, step: 0.25 },
  { N: 4, V: 257, spread: 2000 },
  { N: 6, V: 32000, spread: 10, masked: 0.01 },
];

/** Every shape × setting × uniform set, with the reference's answer (computed once for all backends). */
const CASES = SHAPES.flatMap((s, si) =>
  SETTINGS.flatMap((o, oi) => {
    const logits = logitsOf(s.N, s.V, 100 + si, s.spread, s.step, s.masked);
    const label = `N ${s.N}, V ${s.V}, ${JSON.stringify(o)}`;
    return [uniformsOf(s.N, 200 + 13 * si + oi), boundaryUniforms(logits, s.N, s.V, o, 300 + 13 * si + oi)].map(
      (u) => ({
        ...s,
        o,
        logits,
        u,
        label,
        want: sampleRef(logits, u, s.N, s.V, o),
      }),
    );
  }),
);

describe('Ops.sample ≡ sampleRef bit for bit (ids, float64 log-probs, filtered) on every backend', () => {
  for (const [name, ops] of BACKENDS)
    it(name, async () => {
      for (const c of CASES) {
        const got = await sampleOn(ops, c.logits, c.u, c.N, c.V, c.o);
        expect(differences(got, c.want), `${name}: ${c.label}`).toEqual([]);
      }
    });
});

describe('Ops.sample refuses what sampleRef refuses, naming the row and index or the field', () => {
  const V = 6;
  const good = [0.1, 0.5, -1, 2, 0, 0.3];
  for (const [name, ops] of BACKENDS)
    it(name, async () => {
      const run = (rows: number[][], u: number[], o: SamplingOptions = {}) =>
        sampleOn(ops, Float32Array.from(rows.flat()), Float64Array.from(u), rows.length, V, o);
      const withAt = (i: number, v: number) => good.map((x, j) => (j === i ? v : x));
      await expect(run([good, withAt(4, NaN)], [0.5, 0.5])).rejects.toThrow(
        /logits\[1, 4\] = NaN: expected a finite number or −Infinity/,
      );
      await expect(run([withAt(2, Infinity), good], [0.5, 0.5])).rejects.toThrow(/logits\[0, 2\] = Infinity/);
      await expect(run([good, new Array(V).fill(-Infinity)], [0.1, 0.2])).rejects.toThrow(
        /row 1: all 6 logits are −Infinity; expected at least one finite logit/,
      );
      await expect(run([good], [1])).rejects.toThrow(
        /uniforms\[0\] = 1: expected a number in \[0, 1\), or NaN to skip row 0/,
      );
      await expect(run([good], [0.5], { topP: 0 })).rejects.toThrow(/topP = 0: expected a number in \(0, 1\]/);
      // A skipped row draws nothing, whatever its logits.
      const skipped = await run([withAt(0, NaN), good], [NaN, 0.5]); // cumulative e^l: 1.1, 2.8, 3.1, 10.5 ≥ 0.5·12.9
      expect([skipped.ids[0], skipped.logProbs[0], skipped.ids[1]]).toEqual([-1, NaN, 3]);
    });
});

describe('the wasm kernels exp and log (V8 fdlibm) against this engine', () => {
  it('agree bit for bit here, so the wasm backend samples with its kernel', () => {
    expect(wasm1.sampleFallback).toBeNull();
    expect(wasm3.sampleFallback).toBeNull();
  });

  it('a kernel whose exp differs in one bit anywhere checked sends sampling to the reference, saying where', () => {
    const nextUp = (x: number) => {
      const b = new Float64Array([x]);
      new BigInt64Array(b.buffer)[0]++;
      return b[0];
    };
    const exact = (xs: Float64Array) => xs.map(Math.exp);
    const fakeExp = { fdlibmExp: (x: number) => (x < -700 ? nextUp(Math.exp(x)) : Math.exp(x)), fdlibmLog: Math.log };
    expect(sampleSelfCheck(fakeExp, exact)).toMatch(
      /^the kernels' exp\(-7\d\d\.\d+\) = .*, this engine's Math\.exp gives /,
    );
    const fakeLog = { fdlibmExp: Math.exp, fdlibmLog: (y: number) => (y > 1e100 ? nextUp(Math.log(y)) : Math.log(y)) };
    expect(sampleSelfCheck(fakeLog, exact)).toMatch(/^the kernels' log\(/);
    const fakePairs = (xs: Float64Array) => xs.map((x) => (x > -0.5 && x < -0.25 ? nextUp(Math.exp(x)) : Math.exp(x)));
    const right = { fdlibmExp: Math.exp, fdlibmLog: Math.log };
    expect(sampleSelfCheck(right, fakePairs)).toMatch(/^the kernels' two-lane exp\(-0\.[234]/);
    expect(sampleSelfCheck(right, exact)).toBeNull();
  });
});
