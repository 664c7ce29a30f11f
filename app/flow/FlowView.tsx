/**
 * Flow: the sample cloud of a Flow-GRPO run (flowgrpo-2d) at any committed step, over the run's
 * reward field with the target outlined (FlowPlot), and how it moves over training: a step
 * select and slider, "Play" through the steps (one every 300 ms) and a faint trail of the
 * previous five steps. The run is picked as in Groups and Batch (shared, default the live run);
 * until a step is picked (or played) the view follows the run's latest step. Other runs keep no clouds.
 */
import { FollowLatest, StepSelect } from '../shared/StepSelect';
import { useFollowedStep, useGrowingList, useStepData } from '../shared/use-follow-step';
import { useQueries, useQuery, type UseQueryResult } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import type { FlowCloud } from '../../worker/protocol';
import { FlowPlot } from './FlowPlot';
import { trailSteps } from './flow-plot';
import { RunStepHeading, ViewTitle, useShownRun } from '../shared/ViewedRun';
import { flowAtQuery, flowFieldQuery, flowStepsQuery } from '../queries/flow';
import { useRunStore } from '../state/live-run';
import { usePreset } from '../shared/use-preset';

/** One frame of "Play" (ms). */
const FRAME_MS = 300;
/** Steps the trail shows before the one on screen. */
const TRAIL = 5;
/** Cells per side of the reward field's grid. */
const FIELD_SIZE = 128;

/** The loaded clouds of the trail, oldest first (stable while none of the queries changes). */
const loadedClouds = (rs: UseQueryResult<FlowCloud | null>[]) => rs.flatMap((r) => (r.data ? [r.data] : []));

export function FlowView() {
  const shown = useShownRun();
  const { runId } = shown;
  const liveOptions = useRunStore((s) => s.options);
  const preset =
    shown.live && liveOptions ? liveOptions.preset : shown.runs.find((r) => r.runId === runId)?.options.preset;
  const offersFlow = usePreset(preset)?.views.includes('Flow') ?? false;
  const isFlow = Boolean(runId) && offersFlow;
  const steps = useGrowingList({ ...flowStepsQuery(runId ?? '', shown.latestStep), enabled: isFlow });
  const available = steps.data ?? [];
  const followed = useFollowedStep(runId, available);
  const [playing, setPlaying] = useState(false);
  const [showTrail, setShowTrail] = useState(true);
  const setStep = (s: number | undefined) => {
    if (s !== undefined) followed.pin(s);
  };

  const field = useQuery({ ...flowFieldQuery(runId ?? '', FIELD_SIZE), enabled: isFlow });
  // While the next step loads (a live run's, or Play's next frame), the previous cloud of the same run stays on screen.
  const cloud = useStepData(
    { ...flowAtQuery(runId ?? '', followed.step ?? 0), enabled: isFlow && followed.step !== null },
    followed.following,
  );
  const step = cloud?.step ?? followed.step;
  const index = step === null ? -1 : available.indexOf(step);
  const trail = useQueries({
    queries: (showTrail ? trailSteps(available, step, TRAIL) : []).map((s) => ({
      ...flowAtQuery(runId ?? '', s),
      enabled: isFlow,
    })),
    combine: loadedClouds,
  });

  // Play: one step per frame; at the last step it stops.
  useEffect(() => {
    if (!playing || !runId) return;
    const t = setTimeout(() => {
      if (index < 0 || index >= available.length - 1) setPlaying(false);
      else followed.pin(available[index + 1]);
    }, FRAME_MS);
    return () => clearTimeout(t);
  }, [playing, runId, index, available, followed]);
  const play = () => {
    if (playing) return setPlaying(false);
    if (index >= available.length - 1) setStep(available[0]); // from the end, play from the start
    setPlaying(true);
  };

  const title = <ViewTitle id="flow-title" title="Flow" shown={shown} />;
  if (!runId) {
    return (
      <section aria-labelledby="flow-title" data-testid="flow-view">
        {title}
        <p>No run yet: start a flowgrpo-2d run in Experiments, or pick a stored run.</p>
      </section>
    );
  }
  const shownCloud = cloud?.data ?? null;
  return (
    <section aria-labelledby="flow-title" data-testid="flow-view">
      {title}
      <RunStepHeading shown={shown} step={isFlow ? step : null} />
      {preset !== undefined && !isFlow ? (
        <p>This run keeps no sample clouds (only flowgrpo-2d runs have them).</p>
      ) : !available.length ? (
        <p>{steps.isPending ? 'Loading the run’s steps…' : 'No step of this run has finished yet.'}</p>
      ) : (
        <>
          <div className="controls flow-controls" role="group" aria-label="Step">
            <button type="button" onClick={play} aria-pressed={playing}>
              {playing ? 'Pause' : 'Play'}
            </button>
            <StepSelect steps={available} value={step} onChange={setStep} />
            <label>
              <span className="visually-hidden">Step</span>
              <input
                type="range"
                min={0}
                max={available.length - 1}
                value={Math.max(0, index)}
                aria-valuetext={`step ${step} of ${available.at(-1)}`}
                onChange={(e) => setStep(available[Number(e.target.value)])}
              />
            </label>
            <FollowLatest following={followed.following} onChange={(f) => (f ? followed.follow() : setStep(step!))} />
            <label>
              <input type="checkbox" checked={showTrail} onChange={(e) => setShowTrail(e.target.checked)} /> Trail of
              the previous {TRAIL} steps
            </label>
          </div>
          {cloud?.data === null && <p>Step {step} has no stored sample cloud.</p>}
          {field.data === null && <p>The worker has no reward field for this run.</p>}
          {shownCloud && field.data && (
            <FlowPlot cloud={shownCloud} field={field.data} trail={showTrail ? trail : []} />
          )}
        </>
      )}
    </section>
  );
}
