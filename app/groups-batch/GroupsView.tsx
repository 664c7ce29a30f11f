/**
 * Groups: for any stored step of a GRPO run, every advantage group side by side: prompt, ground
 * truth, the baseline and std the estimator used with its settings, and the G completions with
 * reward, components, advantage, status and length (GroupTable). A DPO run's steps show their
 * preference pairs instead: margin, ranked correctly, per-pair loss, chosen and rejected with
 * their implicit rewards (PairTable). The run is picked (shared with Batch, default the live
 * run), steps browsed (a live run's latest stored step is followed until one is picked or a completion
 * inspected), groups or pairs sorted; each completion opens the session inspector
 * (SessionPanel) below its group, closed by its Close button or Escape. A run with journaled multi-turn episodes links to the step's
 * episodes in the Replay view.
 */
import { FollowLatest, StepSelect } from '../shared/StepSelect';
import { useFollowedStep, useGrowingList, useStepData } from '../shared/use-follow-step';
import { Fragment, useEffect, useMemo, useRef, useState } from 'react';
import type { GroupRecord } from '../../worker/protocol';
import { GroupTable } from './GroupTable';
import { PairLegend, PairTable } from './PairTable';
import { SessionPanel } from './SessionPanel';
import { RunStepHeading, ViewTitle, useShownRun } from '../shared/ViewedRun';
import { ImportNotice } from '../shared/ImportNotice';
import { importedOf } from '../shared/runs-table';
import { noSessionsText } from './import-display';
import { formatEpisodeLink, parseEpisodeLink } from '../shared/episodes';
import { useRunStore } from '../state/live-run';
import { useViewedRun } from '../state/viewed-run';
import { episodeStepsQuery } from '../queries/episodes';
import { groupStepsQuery, groupsAtQuery } from '../queries/groups';

type Sort = { label: string; compare: (a: GroupRecord, b: GroupRecord) => number };
const inOrder: Sort = { label: 'batch order', compare: () => 0 };
const spread = (g: GroupRecord) => g.estimate?.std ?? g.rewardStd;

const GROUP_SORTS: Record<string, Sort> = {
  order: inOrder,
  'reward-desc': { label: 'mean reward, high first', compare: (a, b) => b.rewardMean - a.rewardMean },
  'reward-asc': { label: 'mean reward, low first', compare: (a, b) => a.rewardMean - b.rewardMean },
  'std-desc': { label: 'reward std, high first', compare: (a, b) => spread(b) - spread(a) },
};
const margin = (g: GroupRecord) => g.pair?.margin ?? 0;
const loss = (g: GroupRecord) => g.pair?.loss ?? 0;
const PAIR_SORTS: Record<string, Sort> = {
  order: inOrder,
  'margin-desc': { label: 'margin, high first', compare: (a, b) => margin(b) - margin(a) },
  'margin-asc': { label: 'margin, low first', compare: (a, b) => margin(a) - margin(b) },
  'loss-desc': { label: 'loss, high first', compare: (a, b) => loss(b) - loss(a) },
  'loss-asc': { label: 'loss, low first', compare: (a, b) => loss(a) - loss(b) },
};

/** The completion whose inspector is open. */
interface Inspected {
  group: string;
  sample: number;
}

