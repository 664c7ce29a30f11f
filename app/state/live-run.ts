/**
 * The live run, in zustand: the events the worker sends while a run is going, and what the
 * dashboard derives from their arrival (the phase of the step under way, when each step ended,
 * a pause or stop asked for but not yet reached). Only UI and live state lives here; stored runs
 * are read through react-query.
 */
import { create } from 'zustand';
import type { ImportedRunOptions, RunEvent, RunOptions, RunStatus, StepPhase } from '../../worker/protocol';
import { useViewedRun } from './viewed-run';

export interface StepPoint {
  step: number;
  metrics: Record<string, number>;
  /**
   * When the step was committed to the store, ms since the epoch: from the live 'step' event, or
   * from `runHistory` for an opened or continued run. Absent for step 0, for steps stored before
   * times were kept and for an imported run.
   */
  t?: number;
}

export interface EvalPoint {
  step: number;
  accuracy: number;
  meanLength: number;
  n: number;
  samples: Extract<RunEvent, { type: 'eval' }>['samples'];
}

/** The phase of the step under way, as last reported, and when it was reported (ms, `Date.now()`). */
export interface PhasePoint {
  step: number;
  phase: StepPhase;
  done?: number;
  total?: number;
  unit?: string;
  at: number;
}

/** A pause of the live run: from when the worker reported it paused until it ran again (null: still paused). */
export interface Pause {
  from: number;
  until: number | null;
}

interface RunState {
  runId: string | null;
  /** The run's exact options (its preset says which curves and labels apply before any step). */
  options: RunOptions | ImportedRunOptions | null;
  status: RunStatus | 'idle';
  message: string | null;
  totalSteps: number;
  steps: StepPoint[];
  evals: EvalPoint[];
  /** The latest checkpoint the run exported (the files stay in the worker until downloaded). */
  checkpoint: { step: number; bytes?: number } | null;
  phase: PhasePoint | null;
  /** When the run started (or was continued) in this tab, and when each step since then ended (ms). */
  startedAt: number | null;
  stepEnds: { step: number; at: number }[];
  /** When the run was paused since `startedAt` (ms): the live timing counts none of it (progress.ts `timing`). */
  pauses: Pause[];
  /** A pause or stop the person asked for that the worker has not reached yet (it acts between steps). */
  requested: 'pause' | 'stop' | null;
  begin: (runId: string, options: RunOptions) => void;
  /** Shows a stored run as the current one; `live` when it was just continued (events follow). */
  load: (
    runId: string,
    options: RunOptions | ImportedRunOptions,
    status: RunStatus,
    steps: StepPoint[],
    evals: EvalPoint[],
    message?: string,
    live?: boolean,
  ) => void;
  receive: (e: RunEvent) => void;
  request: (what: 'pause' | 'stop') => void;
  /** No run open (the one shown was deleted). */
  clear: () => void;
}

type RunData = Omit<RunState, 'begin' | 'load' | 'receive' | 'request' | 'clear'>;
const noRun = (): RunData => ({
  runId: null,
  options: null,
  status: 'idle',
  message: null,
  totalSteps: 0,
  steps: [],
  evals: [],
  checkpoint: null,
  phase: null,
  startedAt: null,
  stepEnds: [],
  pauses: [],
  requested: null,
});

/** A pause opens when the worker reports the run paused and closes at the next status (running, stopped, …). */
export function pausesAfter(pauses: Pause[], status: RunStatus, now: number): Pause[] {
  const open = pauses.at(-1)?.until === null;
  if (status === 'paused') return open ? pauses : [...pauses, { from: now, until: null }];
  return open ? [...pauses.slice(0, -1), { ...pauses.at(-1)!, until: now }] : pauses;
}

/** A run that becomes the current one is what Groups and Batch show next (not an earlier pick). */
const followCurrent = () => useViewedRun.getState().view(null);

export const useRunStore = create<RunState>((set, get) => ({
  ...noRun(),
  begin: (runId, options) => {
    followCurrent();
    set({
      runId,
      options,
      totalSteps: options.steps,
      status: 'running',
      message: null,
      steps: [],
      evals: [],
      checkpoint: null,
      phase: null,
      startedAt: Date.now(),
      stepEnds: [],
      pauses: [],
      requested: null,
    });
  },
  load: (runId, options, status, steps, evals, message, live = false) => {
    followCurrent();
    set({
      runId,
      options,
      status,
      totalSteps: options.steps,
      steps,
      evals,
      message: message ?? null,
      checkpoint: null,
      phase: null,
      startedAt: live ? Date.now() : null,
      stepEnds: [],
      pauses: [],
      requested: null,
    });
  },
  receive: (e) => {
    if (get().runId !== null && e.runId !== get().runId) return; // an event of a replaced run
    if (e.type === 'status') {
      const requested = get().requested;
      // A pause or stop asked for is reached when the status says so (or the run ended otherwise).
      const reached = e.status !== 'running' || requested === null;
      set({
        status: e.status,
        pauses: pausesAfter(get().pauses, e.status, Date.now()),
        message: e.message ? `${e.errorName ? `${e.errorName}: ` : ''}${e.message}` : null,
        ...(reached ? { requested: null } : {}),
        ...(e.status === 'running' ? {} : { phase: null }),
      });
    } else if (e.type === 'step') {
      set((s) => ({
        steps: [...s.steps, { step: e.step, metrics: e.metrics, ...(e.t !== undefined ? { t: e.t } : {}) }],
        totalSteps: e.totalSteps,
        stepEnds: [...s.stepEnds, { step: e.step, at: Date.now() }],
      }));
    } else if (e.type === 'checkpoint') set({ checkpoint: { step: e.step, bytes: e.bytes } });
    else if (e.type === 'phase')
      set({ phase: { step: e.step, phase: e.phase, done: e.done, total: e.total, unit: e.unit, at: Date.now() } });
    else
      set((s) => ({
        evals: [
          ...s.evals,
          { step: e.step, accuracy: e.accuracy, meanLength: e.meanLength, n: e.n, samples: e.samples },
        ],
        // Step 0's metrics (pass rates) come with its evaluation: the step point a reopened run reads from the store.
        // A later step's come with its step event too (after this one), so they make no point of their own.
        ...(e.metrics && e.step === 0 && !s.steps.some((p) => p.step === e.step)
          ? { steps: [{ step: e.step, metrics: e.metrics }, ...s.steps].sort((a, b) => a.step - b.step) }
          : {}),
      }));
  },
  request: (what) => set({ requested: what }),
  clear: () => set(noRun()),
}));
