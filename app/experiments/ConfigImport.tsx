/**
 * Loads a config JSON into the form: pasted into a textarea or read from a chosen .json file, in
 * the shape "Config as JSON" shows (the run's exact options). The worker's schema checks it first
 * (the same optionProblemsQuery the form uses): text that is not JSON, an unknown preset, or an
 * option no field of the form can show is refused with a message naming it, and the form is left
 * as it was; options that are only out of range load, and their fields show their problems.
 * Not the validator (the worker is) nor the store (form-store.ts).
 */
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { PresetInfo, RunOptions } from '../../worker/protocol';
import { optionProblemsQuery } from '../queries/experiments';
import { useFormStore } from '../state/form-store';
import { parseConfigJson, unshownProblems } from './objective-fields';

type Outcome = { ok: boolean; message: string };

export function ConfigImport({ presets }: { presets: PresetInfo[] }) {
  const client = useQueryClient();
  const [text, setText] = useState('');
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  const load = async (source: string, what: string) => {
    const refuse = (reason: string) =>
      setOutcome({ ok: false, message: `Not loaded, the form is unchanged: ${reason}.` });
    const parsed = parseConfigJson(source, what);
    if (!parsed.ok) return refuse(parsed.reason);
    let problems;
    try {
      problems = await client.fetchQuery(optionProblemsQuery(parsed.value as RunOptions));
    } catch (e) {
      return refuse(`the options could not be checked: ${(e as Error).message}`);
    }
    const name = (parsed.value as { preset?: unknown } | null)?.preset;
    const preset = presets.find((p) => p.name === name);
    const unfixable = unshownProblems(preset?.fields ?? [], parsed.value, problems);
    if (!preset || unfixable.length)
      return refuse(unfixable.map((p) => p.message).join('; ') || `no preset '${String(name)}'`);
    useFormStore.getState().setOptions(parsed.value as RunOptions);
    const n = problems.length;
    setOutcome({
      ok: true,
      message: `Loaded ${what} into the form (${preset.name})${n ? `: ${n} problem${n > 1 ? 's' : ''} to fix, listed next to Start` : ''}.`,
    });
  };

  return (
    <details className="config-import">
      <summary>Import config JSON</summary>
      <label htmlFor="config-import-text">Config JSON to load into the form</label>
      <textarea
        id="config-import-text"
        rows={8}
        spellCheck={false}
        value={text}
        aria-describedby="config-import-error config-import-status"
        onChange={(e) => setText(e.target.value)}
      />
      <div className="config-import-actions">
        <button type="button" onClick={() => void load(text, 'the pasted text')}>
          Load into the form
        </button>
        <label>
          Or choose a .json file{' '}
          <input
            type="file"
            accept=".json,application/json"
            onChange={(e) => {
              const input = e.currentTarget;
              const file = input.files?.[0];
              if (!file) return;
              void file.text().then(
                (t) => {
                  setText(t);
                  input.value = '';
                  return load(t, file.name);
                },
                (err: Error) =>
                  setOutcome({
                    ok: false,
                    message: `Not loaded, the form is unchanged: ${file.name} could not be read: ${err.message}.`,
                  }),
              );
            }}
          />
        </label>
      </div>
      <p id="config-import-status" role="status">
        {outcome?.ok ? outcome.message : ''}
      </p>
      {outcome && !outcome.ok && (
        <p id="config-import-error" role="alert" className="bad">
          {outcome.message}
        </p>
      )}
    </details>
  );
}
