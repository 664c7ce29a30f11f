/**
 * One stored run in the runs table: its row (name, preset, key hyperparameters, status, steps,
 * latest mean reward and held-out accuracy, backend, start, duration, actions) and, opened with
 * Details, its exact config with "Run again with this config", its name and notes, Export for
 * verl or TRL (its files download as one .zip), Bundle for verl or SkyRL (BundleExport), and Delete
 * behind a confirmation that says what it removes and, once done, how much it freed.
 */
import { useState } from 'react';
import { flushSync } from 'react-dom';
import type { RunSummary } from '../../worker/protocol';
import { duration } from '../state/progress';
import { useCompareStore } from '../state/compare-store';
import { useFormStore } from '../state/form-store';
import { deleteScope, importedOf, keyParams, runLabel, trainedOptions } from '../shared/runs-table';
import { continueLabel, isContinuable } from './continuable';
import { usePageStore } from './page-store';
import { BundleExport, type BundleOutcome, type BundleTarget } from './BundleExport';

export interface RowActions {
  open: (r: RunSummary) => void;
  continueRun: (r: RunSummary) => void;
  /** Resolves to the worker's reason when it refuses. */
  save: (r: RunSummary, meta: { name?: string; notes?: string }) => Promise<string | null>;
  remove: (r: RunSummary) => Promise<string>;
  /** Downloads the run's files for verl or TRL (worker/interop/files.ts) as one .zip; resolves to what was saved or why not. */
  exportTo: (r: RunSummary, to: 'verl' | 'trl') => Promise<string>;
  /** Downloads the run's bundle for verl or SkyRL (worker/interop/stored-bundle.ts) as one .zip, with its preflight. */
  bundle: (r: RunSummary, to: BundleTarget) => Promise<BundleOutcome>;
  /** Tells the person what happened (a polite live region above the table). */
  announce: (text: string) => void;
}

interface Props {
  r: RunSummary;
  current: boolean;
  /** A run is live in this tab: no other may be continued. */
  live: boolean;
  columns: number;
  actions: RowActions;
}

const EXPORT_TITLES = {
  verl:
    'One .zip: rollouts.parquet (every stored session with ids, log-probs, advantages), train.parquet ' +
    'and val.parquet (the prompts and the held-out tasks, RLHFDataset layout) and launch.sh (Hydra overrides)',
  trl:
    'One .zip: grpo.jsonl and grpo-eval.jsonl (prompt, solution: the prompts and the held-out tasks), ' +
    'dpo.jsonl (prompt, chosen, rejected) and config.py (the config keyword arguments)',
};

const pct = (v: number | undefined) => (v === undefined ? '–' : `${(v * 100).toFixed(1)}%`);

