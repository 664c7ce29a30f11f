/**
 * How many threads an op of the wasm backend runs on: one part per `minWork` multiply-adds, at most
 * one per thread, so an op too small to pay for handing parts to helper threads stays on the
 * calling thread. `minWork` starts at `base` (what pays on free cores) and follows the splits'
 * measured pay-off: each split op near the threshold reports its speedup, p · (the caller's own
 * part) / (the whole op); while those stay below RAISE_BELOW (helpers that wake late: other
 * processes on the cores, a scheduler slice each) the threshold doubles, and once they pay again
 * (measured by an occasional split below it, every EXPLORE_EVERY-th) it halves back towards `base`.
 * The numbers never depend on it: every split of an op is bit for bit its single-thread result.
 * Not the threads themselves (threads.ts) nor the ops (backends/wasm.ts).
 */

/** Splits near the threshold averaged before it moves, and the weight of the newest in that average. */
const SAMPLES = 8;
const ALPHA = 0.25;
/** Speedups below which the threshold doubles, and above which it halves (2 parts at best give 2). */
const RAISE_BELOW = 1.15;
const LOWER_ABOVE = 1.4;
/** Above `base`, one op in this many of those that `base` would split is split, to keep measuring. */
const EXPLORE_EVERY = 16;

export class SplitTuner {
  /** Multiply-adds each thread's part must have now. */
  minWork: number;
  private mean = 0;
  private samples = 0;
  private below = 0;

  constructor(
    /** The threshold on free cores, and the lowest it goes. */
    readonly base: number,
    /** The highest it goes. */
    readonly max: number = base * 512,
  ) {
    if (!(base >= 1) || !(max >= base))
      throw new Error(`SplitTuner: base ${base}, max ${max}: expected 1 ≤ base ≤ max`);
    this.minWork = base;
  }

  /** Parts for an op of `work` multiply-adds over `units` splittable rows on `threads` threads. */
  parts(work: number, units: number, threads: number): number {
    const at = (min: number) => Math.max(1, Math.min(threads, units, Math.floor(work / min)));
    const now = at(this.minWork);
    if (now > 1 || this.minWork === this.base) return now;
    const atBase = at(this.base);
    return atBase > 1 && ++this.below % EXPLORE_EVERY === 0 ? atBase : 1;
  }

  /**
   * A split op's timing: its `parts`, `partWork` multiply-adds each, the caller's own part and the
   * whole op (same unit). Only ops within 4× of the threshold move it: bigger ones split at any.
   */
  record(parts: number, partWork: number, hereTime: number, totalTime: number): void {
    if (parts < 2 || partWork >= 4 * this.minWork || !(totalTime > 0)) return;
    const speedup = (parts * hereTime) / totalTime;
    this.mean = this.samples === 0 ? speedup : this.mean + ALPHA * (speedup - this.mean);
    if (++this.samples < SAMPLES) return;
    if (this.mean < RAISE_BELOW && this.minWork < this.max) this.move(Math.min(this.max, this.minWork * 2));
    else if (this.mean > LOWER_ABOVE && this.minWork > this.base) this.move(Math.max(this.base, this.minWork / 2));
  }

  private move(minWork: number): void {
    this.minWork = minWork;
    this.samples = 0;
  }
}
