/**
 * "Import verl rollouts…": a file input for verl's rollout dumps (`trainer.rollout_data_dir`'s
 * `{step}.jsonl`, or parquet with the same columns), several at once. The worker reads and checks
 * them and stores one run (status `imported`); it then becomes the run Groups, Batch and Replay
 * show. A bad file is refused whole, in an alert naming its file, line and field; nothing is
 * stored. Not the reader (worker/interop/verl-import.ts).
 */
import { useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import type { VerlImportResult } from '../../worker/protocol';
import { importVerlFiles } from '../queries/imports';
import { keys } from '../queries/keys';
import { useViewedRun } from '../state/viewed-run';

type Outcome =
  | { kind: 'busy'; names: string }
  | { kind: 'done'; result: VerlImportResult; names: string }
  | { kind: 'failed'; message: string };

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function VerlImport() {
  const client = useQueryClient();
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const id = useId();

  const choose = async (input: HTMLInputElement) => {
    const files = Array.from(input.files ?? []);
    if (!files.length) return;
    const names = files.map((f) => f.name).join(', ');
    setOutcome({ kind: 'busy', names });
    try {
      const result = await importVerlFiles(files);
      setOutcome({ kind: 'done', result, names });
      if (result.ok) {
        await client.invalidateQueries({ queryKey: keys.runs() });
        useViewedRun.getState().view(result.runId);
      }
    } catch (e) {
      const err = e as Error;
      setOutcome({ kind: 'failed', message: `${names} could not be imported (${err.name}): ${err.message}` });
    } finally {
      input.value = ''; // choosing the same files again imports again
    }
  };

  const done = outcome?.kind === 'done' ? outcome.result : null;
  const error =
    outcome?.kind === 'failed'
      ? outcome.message
      : done && !done.ok
        ? `Not imported, nothing was stored: ${done.message}.`
        : null;
  return (
    <section aria-labelledby={`${id}-title`} className="verl-import">
      <h2 id={`${id}-title`}>Import verl rollouts</h2>
      <label>
        Import verl rollouts…{' '}
        <input
          type="file"
          accept=".jsonl,.ndjson,.parquet"
          multiple
          aria-describedby={`${id}-help ${id}-status ${id}-error`}
          disabled={outcome?.kind === 'busy'}
          onChange={(e) => void choose(e.currentTarget)}
        />
      </label>
      <p id={`${id}-help`} className="chart-note">
        The files verl writes to <code>trainer.rollout_data_dir</code> (one <code>{'{step}'}.jsonl</code> per step:
        input, output, gts, score, step), or parquet with the same columns. They open as one run in Groups, Batch and
        Replay; what the dump lacks is listed there.
      </p>
      <p id={`${id}-status`} role="status">
        {outcome?.kind === 'busy' && `Importing ${outcome.names}…`}
        {done?.ok && (
          <>
            Imported {outcome?.kind === 'done' && outcome.names}: {plural(done.steps, 'step')},{' '}
            {plural(done.groups, 'group')}, {plural(done.samples, 'sample')}
            {done.missing.length
              ? `; ${plural(new Set(done.missing.map((m) => m.field)).size, 'field')} missing (listed in each view)`
              : ''}
            . <a href="#/groups">Open it in Groups</a>
          </>
        )}
      </p>
      {error && (
        <p id={`${id}-error`} role="alert" className="bad" data-testid="verl-import-error">
          {error}
        </p>
      )}
    </section>
  );
}
