/**
 * What the run is doing now: the progress bar, the step under way and its phase (sampling n / N
 * sequences, grading k / n programs, old log-probs, training, evaluating, storing), how long the step and the run have
 * taken, an ETA for the rest, and "pausing…" / "stopping…" until the worker reaches the end of
 * the step (it acts between steps). A one-second clock ticks while the run is live.
 */
import { useEffect, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { runsQuery } from '../queries/experiments';
import { duration, phaseText, storedTiming, timing } from '../state/progress';
import { useRunStore } from '../state/live-run';

function useNow(ticking: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!ticking) return;
    const tick = () => setNow(Date.now());
    const first = setTimeout(tick, 0);
    const id = setInterval(tick, 1000);
    return () => {
      clearTimeout(first);
      clearInterval(id);
    };
  }, [ticking]);
  return now;
}

export function RunProgress({ headline }: { headline: string }) {
  const { runId, status, totalSteps, steps, phase, startedAt, stepEnds, pauses, requested } = useRunStore();
  const live = status === 'running';
  const ongoing = live || status === 'paused';
  const now = useNow(ongoing);
  const step = steps.at(-1)?.step ?? 0;
  // A run that has ended reads its time from the store, as the runs table does; a live one from this tab's clock.
  const stored = useQuery({ ...runsQuery(), enabled: !ongoing }).data?.find((r) => r.runId === runId);
  const t = !ongoing
    ? storedTiming(stored?.activeMs, stored?.lastStep ?? step)
    : startedAt !== null
      ? timing(startedAt, stepEnds, now, step, totalSteps, pauses)
      : null;
  const pending =
    requested === 'pause'
      ? 'pausing… (the step under way finishes first)'
      : requested === 'stop'
        ? 'stopping… (the step under way finishes and is stored first)'
        : null;
  return (
    <>
      <div className="run-progress">
        <progress max={totalSteps} value={step} aria-label="Run progress" />
        <span data-testid="run-progress-text">
          step <span data-testid="run-step">{step}</span> / {totalSteps}
          {headline}
        </span>
      </div>
      {(live || pending) && (
        <p data-testid="run-phase">
          {/* Only the pending pause or stop is announced: the phase changes several times a second. */}
          <strong role="status">{pending ?? ''}</strong>
          {pending ? ' ' : ''}
          {phase && live && (
            <>
              {phase.step === 0 ? 'Before training' : `Step ${phase.step}`}: {phaseText(phase)}
              {stepEnds.length > 0 || phase.step > 1 ? '' : ' (the first step also loads the model)'}.
            </>
          )}
        </p>
      )}
      {t && (
        <p data-testid="run-timing">
          {ongoing ? 'Elapsed' : 'Computed in'} {duration(t.elapsedMs)}
          {t.msPerStep !== null ? ` · ${(t.msPerStep / 1000).toFixed(1)} s per step` : ''}
          {live && t.etaMs !== null
            ? ` · about ${duration(t.etaMs)} left (ETA ${new Date(now + t.etaMs).toLocaleTimeString()})`
            : live
              ? ' · ETA after the first step'
              : ''}
        </p>
      )}
    </>
  );
}
