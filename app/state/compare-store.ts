/** The runs picked for the Compare view (from the runs table or the view itself): UI state only. */
import { create } from 'zustand';

interface CompareState {
  runIds: string[];
  toggle: (runId: string, on: boolean) => void;
  set: (runIds: string[]) => void;
}

export const useCompareStore = create<CompareState>((set) => ({
  runIds: [],
  toggle: (runId, on) =>
    set((s) => ({
      runIds: on ? [...s.runIds.filter((id) => id !== runId), runId] : s.runIds.filter((id) => id !== runId),
    })),
  set: (runIds) => set({ runIds }),
}));
