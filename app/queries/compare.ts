/** Worker reads of the Compare view beyond the runs' histories (queries/experiments.ts `runHistoryQuery`). */
import { queryOptions } from '@tanstack/react-query';
import type { WorkbenchApi } from '../../worker/protocol';
import { workbench } from '../worker-client';
import { keys } from './keys';

/** A stored run's sample rewards and lengths per kept step, for the histograms over steps; refreshes with the last step. */
export const stepDistributionsQuery = (runId: string, lastStep: number) =>
  queryOptions({
    queryKey: keys.stepDistributions(runId, lastStep),
    queryFn: () => workbench.stepDistributions(runId),
  });

type LabPlanAnswer = Awaited<ReturnType<WorkbenchApi['mismatchLabPlan']>>;

/** The mismatch lab's plan (worker/presets/mismatch-lab.ts) for an injection, or why not. */
export const mismatchLabPlanQuery = (inject: string, steps: number, seed: number) =>
  queryOptions({
    queryKey: keys.mismatchLabPlan(inject, steps, seed),
    queryFn: async (): Promise<LabPlanAnswer> => workbench.mismatchLabPlan({ inject, steps, seed }),
  });
