/**
 * Replays one journaled episode: the worker re-executes its actions against a fresh environment
 * and compares every observation (`replayEpisode`). While it runs the button says so (aria-busy);
 * then the summary (`identical` or `diverged at turn N`) and per turn whether it matched, with the
 * first divergent token and the expected and obtained texts. A failure shows its name and message
 * in an alert. Mount it per episode (a key), so a result never outlives its episode.
 */
import { useMutation } from '@tanstack/react-query';
import { replayEpisode } from '../queries/episodes';
import { replayTurnText } from '../shared/episodes';

export function ReplayPanel({ runId, step, index }: { runId: string; step: number; index: number }) {
  const replay = useMutation({ mutationFn: replayEpisode });
  const r = replay.data;
  return (
    <div className="replay">
      <button
        type="button"
        data-testid="replay-button"
        aria-busy={replay.isPending}
        disabled={replay.isPending}
        onClick={() => replay.mutate({ runId, step, index })}
      >
        {replay.isPending ? 'Replaying…' : r ? 'Replay again' : 'Replay'}
      </button>
      <small> Re-executes the journaled actions against a fresh environment and compares every observation.</small>
      <div aria-live="polite">
        {replay.isPending && <p role="status">Replaying episode {index}…</p>}
        {replay.isError && (
          <p role="alert" className="bad">
            Replay failed ({replay.error.name}): {replay.error.message}
          </p>
        )}
        {r && !replay.isPending && (
          <section data-testid="replay-result" className="replay-result" aria-label="Replay result">
            <p>
              Replay: <strong className={r.identical ? 'ok' : 'bad'}>{r.summary}</strong>
            </p>
            <ol>
              {r.turns.map((t) => (
                <li key={t.turn} data-testid="replay-turn" data-identical={t.identical}>
                  Turn {t.turn}: <span className={t.identical ? 'ok' : 'bad'}>{t.identical ? '✓' : '✗'}</span>{' '}
                  {replayTurnText(t)}
                </li>
              ))}
            </ol>
          </section>
        )}
      </div>
    </div>
  );
}
