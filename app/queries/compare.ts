/** Worker reads of the Compare view beyond the runs' histories (queries/experiments.ts `runHistoryQuery`). */
import { queryOptions } from '@tanstack/react-query';
import { workbench } from '../worker-client';
import { keys } from './keys';

/** A stored run's sample rewards and lengths per kept step, for the histograms over steps; refreshes with the last step. */
export const stepDistributionsQuery = (runId: string, lastStep: number) =>
  queryOptions({
    queryKey: keys.stepDistributions(runId, lastStep),
    queryFn: () => workbench.stepDistributions(runId),
  });
