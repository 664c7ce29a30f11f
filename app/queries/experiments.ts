/** Worker reads and actions of the Experiments view. */
import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { proxy } from 'comlink';
import type { RunEvent, RunOptions, RunSummary } from '../../worker/protocol';
import { useRunStore } from '../state/live-run';
import { workbench } from '../worker-client';
import { keys } from './keys';

export const runsQuery = () => queryOptions({ queryKey: keys.runs(), queryFn: () => workbench.listRuns() });
export const storageQuery = () =>
  queryOptions({ queryKey: keys.storage(), queryFn: () => workbench.storage(), staleTime: Infinity });

/** Loads a stored run's metrics and evaluations into the live view. */
export async function openStoredRun(run: RunSummary): Promise<void> {
  const h = await workbench.runHistory(run.runId);
  const { load } = useRunStore.getState();
  load(
    run.runId,
    run.options,
    run.status,
    h.steps,
    h.evaluations.map((e) => ({ ...e, samples: [] })),
    run.message,
  );
  // Its checkpoint can be downloaded as the live run's can (its size is known once prepared).
  if (run.checkpointStep !== undefined) useRunStore.setState({ checkpoint: { step: run.checkpointStep } });
}

/** Run health's flags over a run's stored steps (worker/runs/health.ts), refreshed as steps arrive. */
export const runHealthQuery = (runId: string, lastStep: number) =>
  queryOptions({
    queryKey: keys.runHealth(runId, lastStep),
    queryFn: () => workbench.runHealth(runId),
    placeholderData: keepPreviousData,
  });

/** The reward-hacking audit of a run's stored steps (worker/runs/audit.ts), read when a person asks at `atStep`. */
export const rewardAuditQuery = (runId: string, atStep: number) =>
  queryOptions({ queryKey: keys.rewardAudit(runId, atStep), queryFn: () => workbench.rewardAudit(runId) });

export const presetsQuery = () =>
  queryOptions({ queryKey: keys.presets(), queryFn: () => workbench.presets(), staleTime: Infinity });

/** The worker's problems with these options (empty: valid); the previous answer stays while the next is checked. */
export const optionProblemsQuery = (options: RunOptions | null) =>
  queryOptions({
    queryKey: keys.optionProblems(options),
    queryFn: () => workbench.checkRunOptions(options!),
    enabled: options !== null,
    staleTime: Infinity,
    placeholderData: keepPreviousData,
  });

/** A config JSON read onto its preset's defaults and checked by the worker (the form's "Import config JSON"). */
export const completeConfig = (config: unknown) => workbench.completeRunOptions(config);

/** Starts a run and makes it the live one; resolves to its id. */
export async function startRun(options: RunOptions): Promise<string> {
  const { receive, begin } = useRunStore.getState();
  // Events can arrive before startRun resolves: buffer them until the id is known.
  const early: RunEvent[] = [];
  let started = false;
  const runId = await workbench.startRun(
    options,
    proxy((e: RunEvent) => (started ? receive(e) : early.push(e))),
  );
  begin(runId, options);
  started = true;
  for (const e of early) receive(e);
  return runId;
}

/**
 * Continues a stored run from its last checkpoint and makes it the live run: its history up to that
 * checkpoint (later steps are computed again), then the events as they come. Resolves to the
 * worker's reason when it refuses.
 */
export async function continueRun(run: RunSummary): Promise<string | null> {
  const { receive, load } = useRunStore.getState();
  const early: RunEvent[] = [];
  let loaded = false;
  const r = await workbench.continueRun(
    run.runId,
    proxy((e: RunEvent) => (loaded ? receive(e) : early.push(e))),
  );
  if (!r.ok) return r.reason;
  const h = await workbench.runHistory(run.runId);
  const upTo = <T extends { step: number }>(xs: T[]) => xs.filter((x) => x.step <= r.fromStep);
  load(
    run.runId,
    run.options,
    'running',
    upTo(h.steps),
    upTo(h.evaluations).map((e) => ({ ...e, samples: [] })),
    undefined,
    true,
  );
  loaded = true;
  for (const e of early) receive(e);
  return null;
}

/** Pause and stop act between steps: until the worker reaches them the dashboard says "pausing…" or "stopping…". */
export const pauseRun = (id: string) => {
  useRunStore.getState().request('pause');
  return workbench.pauseRun(id);
};
export const resumeRun = (id: string) => workbench.resumeRun(id);
export const stopRun = (id: string) => {
  useRunStore.getState().request('stop');
  return workbench.stopRun(id);
};
export const latestCheckpoint = (runId: string) => workbench.latestCheckpoint(runId);

/** Renames a run or edits its notes; resolves to the worker's reason when it refuses. */
export async function updateRun(runId: string, meta: { name?: string; notes?: string }): Promise<string | null> {
  const r = await workbench.updateRun(runId, meta);
  return r.ok ? null : r.reason;
}

export const deleteRun = (runId: string) => workbench.deleteRun(runId);
export const exportRunFiles = (runId: string, to: 'verl' | 'trl') => workbench.exportRunFiles(runId, to);
export const exportRunBundle = (runId: string, to: 'verl' | 'skyrl') => workbench.exportRunBundle(runId, to);

/** A stored run's per-step metrics and evaluations (the Compare view reads several). */
export const runHistoryQuery = (runId: string, lastStep: number) =>
  queryOptions({ queryKey: keys.runHistory(runId, lastStep), queryFn: () => workbench.runHistory(runId) });
