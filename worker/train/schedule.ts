/**
 * Learning-rate schedule: linear warmup from 0 to `lr` over `warmup` steps, then cosine decay to
 * `minLr` at `total` steps (and `minLr` after). Steps are 1-based, as AdamW's bias correction.
 */
interface Schedule {
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

/**
 * The learning-rate schedule of an RL run, per sampled batch, as verl's actor steps it
 * (verl/utils/torch_functional.py `get_constant_schedule_with_warmup` and
 * `get_cosine_schedule_with_warmup` with num_cycles 0.5, wrapped in torch's `LambdaLR`, stepped
 * once after each training step): batch k (1-based) trains at lr · factor(k − 1) for every one of
 * its optimizer steps, so with a warmup the first batch trains at lr 0, as in verl.
 * - constant: factor(s) = min(1, s / max(1, warmup));
 * - cosine: factor(s) = s / max(1, warmup) while s < warmup, then
 *   max(0, cos(π · p) · (1 − r) / 2 + (1 + r) / 2) with p = (s − warmup) / max(1, total − warmup)
 *   and r = minLrRatio (verl `optim.min_lr_ratio`).
 */
export interface RlSchedule {
  /** verl `optim.lr_scheduler_type` (formerly `warmup_style`). */
  style: 'constant' | 'cosine';
  /** verl `optim.lr_warmup_steps`: batches of linear warmup from 0. */
  warmup: number;
  /** verl `optim.min_lr_ratio`: the cosine's floor as a fraction of lr (cosine only). */
  minLrRatio: number;
}

/** The learning rate of sampled batch `batch` (1-based) of a run of `total` batches at peak `lr`. */
export function rlLrAt(batch: number, lr: number, total: number, s: RlSchedule | undefined): number {
  if (!s) return lr;
  const step = batch - 1;
  const warm = step / Math.max(1, s.warmup);
  if (s.style === 'constant') return lr * Math.min(1, warm);
  if (step < s.warmup) return lr * warm;
  const p = (step - s.warmup) / Math.max(1, total - s.warmup);
  const r = s.minLrRatio;
  return lr * Math.max(0, Math.cos(Math.PI * p) * ((1 - r) / 2) + (1 + r) / 2);
}

/** The schedule a run's options ask for (`lrSchedule`, `lrWarmup`, `minLrRatio`); undefined: constant lr. */
export function rlScheduleOf(o: {
  lrSchedule?: RlSchedule['style'];
  lrWarmup?: number;
  minLrRatio?: number;
}): RlSchedule | undefined {
  if (o.lrSchedule === undefined && o.lrWarmup === undefined) return undefined;
  return { style: o.lrSchedule ?? 'constant', warmup: o.lrWarmup ?? 0, minLrRatio: o.minLrRatio ?? 0 };
}
