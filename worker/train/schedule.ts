/**
 * Learning-rate schedule: linear warmup from 0 to `lr` over `warmup` steps, then cosine decay to
 * `minLr` at `total` steps (and `minLr` after). Steps are 1-based, as AdamW's bias correction.
 */
export interface Schedule {
  lr: number;
  warmup: number;
  total: number;
  minLr: number;
}

export function lrAt(step: number, s: Schedule): number {
  if (step <= s.warmup) return (s.lr * step) / Math.max(1, s.warmup);
  if (step >= s.total) return s.minLr;
  const progress = (step - s.warmup) / Math.max(1, s.total - s.warmup);
  return s.minLr + 0.5 * (s.lr - s.minLr) * (1 + Math.cos(Math.PI * progress));
}
