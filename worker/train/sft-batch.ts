/**
 * Packs supervised examples (prompt ids then completion ids, one chain each) into a fixed
 * [rows, width] batch with first-fit decreasing (the RL core's `placeChains`), and marks the
 * completion ids as the ones the loss reads. Not the RL packer: no sessions, no log-probs.
 */
import { placeChains } from '../rl/pack-chains';
import type { PackedInput } from '../model/model';

export interface Example {
  promptIds: ArrayLike<number>;
  completionIds: ArrayLike<number>;
}

export interface SftBatch extends PackedInput {
  /** 1 on completion ids (aligned with inputIds): the ids whose log-prob the loss reads. */
  lossMask: Float32Array;
  /** Real (non-padding) ids / (rows × width). */
  efficiency: number;
}

export type SftPackResult = { ok: true; batch: SftBatch } | { ok: false; reason: string; rowsNeeded: number };

export function packExamples(examples: readonly Example[], rows: number, width: number): SftPackResult {
  const lengths = examples.map((e) => e.promptIds.length + e.completionIds.length);
  const placed = placeChains(lengths, width);
  if (!placed.ok) {
    return { ok: false, reason: `example(s) ${placed.tooLong.join(', ')} longer than width ${width}`, rowsNeeded: placed.rowsNeeded };
  }
  if (placed.rowsNeeded > rows) {
    return { ok: false, reason: `${examples.length} examples need ${placed.rowsNeeded} rows of width ${width}, have ${rows}`, rowsNeeded: placed.rowsNeeded };
  }
  const n = rows * width;
  const inputIds = new Int32Array(n);
  const segmentIds = new Int32Array(n);
  const positions = new Int32Array(n);
  const lossMask = new Float32Array(n);
  let real = 0;
  for (const p of placed.placements) {
    const e = examples[p.chain];
    const P = e.promptIds.length;
    const base = p.row * width + p.offset;
    for (let t = 0; t < lengths[p.chain]; t++) {
      inputIds[base + t] = t < P ? e.promptIds[t] : e.completionIds[t - P];
      segmentIds[base + t] = p.segment;
      positions[base + t] = t;
      if (t >= P) lossMask[base + t] = 1;
    }
    real += lengths[p.chain];
  }
  return { ok: true, batch: { rows, width, inputIds, segmentIds, positions, lossMask, efficiency: real / n } };
}
