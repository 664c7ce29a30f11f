/**
 * What an imported run (verl rollouts) holds and lacks, above the Groups, Batch and Replay views:
 * its files, how its samples were grouped, where its advantages came from, and for this view each
 * missing field with what the view cannot draw without it. Nothing for a trained run.
 */
import type { ImportMissing } from '../../worker/protocol';
import { importedOf } from './runs-table';
import type { ShownRun } from './ViewedRun';

export function ImportNotice({ shown, view }: { shown: ShownRun; view: ImportMissing['view'] }) {
  const run = shown.runs.find((r) => r.runId === shown.runId);
  const o = run ? importedOf(run) : null;
  if (!o) return null;
  const mine = o.missing.filter((m) => m.view === view);
  return (
    <aside className="note" aria-label="Imported run" data-testid="import-notice">
      <p>
        Imported from verl rollouts (
        {o.files.map((f) => `${f.name}: ${f.rows} ${f.rows === 1 ? 'sample' : 'samples'}`).join(', ')}), not trained
        here. Grouped{' '}
        {o.grouping === 'uid' ? 'by the dump’s uid' : 'by identical input within a step (the dump has no uid)'};
        advantages{' '}
        {o.advantages === 'dump'
          ? 'as the dump has them'
          : 'recomputed by Dewpoint’s GRPO estimator with verl’s defaults, not verl’s own'}
        .
      </p>
      {mine.length > 0 && (
        <>
          <p>Missing from this dump, so this view cannot draw:</p>
          <ul>
            {mine.map((m) => (
              <li key={`${m.field}/${m.cannot}`}>
                <strong>
                  {view} · <code>{m.field}</code>
                </strong>
                : {m.cannot}.
              </li>
            ))}
          </ul>
        </>
      )}
    </aside>
  );
}
