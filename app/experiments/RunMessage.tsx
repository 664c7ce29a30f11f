/**
 * The run's last message (stopped, failed, out of storage, ...) and, where the run can continue from
 * a checkpoint, its Continue button right there: "stopped after step 4; continue from its checkpoint
 * [Continue from step 4]". An interrupted run opened from the table has no message: the line says so.
 * A run stopped by its environment (EnvironmentBroken) links to the episode it failed on when the
 * journal holds it; the message keeps its lines (the program's stderr is quoted below the cause).
 */
import { useQuery } from '@tanstack/react-query';
import { useShallow } from 'zustand/react/shallow';
import { runsQuery } from '../queries/experiments';
import { useRunStore } from '../state/live-run';
import { formatEpisodeLink } from '../shared/episodes';
import { continueLabel, isContinuable } from './continuable';
import { useContinueRun } from './continue-run';

export function RunMessage() {
  const { runId, status, message } = useRunStore(
    useShallow((s) => ({ runId: s.runId, status: s.status, message: s.message })),
  );
  const stored = useQuery(runsQuery()).data?.find((r) => r.runId === runId);
  const { go, refused } = useContinueRun();
  const live = status === 'running' || status === 'paused';
  // The listing may lag the live status by a refresh: both must say the run has ended.
  const continuable = !live && stored !== undefined && stored.status === status && isContinuable(stored);
  const text =
    message ??
    (continuable && status === 'interrupted'
      ? `interrupted (its page closed mid-run); continue from its checkpoint at step ${stored.checkpointStep}`
      : null);
  if (!text && !continuable) return null;
  return (
    <div className="run-message">
      {text && (
        <p role={status === 'failed' ? 'alert' : 'status'} className="run-message-text">
          {text}
        </p>
      )}
      {status === 'failed' && stored?.failedEpisode && (
        <a
          href={formatEpisodeLink({
            run: stored.runId,
            step: stored.failedEpisode.step,
            episode: stored.failedEpisode.index,
          })}
        >
          Open the failing episode (step {stored.failedEpisode.step}, episode {stored.failedEpisode.index})
        </a>
      )}
      {continuable && (
        <button type="button" onClick={() => go(stored)} aria-label={continueLabel(stored)}>
          Continue from step {stored.checkpointStep}
        </button>
      )}
      {refused && (
        <p role="alert" className="bad">
          Could not continue: {refused}
        </p>
      )}
    </div>
  );
}
