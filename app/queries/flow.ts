/**
 * Worker reads of the Flow view: the committed steps of a run (from its history), one step's
 * sample cloud, and the run's reward field. Clouds and fields never change once stored.
 */
import { queryOptions } from '@tanstack/react-query';
import { workbench } from '../worker-client';
import { keys } from './keys';

type History = Awaited<ReturnType<typeof workbench.runHistory>>;

/** The run's trained steps, ascending (step 0 is the evaluation before training: it has no cloud). */
const trainedSteps = (h: History) => h.steps.map((s) => s.step).filter((s) => s > 0);

/** Shares the run-history query (keys.runHistory) and picks its steps; refreshes with the latest step. */
export const flowStepsQuery = (runId: string, latestStep: number) =>
  queryOptions({
    queryKey: keys.runHistory(runId, latestStep),
    queryFn: () => workbench.runHistory(runId),
    select: trainedSteps,
  });

export const flowAtQuery = (runId: string, step: number) =>
  queryOptions({
    queryKey: keys.flowAt(runId, step),
    queryFn: () => workbench.flowAt(runId, step),
    staleTime: Infinity,
  });

export const flowFieldQuery = (runId: string, size: number) =>
  queryOptions({
    queryKey: keys.flowField(runId, size),
    queryFn: () => workbench.flowField(runId, size),
    staleTime: Infinity,
  });
