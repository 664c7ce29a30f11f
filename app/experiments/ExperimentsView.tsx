/**
 * Experiments: pick a preset, adjust its options, start a run and watch it live (loss, learning
 * rate, tokens/s, held-out accuracy), with pause, resume and stop between steps.
 */
import { CompanionNotice } from './CompanionNotice';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import type { RunOptions } from '../../worker/protocol';
import { ConfigImport } from './ConfigImport';
import { DatasetPicker } from './DatasetPicker';
import { ModelPicker } from './ModelPicker';
import { ObjectiveForm, type ObjectiveFormHandle } from './ObjectiveForm';
import { ProblemSummary } from './ProblemSummary';
import { RunDashboard } from './RunDashboard';
import { RunsTable } from './RunsTable';
import { VerlImport } from './VerlImport';
import { optionProblemsQuery, presetsQuery, startRun } from '../queries/experiments';
import { backendInfoQuery } from '../queries/system';
import { useFormStore } from '../state/form-store';
import { useRunStore } from '../state/run-store';

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

export function ExperimentsView() {
  const backend = useQuery(backendInfoQuery());
  const presets = useQuery(presetsQuery());
  const { options, setOptions, choosePreset, resetPreset, initFrom } = useFormStore();
  const [error, setError] = useState<string | null>(null);
  const status = useRunStore((s) => s.status);
  const check = useQuery(optionProblemsQuery(options));
  const problems = check.data ?? [];
  const checked = check.isSuccess && !check.isPlaceholderData;
  const preset = presets.data?.find((p) => p.name === options?.preset);
  const fields = preset?.fields ?? [];
  const form = useRef<ObjectiveFormHandle>(null);
  useEffect(() => {
    if (presets.data) initFrom(presets.data);
  }, [presets.data, initFrom]);

  const start = async () => {
    if (!options) return;
    setError(null);
    try {
      await startRun(options);
    } catch (e) {
      const err = e as Error;
      setError(`${err.name}: ${err.message}`);
    }
  };

  return (
    <section aria-labelledby="experiments-title">
      <h1 id="experiments-title">Experiments</h1>
      {backend.data && (
        <p>
          Training on <strong>{backend.data.backend}</strong>
          {backend.data.adapter ? ` (${backend.data.adapter.vendor}/${backend.data.adapter.architecture})` : ''}.
        </p>
      )}
      <h2>Presets</h2>
      {/* Compact buttons, the chosen preset's description once beneath them: five presets with
          their descriptions inside would push Start below the fold. */}
      <div className="presets">
        {presets.data?.map((p) => {
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
          {/* Sticky: Start and the problems stay in reach however many sections are open. */}
          <div className="form-actions">
            <button
              type="submit"
              data-testid="run-start"
              aria-describedby="run-start-note"
              disabled={!backend.data || status === 'running' || status === 'paused' || !checked || problems.length > 0}
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
          <ConfigImport presets={presets.data ?? []} />
        </form>
      )}
      <RunDashboard />
      <RunsTable />
      <VerlImport />
    </section>
  );
}
