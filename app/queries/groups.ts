/** Worker reads of the Groups and Batch views and their session inspector. */
import { queryOptions } from '@tanstack/react-query';
import { workbench } from '../worker-client';
import { keys } from './keys';

export const groupStepsQuery = (runId: string, latestStep: number) =>
  queryOptions({ queryKey: keys.groupSteps(runId, latestStep), queryFn: () => workbench.groupSteps(runId) });

export const groupsAtQuery = (runId: string, step: number) =>
  queryOptions({
    queryKey: keys.groupsAt(runId, step),
    queryFn: () => workbench.groupsAt(runId, step),
    staleTime: Infinity,
  });

export const batchAtQuery = (runId: string, step: number) =>
  queryOptions({
    queryKey: keys.batchAt(runId, step),
    queryFn: () => workbench.batchAt(runId, step),
    staleTime: Infinity,
  });

/** Every session of a step, with each call's ids and log-probs (null when the step keeps none). */
export const sessionsAtQuery = (runId: string, step: number) =>
  queryOptions({
    queryKey: keys.sessionsAt(runId, step),
    queryFn: () => workbench.sessionsAt(runId, step),
    staleTime: Infinity,
  });

/** The text of each id under the run's tokenizer (the app has none of its own). */
export const tokenTextsQuery = (runId: string, ids: Int32Array) =>
  queryOptions({
    queryKey: keys.tokenTexts(runId, Array.from(ids)),
    queryFn: () => workbench.tokenTexts(runId, ids),
    staleTime: Infinity,
  });
