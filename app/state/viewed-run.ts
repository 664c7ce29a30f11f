/**
 * The run the Groups and Batch views show, shared between them: a stored run a person picked, or
 * null to follow the live (or opened) run of `useRunStore`. UI state only; the run's steps and
 * records are read through react-query.
 */
import { create } from 'zustand';

interface ViewedRunState {
  /** The picked run's id; null: the live run. */
  runId: string | null;
  /** Picks a run; null (or the live run's id, which the picker turns into null) follows the live run. */
  view: (runId: string | null) => void;
}

export const useViewedRun = create<ViewedRunState>((set) => ({
  runId: null,
  view: (runId) => set({ runId }),
}));
