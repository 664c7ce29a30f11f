/**
 * How every chart is drawn (the run dashboard's and the Compare view's alike), in zustand and
 * kept in localStorage across reloads: TensorBoard's smoothing weight, the log y axis, and a
 * counter that resets the zoom of every chart. Not the data: charts get their series as props.
 */
import { create } from 'zustand';
import { persist } from 'zustand/middleware';

/** TensorBoard's default smoothing weight. */
const DEFAULT_SMOOTHING = 0.6;
/** The largest weight (TensorBoard's slider stops at 0.99: at 1 the curve never moves). */
export const MAX_SMOOTHING = 0.99;

/** A weight in [0, 0.99] on the slider's 0.01 grid; the default for anything that is not a number. */
function clampSmoothing(w: unknown): number {
  if (typeof w !== 'number' || !Number.isFinite(w)) return DEFAULT_SMOOTHING;
  return Math.round(Math.min(Math.max(w, 0), MAX_SMOOTHING) * 100) / 100;
}

interface ChartSettingsState {
  /** Weight w of the debiased exponential moving average drawn over each line; 0 = raw only. */
  smoothing: number;
  /** Draw y axes on a log scale (each chart refuses, saying why, when a value is ≤ 0). */
  logY: boolean;
  /** Bumped by resetZoom; every chart resets its zoom when it changes. */
  zoomResets: number;
  setSmoothing: (w: number) => void;
  setLogY: (on: boolean) => void;
  resetZoom: () => void;
}

export const useChartSettings = create<ChartSettingsState>()(
  persist(
    (set) => ({
      smoothing: DEFAULT_SMOOTHING,
      logY: false,
      zoomResets: 0,
      setSmoothing: (w) => set({ smoothing: clampSmoothing(w) }),
      setLogY: (on) => set({ logY: on }),
      resetZoom: () => set((s) => ({ zoomResets: s.zoomResets + 1 })),
    }),
    {
      name: 'dewpoint.chart-settings',
      version: 1,
      partialize: (s) => ({ smoothing: s.smoothing, logY: s.logY }),
      // A stored value edited by hand or from another version must not break the charts.
      merge: (stored, current) => {
        const s = (stored ?? {}) as { smoothing?: unknown; logY?: unknown };
        return { ...current, smoothing: clampSmoothing(s.smoothing ?? current.smoothing), logY: s.logY === true };
      },
    },
  ),
);
