/**
 * Worker reads and actions of the Replay view (episodes/EpisodesView.tsx): the steps with journaled
 * episodes, a step's episodes, one episode with its turns; replaying an episode against a fresh
 * environment and exporting a run's episodes are actions (mutations), not reads.
 */
import { queryOptions } from '@tanstack/react-query';
import { workbench } from '../worker-client';
import { keys } from './keys';

export const episodeStepsQuery = (runId: string, latestStep: number) =>
  queryOptions({ queryKey: keys.episodeSteps(runId, latestStep), queryFn: () => workbench.episodeSteps(runId) });

/** A step's episodes, or null when the step journaled none. */
export const episodesAtQuery = (runId: string, step: number) =>
  queryOptions({
    queryKey: keys.episodesAt(runId, step),
    queryFn: () => workbench.episodesAt(runId, step),
    staleTime: Infinity,
  });

/** One episode with its turns and vocabulary, or null when it is not journaled. */
export const episodeAtQuery = (runId: string, step: number, index: number) =>
  queryOptions({
    queryKey: keys.episodeAt(runId, step, index),
    queryFn: () => workbench.episodeAt(runId, step, index),
    staleTime: Infinity,
  });

export const replayEpisode = ({ runId, step, index }: { runId: string; step: number; index: number }) =>
  workbench.replayEpisode(runId, step, index);

export const exportEpisodes = (runId: string) => workbench.exportEpisodes(runId);
