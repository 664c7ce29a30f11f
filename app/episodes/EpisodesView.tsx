/**
 * Replay (`#/episodes`): the journaled multi-turn episodes of any step of a run whose preset
 * journals them (episode-presets.ts: the presets whose views include Episodes). The run is picked
 * as in Groups and Batch (shared, default the live run), the steps with journaled episodes
 * browsed, the step's episodes listed and filtered by outcome and more (EpisodeList); an opened episode shows beside the list (two columns on a wide screen,
 * stacked under the list's own scroll box on a narrow one) with its turn timeline, its prompt
 * chain and a Replay against a fresh environment (EpisodePanel); closing it gives focus back to
 * its row's Open button. `#/episodes?run=ID&step=N&episode=K` opens an episode and follows
 * the selection (episode-selection.ts). The run's episodes export as JSONL.
 */
import { useMutation, useQuery } from '@tanstack/react-query';
import { useRef } from 'react';
import { EpisodeList } from './EpisodeList';
import { EpisodePanel } from './EpisodePanel';
import { useEpisodeSelection } from './episode-selection';
import { RunStepHeading, ViewTitle } from '../shared/ViewedRun';
import { ImportNotice } from '../shared/ImportNotice';
import { importedOf } from '../shared/runs-table';
import { episodesAtQuery, exportEpisodes } from '../queries/episodes';
import { presetsQuery } from '../queries/experiments';
import { episodePresetsText } from './episode-presets';
import { downloadText } from '../state/download';

function StepControls({
  steps,
  step,
  setStep,
}: {
  steps: number[];
  step: number | null;
  setStep: (s: number) => void;
}) {
  const index = step === null ? -1 : steps.indexOf(step);
  return (
    <div className="controls" role="group" aria-label="Step">
      <button type="button" onClick={() => setStep(steps[index - 1])} disabled={index <= 0}>
        Previous step
      </button>
      <label>
        Step{' '}
        <select value={step ?? ''} onChange={(e) => setStep(Number(e.target.value))}>
          {step !== null && index < 0 && <option value={step}>{step} (not journaled)</option>}
          {steps.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <button type="button" onClick={() => setStep(steps[index + 1])} disabled={index < 0 || index >= steps.length - 1}>
        Next step
      </button>
      <button type="button" onClick={() => setStep(steps.at(-1)!)}>
        Latest
      </button>
    </div>
  );
}

function ExportEpisodes({ runId }: { runId: string }) {
  const exported = useMutation({
    mutationFn: exportEpisodes,
    onSuccess: (text, id) => downloadText(`${id}-episodes.jsonl`, text, 'application/x-ndjson'),
  });
  return (
    <div className="controls">
      <button
        type="button"
        data-testid="export-episodes"
        aria-busy={exported.isPending}
        disabled={exported.isPending}
        onClick={() => exported.mutate(runId)}
      >
        {exported.isPending ? 'Exporting episodes…' : 'Export episodes (JSONL)'}
      </button>
      {exported.isError && (
        <p role="alert" className="bad">
          Could not export the episodes ({exported.error.name}): {exported.error.message}
        </p>
      )}
    </div>
  );
}

export function EpisodesView() {
  const { shown, runId, steps, step, episode, setStep, setEpisode } = useEpisodeSelection();
  const episodes = useQuery({ ...episodesAtQuery(runId ?? '', step ?? 0), enabled: Boolean(runId) && step !== null });
  const presets = useQuery(presetsQuery());
  const list = useRef<HTMLDivElement>(null);
  const closeEpisode = (index: number) => {
    const row = list.current?.querySelector<HTMLElement>(`[data-episode="${index}"]`);
    setEpisode(null);
    (row ?? list.current?.querySelector<HTMLElement>('.episodes-scroll'))?.focus();
  };
  const title = <ViewTitle id="episodes-title" title="Episode replay" shown={shown} />;
  const run = shown.runs.find((r) => r.runId === runId);
  const imported = run ? importedOf(run) !== null : false;
  if (!runId) {
    return (
      <section aria-labelledby="episodes-title" data-testid="episodes-view">
        {title}
        <p data-testid="episodes-no-run">
          No run yet: start a {episodePresetsText(presets.data, 'or')} run in Experiments, or pick a stored run.
        </p>
      </section>
    );
  }
  const available = steps.data ?? [];
  const journaled = step !== null && available.includes(step);
  return (
    <section aria-labelledby="episodes-title" data-testid="episodes-view">
      {title}
      <RunStepHeading shown={shown} step={step} />
      <ImportNotice shown={shown} view="Replay" />
      {steps.isPending ? (
        <p role="status">Looking for journaled episodes…</p>
      ) : steps.isError ? (
        <p role="alert" className="bad">
          Could not read the run's episode steps ({steps.error.name}): {steps.error.message}
        </p>
      ) : available.length === 0 ? (
        <p data-testid="episodes-empty">
          This run has no multi-turn episodes: only {episodePresetsText(presets.data, 'and')} runs journal episodes (or
          no step has finished yet).
        </p>
      ) : (
        <>
          <StepControls steps={available} step={step} setStep={setStep} />
          <ExportEpisodes key={runId} runId={runId} />
        </>
      )}
      {step !== null && episodes.isError && (
        <p role="alert" className="bad">
          Could not read the episodes of step {step} ({episodes.error.name}): {episodes.error.message}
        </p>
      )}
      {step !== null && steps.data && (!journaled || episodes.data === null) && (
        <p data-testid="step-not-journaled">Step {step} is not journaled: it has no episodes to replay.</p>
      )}
      {step !== null && ((journaled && episodes.data) || episode !== null) && (
        <div className="episodes-layout" data-testid="episodes-layout">
          <div className="episodes-list-column" ref={list}>
            {journaled && episodes.data && (
              <EpisodeList
                key={`${runId}/${step}`}
                step={step}
                episodes={episodes.data}
                open={episode}
                onOpen={setEpisode}
                imported={imported}
              />
            )}
          </div>
          <div className="episodes-detail-column">
            {episode !== null ? (
              <EpisodePanel
                key={`${runId}/${step}/${episode}`}
                runId={runId}
                step={step}
                index={episode}
                onClose={() => closeEpisode(episode)}
                imported={imported}
              />
            ) : (
              <p className="muted episodes-detail-empty" data-testid="episode-detail-empty">
                Open an episode to see its turns, prompt chain and replay here.
              </p>
            )}
          </div>
        </div>
      )}
    </section>
  );
}
