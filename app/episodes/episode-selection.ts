/**
 * Which run, step and episode the Replay view shows, and its deep link. The run is the shared
 * pick of Groups and Batch (`useShownRun`); the step and episode are this view's. A link
 * `#/episodes?run=ID&step=N&episode=K` (read at mount and on every hashchange) first makes its run
 * the shown one, then opens its step and episode; afterwards the hash follows what is on screen
 * through `history.replaceState`, which adds no history entry and fires no hashchange, so App's
 * router (which matches the part before `?`) is left alone. Not a router.
 */
import { useQuery } from '@tanstack/react-query';
import { useCallback, useEffect, useState } from 'react';
import { episodeStepsQuery } from '../queries/episodes';
import { useViewedRun } from '../state/viewed-run';
import { EPISODES_ROUTE, formatEpisodeLink, parseEpisodeLink, type EpisodeLink } from '../shared/episodes';
import { useShownRun } from '../shared/ViewedRun';

interface Chosen {
  runId: string;
  step: number;
  episode: number | null;
}

/** The link in the address bar, when it names a run. */
function linkInHash(): EpisodeLink | null {
  const link = parseEpisodeLink(window.location.hash);
  return link.run ? link : null;
}

const onEpisodesRoute = () => window.location.hash.replace(/^#\/?/, '').split('?')[0] === EPISODES_ROUTE;

export function useEpisodeSelection() {
  const shown = useShownRun();
  const { runId, liveRunId } = shown;
  const view = useViewedRun((s) => s.view);
  const steps = useQuery({ ...episodeStepsQuery(runId ?? '', shown.latestStep), enabled: Boolean(runId) });
  const [chosen, setChosen] = useState<Chosen | null>(null);
  // A link not applied yet: while it is, nothing picks a default step or rewrites the hash.
  const [pending, setPending] = useState<EpisodeLink | null>(linkInHash);
  // Bumped on every hashchange, so that a bare `#/episodes` gets the shown selection written back.
  const [hashTick, setHashTick] = useState(0);

  useEffect(() => {
    const onHash = () => {
      setPending(linkInHash());
      setHashTick((n) => n + 1);
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  useEffect(() => {
    if (!pending?.run) return;
    const run = pending.run;
    if (run !== runId) {
      view(run === liveRunId ? null : run);
      return;
    }
    setChosen(pending.step === null ? null : { runId: run, step: pending.step, episode: pending.episode });
    setPending(null);
  }, [pending, runId, liveRunId, view]);

  // Each run opens at its latest journaled step; a pick holds while it is the run on screen.
  useEffect(() => {
    if (!pending && runId && chosen?.runId !== runId && steps.data?.length)
      setChosen({ runId, step: steps.data.at(-1)!, episode: null });
  }, [pending, runId, steps.data, chosen]);

  const mine = chosen && chosen.runId === runId ? chosen : null;
  const step = mine?.step ?? null;
  const episode = mine?.episode ?? null;

  useEffect(() => {
    if (pending || !onEpisodesRoute()) return;
    const next = formatEpisodeLink({ run: runId, step, episode });
    if (window.location.hash !== next) window.history.replaceState(window.history.state, '', next);
  }, [pending, runId, step, episode, hashTick]);

  const setStep = useCallback(
    (s: number) => {
      if (runId) setChosen({ runId, step: s, episode: null });
    },
    [runId],
  );
  const setEpisode = useCallback(
    (index: number | null) => {
      if (runId && step !== null) setChosen({ runId, step, episode: index });
    },
    [runId, step],
  );
  return { shown, runId, steps, step, episode, setStep, setEpisode };
}
