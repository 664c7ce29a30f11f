/**
 * The hooks of a view that browses a run's stored steps while the run goes (Groups, Batch, Flow):
 * the step it follows or the one pinned, the run's list of steps, and one step's data, each
 * keeping the newest answer on screen while the next loads (follow-step.ts says why). They take a
 * view's `queryOptions` as they are; nothing here names a view or a worker read.
 */
import { useQuery, useQueryClient, type QueryKey, type UseQueryOptions } from '@tanstack/react-query';
import { useState } from 'react';
import { followedStep, newestCached, type Pin } from './follow-step';

/** TanStack's placeholder function for a query of `T` (the answer type it names is not exported). */
type PlaceholderFn<T, TKey extends QueryKey> = Extract<
  NonNullable<UseQueryOptions<T, Error, unknown, TKey>['placeholderData']>,
  (...args: never[]) => unknown
>;

interface FollowedStep {
  /** The step the view asks for: the pinned one, else the latest of `available`. */
  step: number | null;
  /** No step of this run is pinned: the view moves on with the run. */
  following: boolean;
  /** Pins `step` (of `runId`, by default the run on screen). */
  pin: (step: number, runId?: string) => void;
  /** Follows the latest step again. */
  follow: () => void;
}

export function useFollowedStep(runId: string | null, available: readonly number[]): FollowedStep {
  const [pinned, setPinned] = useState<Pin | null>(null);
  return {
    step: followedStep(available, pinned, runId),
    following: !(pinned && pinned.runId === runId),
    pin: (step, run = runId ?? undefined) => {
      if (run) setPinned({ runId: run, step });
    },
    follow: () => setPinned(null),
  };
}

/**
 * A run's list that grows with it, keyed by the latest step as the key's last element (so it is
 * read again as the run goes): while the latest key loads, the newest list already read for the
 * run is the placeholder (the view keeps its step controls).
 */
export function useGrowingList<TQueryFnData, TData, TKey extends QueryKey>(
  options: UseQueryOptions<TQueryFnData, Error, TData, TKey>,
) {
  const client = useQueryClient();
  const key = options.queryKey;
  // The cast only restates TanStack's guard that the data is not a function (a generic it cannot see through).
  const placeholderData = (() =>
    newestCached(client.getQueriesData<TQueryFnData>({ queryKey: key.slice(0, -1) }), key.length, key.at(-1) as number)
      ?.data) as unknown as PlaceholderFn<TQueryFnData, TKey>;
  return useQuery({ ...options, placeholderData });
}

/**
 * One step's data (the key's last element is the step), with the step it belongs to. While it
 * loads, a following view keeps the newest step of the run already read (an answer that came
 * after the view had moved on counts too); a pinned one the data it showed last of the same run
 * (Flow's Play keeps the previous frame). Null when there is none, or while `enabled` is false.
 */
export function useStepData<T, TKey extends QueryKey>(
  options: UseQueryOptions<T, Error, T, TKey>,
  following: boolean,
): { step: number; data: T } | null {
  const client = useQueryClient();
  const query = useQuery(options);
  const key = options.queryKey;
  const step = key.at(-1) as number;
  const runId = key[1];
  const [last, setLast] = useState<{ runId: unknown; step: number; data: T } | null>(null);
  const exact = options.enabled === false ? undefined : query.data;
  // The data shown last, kept in state as React's docs adjust state to a changed input during render.
  if (exact !== undefined && (last?.data !== exact || last.step !== step || last.runId !== runId))
    setLast({ runId, step, data: exact });
  if (options.enabled === false) return null;
  if (exact !== undefined) return { step, data: exact };
  const newest = following
    ? newestCached(client.getQueriesData<T>({ queryKey: key.slice(0, -1) }), key.length, step)
    : null;
  return newest ?? (last && last.runId === runId ? { step: last.step, data: last.data } : null);
}
