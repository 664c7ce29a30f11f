/**
 * The first-visit starting point: which presets to try first, what each shows and how long its
 * default run takes on the README's 2-core machine (first-steps.ts), with a button that picks the
 * preset in the form. Shown until hidden (remembered in localStorage), and not while a run is open:
 * the dashboard has the top of the page then.
 */
import { useState } from 'react';
import type { PresetInfo } from '../../worker/protocol';
import { useFormStore } from '../state/form-store';
import { useRunStore } from '../state/live-run';
import { firstSteps, timeText } from './first-steps';
import { usePageStore } from './page-store';

const STORAGE_KEY = 'dewpoint.guide.hidden';

function readHidden(): boolean {
  try {
    return localStorage.getItem(STORAGE_KEY) === '1';
  } catch (e) {
    console.warn(`dewpoint: could not read whether the guide was hidden, showing it: ${(e as Error).message}`);
    return false;
  }
}

export function FirstVisitGuide({ presets }: { presets: PresetInfo[] }) {
  const [hidden, setHidden] = useState(readHidden);
  const runOpen = useRunStore((s) => s.runId !== null);
  if (hidden || runOpen || presets.length === 0) return null;
  const hide = () => {
    try {
      localStorage.setItem(STORAGE_KEY, '1');
    } catch (e) {
      console.warn(`dewpoint: could not remember that the guide was hidden: ${(e as Error).message}`);
    }
    setHidden(true);
    // The button goes with the guide: the form's disclosure, next in the page, takes the focus.
    document.getElementById('new-run-toggle')?.focus();
  };
  const choose = (p: PresetInfo) => {
    useFormStore.getState().choosePreset(p);
    usePageStore.getState().setFormOpen(true);
    requestAnimationFrame(() => document.querySelector<HTMLElement>(`[data-testid="preset-${p.name}"]`)?.focus());
  };
  const suggested = firstSteps(presets);
  const alsoMeasured = presets.filter((p) => p.speed && !p.firstStep);
  return (
    <section aria-labelledby="guide-title" className="notice guide" data-testid="first-visit-guide">
      <div className="notice-head">
        <h2 id="guide-title">Where to start</h2>
        <button type="button" onClick={hide}>
          Hide this guide
        </button>
      </div>
      <p>
        Try these first. Times: each preset&apos;s default run on a 2-core machine without a GPU (wasm; README.md); the
        per-step figures leave out the held-out evaluations.
      </p>
      <ol className="guide-steps">
        {suggested.map(({ p, why }) => {
          const time = timeText(p.speed, p.defaults.steps);
          return (
            <li key={p.name}>
              <div>
                <span>
                  <strong>{p.name}</strong>: {why}.{time && <span className="guide-time"> {time}.</span>}
                </span>
                <button type="button" onClick={() => choose(p)}>
                  Choose {p.name}
                </button>
              </div>
            </li>
          );
        })}
      </ol>
      {alsoMeasured.length > 0 && (
        <p>
          Also measured:{' '}
          {alsoMeasured
            .map(
              (p) => `${p.name} ${timeText(p.speed, p.defaults.steps)}${p.companion ? ' (needs the companion)' : ''}`,
            )
            .join('; ')}
          . The other presets have no time in the README yet.
        </p>
      )}
    </section>
  );
}
