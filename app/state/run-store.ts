/**
 * The live run, in zustand: the events the worker sends while a run is going. Only UI and live
 * state lives here; stored runs are read through react-query.
 */
import { create } from 'zustand';
import type { RunEvent, RunStatus } from '../../worker/protocol';

export interface StepPoint {
  step: number;
  metrics: Record<string, number>;
}

export interface EvalPoint {
  step: number;
  accuracy: number;
  meanLength: number;
  n: number;
  samples: Extract<RunEvent, { type: 'eval' }>['samples'];
}

interface RunState {
  runId: string | null;
  status: RunStatus | 'idle';
  message: string | null;
  totalSteps: number;
  steps: StepPoint[];
  evals: EvalPoint[];
  /** The latest checkpoint the run exported (the files stay in the worker until downloaded). */
  checkpoint: { step: number; bytes: number } | null;
  begin: (runId: string, totalSteps: number) => void;
  /** Shows a stored run (after a reload) as the current one. */
  load: (runId: string, status: RunStatus, totalSteps: number, steps: StepPoint[], evals: EvalPoint[], message?: string) => void;
  receive: (e: RunEvent) => void;
}

export const useRunStore = create<RunState>((set, get) => ({
  runId: null,
  status: 'idle',
  message: null,
  totalSteps: 0,
  steps: [],
  evals: [],
  checkpoint: null,
  begin: (runId, totalSteps) => set({ runId, totalSteps, status: 'running', message: null, steps: [], evals: [], checkpoint: null }),
  load: (runId, status, totalSteps, steps, evals, message) => set({ runId, status, totalSteps, steps, evals, message: message ?? null, checkpoint: null }),
  receive: (e) => {
    if (get().runId !== null && e.runId !== get().runId) return; // an event of a replaced run
    if (e.type === 'status') set({ status: e.status, message: e.message ? `${e.errorName ? `${e.errorName}: ` : ''}${e.message}` : null });
    else if (e.type === 'step') set((s) => ({ steps: [...s.steps, { step: e.step, metrics: e.metrics }], totalSteps: e.totalSteps }));
    else if (e.type === 'checkpoint') set({ checkpoint: { step: e.step, bytes: e.bytes } });
    else set((s) => ({ evals: [...s.evals, { step: e.step, accuracy: e.accuracy, meanLength: e.meanLength, n: e.n, samples: e.samples }] }));
  },
}));
