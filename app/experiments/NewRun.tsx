/**
 * "New run": the presets and the chosen preset's options form with Start, as one disclosure (a
 * heading's button with `aria-expanded`). Open on arrival; Start collapses it so the run's dashboard
 * is at the top of the page, and the button (which names the preset in the form) opens it again.
 * Collapsed, it stays mounted (`hidden`), so the form keeps its open sections and edits.
 */
import { useQuery } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import type { PresetInfo, RunOptions } from '../../worker/protocol';
import { optionProblemsQuery, startRun } from '../queries/experiments';
import { backendInfoQuery } from '../queries/system';
import { useFormStore } from '../state/form-store';
import { useRunStore } from '../state/live-run';
import { CompanionNotice } from './CompanionNotice';
import { ConfigImport } from './ConfigImport';
import { DatasetPicker } from './DatasetPicker';
import { EnvironmentPicker } from './EnvironmentPicker';
import { ModelPicker } from './ModelPicker';
import { ObjectiveForm, type ObjectiveFormHandle } from './ObjectiveForm';
import { usePageStore } from './page-store';
import { ProblemSummary } from './ProblemSummary';

/** The run's options as JSON, with a copy button, so a run can be described or repeated exactly. */
function ConfigJson({ options }: { options: RunOptions }) {
  const [copied, setCopied] = useState(false);
  const text = JSON.stringify(options, null, 2);
  return (
    <details className="config-json">
      <summary>Config as JSON</summary>
      <pre data-testid="config-json">{text}</pre>
      <button
        type="button"
        onClick={() => {
          void navigator.clipboard.writeText(text).then(
            () => setCopied(true),
            () => setCopied(false),
          );
        }}
      >
        Copy
      </button>
      <span role="status">{copied ? ' copied' : ''}</span>
    </details>
  );
}

export function NewRun({ presets }: { presets: PresetInfo[] | undefined }) {
  const backend = useQuery(backendInfoQuery());
  const { options, setOptions, choosePreset, resetPreset } = useFormStore();
  const [error, setError] = useState<string | null>(null);
  const status = useRunStore((s) => s.status);
  const open = usePageStore((s) => s.formOpen);
  const check = useQuery(optionProblemsQuery(options));
  const problems = check.data ?? [];
  const checked = check.isSuccess && !check.isPlaceholderData;
  const preset = presets?.find((p) => p.name === options?.preset);
  const fields = preset?.fields ?? [];
  const form = useRef<ObjectiveFormHandle>(null);

  const start = async () => {
    if (!options) return;
    setError(null);
    try {
      await startRun(options);
      usePageStore.getState().goToRun();
    } catch (e) {
      const err = e as Error;
      setError(`${err.name}: ${err.message}`);
    }
  };

  return (
    <section aria-labelledby="new-run-title" className="new-run">
      <h2 id="new-run-title">
        <button
          type="button"
          id="new-run-toggle"
          className="disclosure"
          aria-expanded={open}
          aria-controls="new-run-body"
          onClick={() => usePageStore.getState().setFormOpen(!open)}
        >
          <span className="disclosure-marker" aria-hidden="true">
            {open ? '▾' : '▸'}
          </span>
          New run
          {!open && preset && <span className="disclosure-summary">: {preset.name}, presets and options</span>}
        </button>
      </h2>
      <div id="new-run-body" hidden={!open}>
        {/* Compact buttons, the chosen preset's description once beneath them: five presets with
            their descriptions inside would push Start below the fold. */}
        <div className="presets" role="group" aria-label="Presets">
          {presets?.map((p) => {
            const chosen = options?.preset === p.name;
            return (
              <button
                key={p.name}
                type="button"
                data-testid={`preset-${p.name}`}
                aria-pressed={chosen}
                aria-describedby={chosen ? 'preset-description' : undefined}
                title={p.description}
                onClick={() => choosePreset(p)}
              >
                <strong>{p.name}</strong>
                <span>{p.title}</span>
              </button>
            );
          })}
        </div>
        {preset && (
          <p id="preset-description" className="preset-description" data-testid="preset-description">
            {preset.description}
          </p>
        )}
        {preset?.companion && <CompanionNotice />}
        {options && (
          <form
            aria-label="Run options"
            noValidate
            onSubmit={(e) => {
              e.preventDefault();
              void start();
            }}
          >
            <ObjectiveForm ref={form} fields={fields} options={options} problems={problems} onChange={setOptions} />
            {preset?.dataset && (
              <>
                <ModelPicker options={options} onChange={setOptions} />
                <DatasetPicker options={options} rewards={preset.dataset} onChange={setOptions} />
              </>
            )}
            {preset?.environment && (
              <EnvironmentPicker
                options={options}
                example={'environment' in preset.defaults ? preset.defaults.environment : undefined}
                onChange={setOptions}
              />
            )}
            {/* Sticky: Start and the problems stay in reach however many sections are open. */}
            <div className="form-actions">
              <button
                type="submit"
                data-testid="run-start"
                aria-describedby="run-start-note"
                disabled={
                  !backend.data || status === 'running' || status === 'paused' || !checked || problems.length > 0
                }
              >
                Start run
              </button>
              {preset && (
                <button type="button" onClick={() => resetPreset(preset)}>
                  Reset to the preset&apos;s defaults
                </button>
              )}
              <ProblemSummary
                fields={fields}
                options={options}
                problems={problems}
                checkError={check.isError ? check.error.message : null}
                onReveal={(path) => form.current?.reveal(path)}
              />
              {error && (
                <p role="alert" className="bad">
                  {error}
                </p>
              )}
            </div>
            <ConfigJson options={options} />
            <ConfigImport presets={presets ?? []} />
          </form>
        )}
      </div>
    </section>
  );
}
