/**
 * Any metric of the shown run as a curve: pick one or more keys (every `group/name` the worker
 * reports: loss terms, KL, clip fractions, entropy, mismatch, zero-std fraction, tokens/s, step
 * time split, ...), grouped by their prefix. The latest values are listed as text too. A choice
 * keeps only the keys this run has (explorer-selection.ts), so switching runs never plots nothing.
 */
import { useId, useMemo, useState } from 'react';
import type { StepPoint } from '../state/live-run';
import { Chart } from './Chart';
import { shownSelection } from './explorer-selection';
import { significant } from '../shared/format';

const DEFAULTS = ['rl/entropy', 'mismatch/kl', 'rl/pg_clipfrac', 'reward/frac_reward_zero_std', 'perf/tokens_per_s'];

export function MetricExplorer({ steps }: { steps: StepPoint[] }) {
  const keys = useMemo(() => Object.keys(steps.at(-1)?.metrics ?? {}).sort(), [steps]);
  const [chosen, setChosen] = useState<string[] | null>(null);
  const selectId = useId();
  const selected = useMemo(() => shownSelection(chosen, keys, DEFAULTS), [chosen, keys]);
  const series = useMemo(
    () =>
      selected.map((k) => ({
        name: k,
        points: steps.filter((s) => k in s.metrics).map((s) => [s.step, s.metrics[k]] as [number, number]),
      })),
    [selected, steps],
  );
  if (keys.length === 0) return null;
  const last = steps.at(-1)!.metrics;
  return (
    <details open>
      <summary>All metrics ({keys.length})</summary>
      {/* Above its list (a label wrapping a tall list sits on the list's last line), tied to it by id. */}
      <label htmlFor={selectId} className="metric-select-label">
        Metrics to plot (Ctrl/Shift to choose several)
      </label>
      <select
        id={selectId}
        multiple
        size={8}
        value={selected}
        onChange={(e) => setChosen([...e.target.selectedOptions].map((o) => o.value))}
        data-testid="metric-select"
      >
        {keys.map((k) => (
          <option key={k} value={k}>
            {k} = {significant(last[k])}
          </option>
        ))}
      </select>
      <Chart label={`Metrics by step: ${selected.join(', ')}`} series={series} height={200} />
    </details>
  );
}
