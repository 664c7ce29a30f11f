/** Worker reads and actions of the Experiments view. */
import { queryOptions } from '@tanstack/react-query';
import { proxy } from 'comlink';
import type { RunEvent, RunOptions, RunSummary } from '../../worker/protocol';
import { useRunStore } from '../state/run-store';
import { workbench } from '../worker-client';
import { keys } from './keys';

export const runsQuery = () => queryOptions({ queryKey: keys.runs(), queryFn: () => workbench.listRuns() });
export const storageQuery = () => queryOptions({ queryKey: keys.storage(), queryFn: () => workbench.storage(), staleTime: Infinity });

/** Loads a stored run's metrics and evaluations into the live view. */
export async function openStoredRun(run: RunSummary): Promise<void> {
  const h = await workbench.runHistory(run.runId);
  useRunStore.getState().load(run.runId, run.status, run.options.steps, h.steps, h.evaluations.map((e) => ({ ...e, samples: [] })), run.message);
}

export const presetsQuery = () => queryOptions({ queryKey: keys.presets(), queryFn: () => workbench.presets(), staleTime: Infinity });

export async function startRun(options: RunOptions): Promise<void> {
  const { receive, begin } = useRunStore.getState();
  // Events can arrive before startRun resolves: buffer them until the id is known.
  const early: RunEvent[] = [];
  let started = false;
  const runId = await workbench.startRun(
    options,
    proxy((e: RunEvent) => (started ? receive(e) : early.push(e))),
  );
  begin(runId, options.steps);
  started = true;
  for (const e of early) receive(e);
}

export const pauseRun = (id: string) => workbench.pauseRun(id);
export const resumeRun = (id: string) => workbench.resumeRun(id);
export const stopRun = (id: string) => workbench.stopRun(id);
export const latestCheckpoint = () => workbench.latestCheckpoint();