export function GroupsView() {
  const shown = useShownRun();
  const { runId } = shown;
  const steps = useGrowingList({ ...groupStepsQuery(runId ?? '', shown.latestStep), enabled: Boolean(runId) });
  const available = useMemo(() => steps.data ?? [], [steps.data]);
  const followed = useFollowedStep(runId, available);
  const [sort, setSort] = useState('order');
  const [inspected, setInspected] = useState<Inspected | null>(null);
  // The Inspect button that opened the inspector: focus goes back to it when the inspector closes.
  const opener = useRef<HTMLElement | null>(null);
  // A link to a run's step (`#/groups?run=…&step=…`, e.g. from run health) opens that run at that step.
  const { pin } = followed;
  useEffect(() => {
    const open = () => {
      if (!window.location.hash.startsWith('#/groups?')) return;
      const { run, step: linked } = parseEpisodeLink(window.location.hash);
      if (run === null || linked === null) return;
      useViewedRun.getState().view(run === useRunStore.getState().runId ? null : run);
      pin(linked, run);
    };
    open();
    window.addEventListener('hashchange', open);
    return () => window.removeEventListener('hashchange', open);
    // Once: the listener reads the hash when it changes; `pin` only sets state.
  }, []);
  // While the followed step loads, the newest one read stays on screen: `step` is the step shown.
  const shownGroups = useStepData(
    { ...groupsAtQuery(runId ?? '', followed.step ?? 0), enabled: Boolean(runId) && followed.step !== null },
    followed.following,
  );
  const step = shownGroups?.step ?? followed.step;
  const setStep = (s: number) => pin(s);
  const groups = { data: shownGroups?.data };
  useEffect(() => setInspected(null), [runId, step]);
  const episodeSteps = useGrowingList({
    ...episodeStepsQuery(runId ?? '', shown.latestStep),
    enabled: Boolean(runId),
  });
  const pairs = groups.data?.[0]?.kind === 'dpo-pair';
  const sorts = pairs ? PAIR_SORTS : GROUP_SORTS;
  const order = sorts[sort] ?? inOrder;
  const sorted = useMemo(() => (groups.data ? [...groups.data].sort(order.compare) : []), [groups.data, order]);

  const title = <ViewTitle id="groups-title" title="Groups" shown={shown} />;
  const run = shown.runs.find((r) => r.runId === runId);
  const noSessions = noSessionsText(run ? importedOf(run) : null);
  if (!runId) {
    return (
      <section aria-labelledby="groups-title" data-testid="groups-view">
        {title}
        <p>No run yet: start a GRPO or DPO run in Experiments, or pick a stored run.</p>
      </section>
    );
  }
  const index = step === null ? -1 : available.indexOf(step);
  const noun = pairs ? 'pairs' : 'groups';
  return (
    <section aria-labelledby="groups-title" data-testid="groups-view">
      {title}
      <RunStepHeading shown={shown} step={step} />
      <ImportNotice shown={shown} view="Groups" />
      {Boolean(episodeSteps.data?.length) && (
        <p>
          {step !== null && episodeSteps.data!.includes(step) ? (
            <a href={formatEpisodeLink({ run: runId, step })} data-testid="groups-episodes-link">
              Open this step's episodes in Replay
            </a>
          ) : (
            <a href={formatEpisodeLink({ run: runId })} data-testid="groups-episodes-link">
              Open this run's episodes in Replay
            </a>
          )}
        </p>
      )}
      {available.length === 0 ? (
        <p>
          This run keeps no advantage groups or preference pairs (GRPO and DPO runs have them), or no step has finished
          yet.
        </p>
      ) : (
        <>
          <div className="controls" role="group" aria-label="Step">
            <button type="button" onClick={() => setStep(available[index - 1])} disabled={index <= 0}>
              Previous step
            </button>
            <StepSelect steps={available} value={step} onChange={setStep} />
            <button
              type="button"
              onClick={() => setStep(available[index + 1])}
              disabled={index < 0 || index >= available.length - 1}
            >
              Next step
            </button>
            <FollowLatest following={followed.following} onChange={(f) => (f ? followed.follow() : setStep(step!))} />
            <label>
              Sort {noun} by{' '}
              <select value={sorts[sort] ? sort : 'order'} onChange={(e) => setSort(e.target.value)}>
                {Object.entries(sorts).map(([k, v]) => (
                  <option key={k} value={k}>
                    {v.label}
                  </option>
                ))}
              </select>
            </label>
          </div>
          {groups.data &&
            (pairs ? (
              <>
                <p>
                  Step {step}: {groups.data.length} preference pairs,{' '}
                  {groups.data.filter((g) => g.pair?.rankedCorrectly).length} ranked correctly (chosen: a correct
                  completion of the base model, rejected: an incorrect one); implicit rewards, margins and losses before
                  the step's update.
                </p>
                <PairLegend />
              </>
            ) : (
              <p>
                Step {step}: {groups.data.length} groups, {groups.data.filter((g) => g.zeroStd).length} with zero
                variance.
              </p>
            ))}
          {sorted.map((g) => {
            const open = inspected?.group === g.group ? inspected.sample : null;
            const onInspect = (sample: number | null, by: HTMLElement) => {
              opener.current = by;
              // An open inspector holds its step: the view stops following a live run.
              if (sample !== null && followed.following && step !== null) setStep(step);
              setInspected(sample === null ? null : { group: g.group, sample });
            };
            return (
              <Fragment key={g.group}>
                {g.kind === 'dpo-pair' ? (
                  <PairTable g={g} index={groups.data!.indexOf(g) + 1} open={open} onInspect={onInspect} />
                ) : (
                  <GroupTable g={g} open={open} onInspect={onInspect} noSessions={noSessions} />
                )}
                {open !== null && step !== null && (
                  <SessionPanel
                    runId={runId}
                    step={step}
                    at={{ group: g.group, sample: open }}
                    kind={g.kind}
                    onClose={() => setInspected(null)}
                    returnFocusTo={() => opener.current}
                  />
                )}
              </Fragment>
            );
          })}
        </>
      )}
    </section>
  );
}
