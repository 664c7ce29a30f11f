/** Worker reads of the Groups view. */
import { queryOptions } from '@tanstack/react-query';
import { workbench } from '../worker-client';
import { keys } from './keys';

export const groupStepsQuery = (runId: string, latestStep: number) =>
  queryOptions({ queryKey: keys.groupSteps(runId, latestStep), queryFn: () => workbench.groupSteps(runId) });

export const groupsAtQuery = (runId: string, step: number) =>
  queryOptions({ queryKey: keys.groupsAt(runId, step), queryFn: () => workbench.groupsAt(runId, step), staleTime: Infinity });

export const batchAtQuery = (runId: string, step: number) =>
  queryOptions({ queryKey: keys.batchAt(runId, step), queryFn: () => workbench.batchAt(runId, step), staleTime: Infinity });
