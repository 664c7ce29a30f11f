/**
 * Test fixtures for attention (used by attention/attention.ref.test.ts and attention.test.ts,
 * not by the model): seeded packed rows. `packRows` lays chains out in rows, as rl/pack.ts does,
 * so tests can check that a chain's outputs do not depend on what else shares its row.
 */
import { mulberry32, randomArray } from '../common/random';

/** One chain's per-token data: each array is (len, NH, hs). */
export interface Chain {
  len: number;
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  dout: Float32Array;
}

export interface PackedRows {
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  dout: Float32Array;
  segmentIds: Int32Array;
}

export function randomChain(len: number, NH: number, hs: number, seed: number): Chain {
  const n = len * NH * hs;
  return {
    len,
    q: randomArray(n, seed),
    k: randomArray(n, seed + 1),
    v: randomArray(n, seed + 2),
    dout: randomArray(n, seed + 3),
  };
}

/**
 * Rows of width T: rows[b] lists [chain, segment id] in order; the tail is padding (segment 0)
 * filled with seeded junk, which must not leak into any output.
 */
export function packRows(rows: [Chain, number][][], T: number, NH: number, hs: number, seed: number): PackedRows {
  const B = rows.length;
  const W = NH * hs;
  const junk = (i: number) => randomArray(B * T * W, seed + i, -3, 3);
  const out: PackedRows = { q: junk(0), k: junk(1), v: junk(2), dout: junk(3), segmentIds: new Int32Array(B * T) };
  rows.forEach((chains, b) => {
    let t = 0;
    for (const [c, id] of chains) {
      if (t + c.len > T) throw new Error(`packRows: row ${b} overflows width ${T}`);
      for (const key of ['q', 'k', 'v', 'dout'] as const) out[key].set(c[key], (b * T + t) * W);
      out.segmentIds.fill(id, b * T + t, b * T + t + c.len);
      t += c.len;
    }
  });
  return out;
}

/** Seeded segment ids (B, T): chains of 1..maxLen tokens with ids 1, 2, ..., then a padding tail. */
export function randomSegments(B: number, T: number, maxLen: number, seed: number): Int32Array {
  const rand = mulberry32(seed);
  const seg = new Int32Array(B * T);
  for (let b = 0; b < B; b++) {
    const used = T - Math.floor(rand() * Math.min(4, T)); // 0..3 padding tokens
    let id = 1;
    for (let t = 0; t < used; id++) {
      const len = 1 + Math.floor(rand() * maxLen);
      seg.fill(id, b * T + t, b * T + Math.min(used, t + len));
      t += len;
    }
  }
  return seg;
}
