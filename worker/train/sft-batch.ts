/**
 * Packs supervised examples (prompt ids then completion ids, one chain each) into a fixed
 * [rows, width] batch with first-fit decreasing (the RL core's `placeChains`), and marks the
 * completion ids as the ones the loss reads; `packMaskedExamples` does the same for examples that
 * carry their own mask (demonstration episodes). Not the RL packer: no sessions, no log-probs.
 */
import { placeChains } from '../rl/pack-chains';
import type { PackedInput } from '../model/packing';

interface Example {
  promptIds: ArrayLike<number>;
  completionIds: ArrayLike<number>;
}

export interface SftBatch extends PackedInput {
  /** 1 on completion ids (aligned with inputIds): the ids whose log-prob the loss reads. */
  lossMask: Float32Array;
  /** Real (non-padding) ids / (rows × width). */
  efficiency: number;
}

type SftPackResult = { ok: true; batch: SftBatch } | { ok: false; reason: string; rowsNeeded: number };

export function packExamples(examples: readonly Example[], rows: number, width: number): SftPackResult {
  return packChainsInto(
    examples.map((e) => e.promptIds.length + e.completionIds.length),
    rows,
    width,
    (chain, t) => {
      const e = examples[chain];
      const P = e.promptIds.length;
      return t < P ? [e.promptIds[t], 0] : [e.completionIds[t - P], 1];
    },
  );
}

/** An example as one id sequence with its own loss mask (1 on the ids the loss reads): an episode, whose model ids alternate with the environment's. */
export interface MaskedExample {
  ids: ArrayLike<number>;
  /** Aligned with `ids`: 1 where the loss reads the id's log-prob, 0 for context. */
  lossMask: ArrayLike<number>;
}

/** `packExamples` for examples that carry their own loss mask (demonstration episodes). */
export function packMaskedExamples(examples: readonly MaskedExample[], rows: number, width: number): SftPackResult {
  examples.forEach((e, i) => {
    if (e.lossMask.length !== e.ids.length)
      throw new Error(
        `packMaskedExamples: example ${i} has ${e.ids.length} ids but a loss mask of ${e.lossMask.length}; expected one mask entry per id`,
      );
  });
  return packChainsInto(
    examples.map((e) => e.ids.length),
    rows,
    width,
    (chain, t) => [examples[chain].ids[t], examples[chain].lossMask[t]],
  );
}

/** Places chains of `lengths` with first-fit decreasing and writes each chain's `at(chain, t)` = [id, mask] into a fresh batch. */
function packChainsInto(
  lengths: number[],
  rows: number,
  width: number,
  at: (chain: number, t: number) => [number, number],
): SftPackResult {
  const placed = placeChains(lengths, width);
  if (!placed.ok) {
    return {
      ok: false,
      reason: `example(s) ${placed.tooLong.join(', ')} longer than width ${width}`,
      rowsNeeded: placed.rowsNeeded,
    };
  }
  if (placed.rowsNeeded > rows) {
    return {
      ok: false,
      reason: `${lengths.length} examples need ${placed.rowsNeeded} rows of width ${width}, have ${rows}`,
      rowsNeeded: placed.rowsNeeded,
    };
  }
  const n = rows * width;
  const inputIds = new Int32Array(n);
  const segmentIds = new Int32Array(n);
  const positions = new Int32Array(n);
  const lossMask = new Float32Array(n);
  let real = 0;
  for (const p of placed.placements) {
    const base = p.row * width + p.offset;
    for (let t = 0; t < lengths[p.chain]; t++) {
      const [id, mask] = at(p.chain, t);
      inputIds[base + t] = id;
      segmentIds[base + t] = p.segment;
      positions[base + t] = t;
      lossMask[base + t] = mask;
    }
    real += lengths[p.chain];
  }
  return { ok: true, batch: { rows, width, inputIds, segmentIds, positions, lossMask, efficiency: real / n } };
}
