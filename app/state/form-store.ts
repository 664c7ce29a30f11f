/**
 * The run-options form, in zustand: the options being edited and, per preset, the options the
 * person left in the form, kept in localStorage so a reload (or a switch to another preset and
 * back) brings the form back as it was. UI state only: the worker validates the options, and a
 * stored form that this version no longer accepts simply shows its problems.
 */
import { create } from 'zustand';
import type { PresetInfo, RunOptions } from '../../worker/protocol';
import { startingPreset } from '../experiments/first-steps';

const STORAGE_KEY = 'dewpoint.form.v1';

interface Saved {
  /** The preset the form showed last. */
  last?: string;
  byPreset: Record<string, RunOptions>;
}

function readSaved(): Saved {
  try {
    const raw = localStorage.getItem(STORAGE_KEY);
    const parsed = raw ? (JSON.parse(raw) as Saved) : null;
    return parsed && typeof parsed === 'object' && parsed.byPreset && typeof parsed.byPreset === 'object'
      ? parsed
      : { byPreset: {} };
  } catch (e) {
    console.warn(`dewpoint: the saved form could not be read, starting from the presets: ${(e as Error).message}`);
    return { byPreset: {} };
  }
}

function writeSaved(saved: Saved): void {
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(saved));
  } catch (e) {
    console.warn(`dewpoint: the form could not be saved: ${(e as Error).message}`);
  }
}

interface FormState {
  options: RunOptions | null;
  /** Sets the options being edited and remembers them for their preset. */
  setOptions: (options: RunOptions) => void;
  /** Shows a preset: the options left in the form for it, or its defaults. */
  choosePreset: (preset: PresetInfo) => void;
  /** A preset's defaults, forgetting the edits kept for it. */
  resetPreset: (preset: PresetInfo) => void;
  /** On first load: the preset shown last (with its kept options), else the one the first-visit guide suggests first. */
  initFrom: (presets: PresetInfo[]) => void;
}

export const useFormStore = create<FormState>((set, get) => ({
  options: null,
  setOptions: (options) => {
    const saved = readSaved();
    writeSaved({ last: options.preset, byPreset: { ...saved.byPreset, [options.preset]: options } });
    set({ options });
  },
  choosePreset: (preset) => {
    const saved = readSaved();
    const options = saved.byPreset[preset.name] ?? preset.defaults;
    writeSaved({ ...saved, last: preset.name });
    set({ options });
  },
  resetPreset: (preset) => {
    const saved = readSaved();
    const byPreset = { ...saved.byPreset };
    delete byPreset[preset.name];
    writeSaved({ last: preset.name, byPreset });
    set({ options: preset.defaults });
  },
  initFrom: (presets) => {
    if (get().options || presets.length === 0) return;
    const saved = readSaved();
    const preset = startingPreset(presets, saved.last)!;
    set({ options: saved.byPreset[preset.name] ?? preset.defaults });
  },
}));
