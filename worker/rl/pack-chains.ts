/**
 * The two layout steps of `pack`: strict call merging into chains, and first-fit-decreasing
 * placement of chains into rows.
 *
 * Not the array filling (pack.ts). Reference: dew `pack` (docs/rl-core.md "Packing"; docs/rl-formulas.md
 * §9.2): a call whose `promptIds` begin with the previous call's `promptIds + sampledIds` extends
 * that chain, any other call starts a new one; chains are sorted by decreasing length, stably,
 * and each goes at the current end of the first row with room, else a new row opens.
 */
import type { Session } from './types';

/** A run of calls of one session whose contexts extend each other. */
export interface Chain {
  /** Index of the session in pack's input. */
  session: number;
  /** Index in `session.calls` of the chain's first call. */
  firstCall: number;
  /** Number of calls merged into the chain. */
  calls: number;
  /** Ids in the chain: the last call's `promptIds` then its `sampledIds`. */
  length: number;
}

function extendsPrevious(prev: Session['calls'][number], next: Session['calls'][number]): boolean {
  const p = prev.promptIds.length;
  const s = prev.sampledIds.length;
  if (next.promptIds.length < p + s) return false;
  for (let k = 0; k < p; k++) if (next.promptIds[k] !== prev.promptIds[k]) return false;
  for (let k = 0; k < s; k++) if (next.promptIds[p + k] !== prev.sampledIds[k]) return false;
  return true;
}

/** The chains of one session, in call order. */
export function chainsOf(session: Session, index: number): Chain[] {
  const chains: Chain[] = [];
  session.calls.forEach((call, c) => {
    const last = chains.at(-1);
    if (last && extendsPrevious(session.calls[c - 1], call)) last.calls++;
    else chains.push({ session: index, firstCall: c, calls: 1, length: 0 });
    chains.at(-1)!.length = call.promptIds.length + call.sampledIds.length;
  });
  return chains;
}

/** Where one chain landed. `segment` is 1-based within its row. */
export interface Placement {
  chain: number;
  row: number;
  offset: number;
  segment: number;
}

export type Placed =
  { ok: true; placements: Placement[]; rowsNeeded: number } | { ok: false; tooLong: number[]; rowsNeeded: number };

/**
 * First-fit decreasing over `lengths` into rows of `width`. Placements are in placement order
 * (decreasing length, ties in input order). Chains longer than `width` are reported, not placed;
 * `rowsNeeded` then counts one row for each of them on top of the rows the others fill.
 */
export function placeChains(lengths: readonly number[], width: number): Placed {
  const order = lengths.map((_, i) => i).sort((a, b) => lengths[b] - lengths[a]); // stable
  const used: number[] = [];
  const segments: number[] = [];
  const placements: Placement[] = [];
  const tooLong: number[] = [];
  for (const chain of order) {
    const len = lengths[chain];
    if (len > width) {
      tooLong.push(chain);
      continue;
    }
    let row = used.findIndex((u) => u + len <= width);
    if (row < 0) {
      row = used.length;
      used.push(0);
      segments.push(0);
    }
    placements.push({ chain, row, offset: used[row], segment: ++segments[row] });
    used[row] += len;
  }
  if (tooLong.length > 0)
    return { ok: false, tooLong: tooLong.sort((a, b) => a - b), rowsNeeded: used.length + tooLong.length };
  return { ok: true, placements, rowsNeeded: used.length };
}
