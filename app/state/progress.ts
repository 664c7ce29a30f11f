/**
 * What the dashboard says about the step under way and the run's remaining time, as pure functions
 * of the live run's events (live-run.ts): the phase in words, the elapsed time, and an ETA from
 * the wall time of the latest steps (evaluations and storing included, since they are part of
 * what is left). Not a scheduler and not a measurement of the trainer (that is `perf/*`).
 */
import type { Pause, PhasePoint } from './live-run';

/** Steps whose wall time the ETA averages. */
const ETA_WINDOW = 10;

/** The phase as a person reads it: `sampling: 37 / 128 sequences finished`. */
export function phaseText(p: PhasePoint): string {
  const counted = p.done !== undefined && p.total !== undefined;
  switch (p.phase) {
    case 'pretraining':
      return counted
        ? `pretraining the flow policy (flow matching): step ${p.done} / ${p.total}`
        : 'pretraining the flow policy (flow matching)';
    case 'sampling':
      if (!counted) return 'sampling';
      // DPO counts the pairs found so far; GRPO the sequences finished.
      return p.unit === 'pairs found'
        ? `sampling the base model: ${p.done} / ${p.total} pairs found`
        : `sampling: ${p.done} / ${p.total}${p.unit ? ` ${p.unit}` : ''} finished`;
    case 'grading':
      // An environment graded outside the worker (grpo-code: the companion runs each program).
      return counted ? `grading ${p.done} / ${p.total} ${p.unit ?? 'programs'}` : 'grading';
    case 'training':
      return counted && p.total! > 1
        ? `training: update ${p.done! + 1} of ${p.total}`
        : 'training (forward, backward, AdamW)';
    case 'old log-probs':
      return 'old log-probs: rescoring the batch before the first update';
    case 'reference log-probs':
      return 'reference log-probs (frozen starting weights, for the KL term)';
    case 'evaluating':
      if (!counted) return 'evaluating';
      // Counted as they finish (greedy, then k samples a problem with pass@k): a long evaluation moves.
      return p.unit === 'completions'
        ? `evaluating on held-out problems: ${p.done} / ${p.total} completions finished`
        : `evaluating on ${p.total} held-out ${p.unit ?? 'problems'} (greedy)`;
    case 'storing':
      return 'storing the step (IndexedDB)';
    case 'checkpointing':
      return 'writing a checkpoint';
    default:
      return 'computing the step';
  }
}

/** `1 h 02 min`, `3 min 05 s`, `12 s`. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600),
    m = Math.floor((s % 3600) / 60),
    r = s % 60;
  if (h > 0) return `${h} h ${String(m).padStart(2, '0')} min`;
  if (m > 0) return `${m} min ${String(r).padStart(2, '0')} s`;
  return `${r} s`;
}

interface Timing {
  /** Since the run started (or was continued) in this tab. */
  elapsedMs: number;
  /** Mean wall time of the latest steps (up to 10), null before one ended. */
  msPerStep: number | null;
  /** Time left for the remaining steps at that pace, null before a step ended. */
  etaMs: number | null;
}

/**
 * An ended run's timing from what the store recorded, the one source the runs table's Duration
 * reads too: `activeMs` (the time spent computing its committed steps and evaluations, pauses and
 * gaps excluded) over its `lastStep` steps. Null when the store has no figure.
 */
export function storedTiming(activeMs: number | undefined, lastStep: number): Timing | null {
  if (activeMs === undefined) return null;
  return { elapsedMs: activeMs, msPerStep: lastStep > 0 ? activeMs / lastStep : null, etaMs: null };
}

/** The paused time within [from, to] (a pause still on counts until `to`). */
export function pausedWithin(pauses: readonly Pause[], from: number, to: number): number {
  let ms = 0;
  for (const p of pauses) ms += Math.max(0, Math.min(p.until ?? to, to) - Math.max(p.from, from));
  return ms;
}

/**
 * `stepEnds`: when each step since `startedAt` ended. The first step's time counts from
 * `startedAt`; it includes loading the base and the step-0 evaluation, so once two steps have
 * ended the pace comes from the intervals between step ends only. Paused time (`pauses`) counts
 * nowhere: not in the elapsed time, not in a step's time, not in the ETA (issue 40: a run paused
 * for a minute read 1.3 s a step where its steps took 0.45 s).
 *
 * The ETA moves with the clock: the step under way has already taken `now` − its start, so the
 * time left for it is the pace less that; a step that outlasts the pace counts in the pace of the
 * steps after it. Before, the ETA changed only when a step ended and stood still through a slow
 * step or evaluation (issue 40: "about 28 s left" for minutes).
 */
export function timing(
  startedAt: number,
  stepEnds: { step: number; at: number }[],
  now: number,
  lastStep: number,
  totalSteps: number,
  pauses: readonly Pause[] = [],
): Timing {
  const active = (from: number, to: number) => to - from - pausedWithin(pauses, from, to);
  const elapsedMs = active(startedAt, now);
  if (stepEnds.length === 0) return { elapsedMs, msPerStep: null, etaMs: null };
  const times = (stepEnds.length >= 2 ? stepEnds.map((e) => e.at) : [startedAt, stepEnds[0].at]).slice(
    -(ETA_WINDOW + 1),
  );
  const k = times.length - 1;
  const msPerStep = active(times[0], times.at(-1)!) / k;
  const left = Math.max(0, totalSteps - lastStep);
  if (left === 0) return { elapsedMs, msPerStep, etaMs: 0 };
  const current = active(times.at(-1)!, now);
  const pace = current > msPerStep ? (msPerStep * k + current) / (k + 1) : msPerStep;
  return { elapsedMs, msPerStep, etaMs: Math.max(0, msPerStep - current) + (left - 1) * pace };
}
