/**
 * One opened episode: its facts (task, outcome, status, reward, turns, policy version, trained, group
 * aborted, corrupt, resumed turns, time), the Replay action, the turn timeline and the chain view
 * of the selected turn. Reads `episodeAt`; the selected turn is its state (mount it per episode).
 */
import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { episodeAtQuery } from '../queries/episodes';
import { ChainView } from './ChainView';
import { EpisodeTimeline } from './EpisodeTimeline';
import { ReplayPanel } from './ReplayPanel';
import { fixed } from '../shared/format';
import { policyVersionText, trainedText } from '../shared/episodes';
import { outcomeText } from './episode-outcome';

export function EpisodePanel({
  runId,
  step,
  index,
  onClose,
  imported = false,
}: {
  runId: string;
  step: number;
  index: number;
  onClose: () => void;
  /** The run was imported (verl rollouts): not trained here, so no policy version or update of ours applies. */
  imported?: boolean;
}) {
  const detail = useQuery(episodeAtQuery(runId, step, index));
  const [turn, setTurn] = useState(0);
  const headingId = useId();
  const d = detail.data;
  return (
    <section className="episode-panel" data-testid="episode-panel" aria-labelledby={headingId}>
      <div className="episode-panel-head">
        <h2 id={headingId}>
          Episode {index} of step {step}
          {d ? `: group ${d.group}, sample ${d.sample}` : ''}
        </h2>
        <button type="button" onClick={onClose}>
          Close episode
        </button>
      </div>
      {detail.isPending ? (
        <p role="status">Loading episode {index}…</p>
      ) : detail.isError ? (
        <p role="alert" className="bad">
          Could not read episode {index} of step {step} ({detail.error.name}): {detail.error.message}
        </p>
      ) : !d ? (
        <p>
          Episode {index} of step {step} is not journaled.
        </p>
      ) : (
        <>
          <dl className="facts">
            <dt>Task</dt>
            <dd>
              <code>{d.task.prompt}</code> (answer <code>{d.task.answer}</code>, id {d.task.id})
            </dd>
            <dt>Outcome</dt>
            <dd data-testid="episode-panel-outcome">{outcomeText(d)}</dd>
            <dt>Status</dt>
            <dd>
              {d.status}
              {d.termination ? ` (${d.termination})` : ''}
              {d.detail ? `: ${d.detail}` : ''}
            </dd>
            <dt>Reward</dt>
            <dd>{d.reward ?? 'unscored'}</dd>
            <dt>Turns</dt>
            <dd>
              {d.turns}
              {d.resumedTurns > 0 ? `, ${d.resumedTurns} restored from the journal` : ''}
              {d.resumedBy === 'state' && ', the environment restored from its journaled state (no turn run again)'}
              {d.resumedBy === 'replay' && ', the environment brought back by replaying those turns from its reset'}
            </dd>
            <dt>Policy version</dt>
            <dd>{policyVersionText(d.policyVersion, imported)}</dd>
            <dt>In the update</dt>
            <dd>
              {trainedText(d.trained, imported)}
              {d.groupAborted && <span className="flag"> · group aborted</span>}
              {d.corrupt && <span className="flag"> · corrupt journal record</span>}
            </dd>
            <dt>Time</dt>
            <dd>{fixed(d.ms, 1)} ms sampling and environment</dd>
            {d.stderr && (
              <>
                <dt>Program stderr</dt>
                <dd>
                  <pre className="stderr" data-testid="episode-stderr" tabIndex={0} aria-label="The program's stderr">
                    {d.stderr}
                  </pre>
                </dd>
              </>
            )}
          </dl>
          <ReplayPanel runId={runId} step={step} index={index} />
          <h3>Turns</h3>
          <EpisodeTimeline
            turns={d.turnViews}
            vocab={d.vocab}
            selected={Math.min(turn, Math.max(0, d.turnViews.length - 1))}
            onSelect={setTurn}
            label={`Turns of episode ${index}`}
            imported={imported}
          />
          {d.turnViews.length > 0 && (
            <ChainView turns={d.turnViews} vocab={d.vocab} selected={Math.min(turn, d.turnViews.length - 1)} />
          )}
        </>
      )}
    </section>
  );
}