export function RunRow({ r, current, live, columns, actions }: Props) {
  const [open, setOpen] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [name, setName] = useState(r.name ?? '');
  const [notes, setNotes] = useState(r.notes ?? '');
  const [problem, setProblem] = useState<string | null>(null);
  const compared = useCompareStore((s) => s.runIds.includes(r.runId));
  const toggle = useCompareStore((s) => s.toggle);
  const title = runLabel(r);
  const busy = r.status === 'running' || r.status === 'paused';
  const continuable = isContinuable(r);
  const save = async (meta: { name?: string; notes?: string }, what: string) => {
    const reason = await actions.save(r, meta);
    setProblem(reason);
    if (!reason) actions.announce(`Saved the ${what} of ${meta.name !== undefined ? meta.name || 'the run' : title}.`);
  };
  const runAgain = () => {
    const options = trainedOptions(r);
    if (!options) return; // an import has no config to run (the button is disabled)
    useFormStore.getState().setOptions(options);
    actions.announce(`The form above now holds the config of ${title}: check it and start the run.`);
    // The form may be collapsed under a run's dashboard: open it before scrolling to it.
    flushSync(() => usePageStore.getState().setFormOpen(true));
    document.querySelector('form[aria-label="Run options"]')?.scrollIntoView();
  };
  return (
    <>
      <tr aria-current={current ? 'true' : undefined}>
        <td>
          <input
            type="checkbox"
            checked={compared}
            onChange={(e) => toggle(r.runId, e.target.checked)}
            aria-label={`Compare ${title}`}
          />
        </td>
        <th scope="row">
          {title}
          <br />
          <small className="run-id">{r.runId}</small>
        </th>
        <td>{r.options.preset}</td>
        <td className="params">{keyParams(r)}</td>
        <td>{r.elsewhere ? `${r.status} in another tab` : r.status}</td>
        <td>
          {r.lastStep} / {r.options.steps}
          {r.checkpointStep !== undefined && <small> (checkpoint {r.checkpointStep})</small>}
        </td>
        <td className="num">{r.latest?.rewardMean === undefined ? '–' : r.latest.rewardMean.toFixed(3)}</td>
        <td className="num">
          {pct(r.latest?.accuracy)}
          {r.latest?.accuracyStep !== undefined && <small> (step {r.latest.accuracyStep})</small>}
        </td>
        <td title={r.backendChoice ? `why: ${r.backendChoice.reason}` : undefined}>
          {r.backend ?? '–'}
          {r.backendChoice && r.backendChoice.threads > 1 && <small> ×{r.backendChoice.threads}</small>}
        </td>
        <td>{new Date(r.createdAt).toLocaleString()}</td>
        <td>{r.activeMs === undefined ? '–' : duration(r.activeMs)}</td>
        <td className="actions">
          <button type="button" onClick={() => actions.open(r)} disabled={current} aria-label={`Open run ${r.runId}`}>
            Open
          </button>
          {continuable && (
            <button type="button" onClick={() => actions.continueRun(r)} disabled={live} aria-label={continueLabel(r)}>
              Continue
            </button>
          )}
          <button type="button" aria-expanded={open} onClick={() => setOpen(!open)} aria-label={`Details of ${title}`}>
            Details
          </button>
        </td>
      </tr>
      {open && (
        <tr className="run-details">
          <td colSpan={columns}>
            <div className="run-details-grid">
              <div>
                <label>
                  Name{' '}
                  <input
                    value={name}
                    maxLength={100}
                    onChange={(e) => setName(e.target.value)}
                    placeholder={`${r.options.preset} · …`}
                  />
                </label>{' '}
                <button type="button" onClick={() => void save({ name }, 'name')}>
                  Save name
                </button>
                <label className="notes">
                  Notes
                  <textarea value={notes} rows={3} maxLength={10_000} onChange={(e) => setNotes(e.target.value)} />
                </label>
                <button type="button" onClick={() => void save({ notes }, 'notes')}>
                  Save notes
                </button>
                {problem && (
                  <p role="alert" className="bad">
                    {problem}
                  </p>
                )}
                <p role="group" aria-label={`Export ${title}`}>
                  {(['verl', 'trl'] as const).map((to) => (
                    <button
                      key={to}
                      type="button"
                      onClick={() => void actions.exportTo(r, to).then(actions.announce)}
                      disabled={busy}
                      title={busy ? 'Stop the run first' : EXPORT_TITLES[to]}
                    >
                      Export for {to === 'verl' ? 'verl' : 'TRL'}
                    </button>
                  ))}
                </p>
                <BundleExport r={r} title={title} busy={busy} bundle={actions.bundle} announce={actions.announce} />
                <p>
                  <button
                    type="button"
                    onClick={runAgain}
                    disabled={importedOf(r) !== null}
                    title={importedOf(r) ? 'An imported verl run has no Dewpoint config' : undefined}
                  >
                    Run again with this config
                  </button>{' '}
                  {!confirming ? (
                    <button
                      type="button"
                      className="danger"
                      onClick={() => setConfirming(true)}
                      disabled={busy}
                      title={busy ? 'Stop the run first' : undefined}
                    >
                      Delete…
                    </button>
                  ) : (
                    <span role="group" aria-label={`Confirm deleting ${title}`} className="confirm">
                      Delete {title} and every stored record of it ({deleteScope(r)})? This cannot be undone.{' '}
                      <button
                        type="button"
                        className="danger"
                        autoFocus
                        onClick={() =>
                          void actions.remove(r).then((text) => (setConfirming(false), actions.announce(text)))
                        }
                      >
                        Delete permanently
                      </button>{' '}
                      <button type="button" onClick={() => setConfirming(false)}>
                        Cancel
                      </button>
                    </span>
                  )}
                </p>
              </div>
              <div>
                <p>Config (the run&apos;s exact options, as stored):</p>
                <pre data-testid="run-config">{JSON.stringify(r.options, null, 2)}</pre>
              </div>
            </div>
          </td>
        </tr>
      )}
    </>
  );
}
