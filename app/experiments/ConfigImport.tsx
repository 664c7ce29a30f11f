/**
 * Loads a config JSON into the form: pasted into a textarea or read from a chosen .json file, in
 * the shape "Config as JSON" shows (the run's exact options) or a part of it. The worker reads it
 * onto its preset's defaults (`completeConfig`: a partial config, `{"preset": "grpo-arith",
 * "steps": 7}`, takes the preset's defaults for the rest) and checks it as the form's
 * optionProblemsQuery does: text that is not JSON, an unknown preset, or an option no field of the
 * form can show is refused with a message naming it, and the form is left as it was; options that
 * are only out of range (or of the wrong type) load, and their fields show their problems, named
 * as the form names them. Not the validator nor the merge (the worker's) nor the store
 * (form-store.ts).
 */
import { useState } from 'react';
import type { PresetInfo } from '../../worker/protocol';
import { completeConfig } from '../queries/experiments';
import { useFormStore } from '../state/form-store';
import { parseConfigJson, unshownProblems } from './objective-fields';

type Outcome = { ok: boolean; message: string };

export function ConfigImport({ presets }: { presets: PresetInfo[] }) {
  const [text, setText] = useState('');
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  const load = async (source: string, what: string) => {
    const refuse = (reason: string) =>
      setOutcome({ ok: false, message: `Not loaded, the form is unchanged: ${reason}.` });
    const parsed = parseConfigJson(source, what);
    if (!parsed.ok) return refuse(parsed.reason);
    let read;
    try {
      read = await completeConfig(parsed.value);
    } catch (e) {
      return refuse(`the options could not be checked: ${(e as Error).message}`);
    }
    if (!read.ok) return refuse(read.problems.map((p) => p.message).join('; '));
    const { options, problems } = read;
    const preset = presets.find((p) => p.name === options.preset);
    if (!preset) return refuse(`no preset '${options.preset}'`);
    const unfixable = unshownProblems(preset.fields, options, problems);
    if (unfixable.length) return refuse(unfixable.map((p) => p.message).join('; '));
    useFormStore.getState().setOptions(options);
    const n = problems.length;
    const partial = Object.keys(options).some((k) => !Object.hasOwn(parsed.value as object, k));
    setOutcome({
      ok: true,
      message: `Loaded ${what} into the form (${preset.name}${partial ? "; the options it leaves out are the preset's defaults" : ''})${n ? `: ${n} problem${n > 1 ? 's' : ''} to fix, listed next to Start` : ''}.`,
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
