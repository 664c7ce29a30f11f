/**
 * Where the Experiments page puts a person: whether the "New run" form (presets and options) is
 * open, and a request to bring the run's dashboard into view, which the dashboard answers by
 * focusing its heading. Start, Continue and Open go to the run (the form collapses, the dashboard
 * takes the focus); "Run again with this config" and the first-visit guide open the form. UI state
 * for the tab only, in zustand as app/state's stores are; not kept across reloads.
 */
import { create } from 'zustand';

interface PageState {
  /** The "New run" disclosure is expanded. */
  formOpen: boolean;
  /** Bumped by `goToRun`; the dashboard focuses its heading when it changes. */
  runFocus: number;
  setFormOpen: (open: boolean) => void;
  /** After Start, Continue or Open: the form collapses and the dashboard takes the focus. */
  goToRun: () => void;
}

export const usePageStore = create<PageState>((set) => ({
  formOpen: true,
  runFocus: 0,
  setFormOpen: (formOpen) => set({ formOpen }),
  goToRun: () => set((s) => ({ formOpen: false, runFocus: s.runFocus + 1 })),
}));
