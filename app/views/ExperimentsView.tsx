/**
 * Experiments: pick a preset, adjust its options, start a run and watch it live (loss, learning
 * rate, tokens/s, held-out accuracy), with pause, resume and stop between steps.
 */
import { useQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import type { RunOptions } from '../../worker/protocol';
import { Chart } from '../components/Chart';
import { MetricExplorer } from '../components/MetricExplorer';
import { StoredRuns } from '../components/StoredRuns';
import { latestCheckpoint, pauseRun, presetsQuery, resumeRun, startRun, stopRun } from '../queries/experiments';
import { backendInfoQuery } from '../queries/system';
import { useRunStore } from '../state/run-store';

/** Form fields; a preset shows those its options have. */
const FIELDS: { key: string; label: string; step: string; help: string }[] = [
  { key: 'steps', label: 'Steps', step: '1', help: 'optimizer steps, 1–5000' },
  { key: 'lr', label: 'Learning rate', step: 'any', help: 'peak (SFT: after warmup); (0, 0.1]' },
  { key: 'prompts', label: 'Prompts per step', step: '1', help: 'P, 1–256' },
  { key: 'group', label: 'Group size', step: '1', help: 'G completions per prompt, 2–64' },
  { key: 'temperature', label: 'Temperature', step: 'any', help: 'sampling, (0, 10]' },
  { key: 'pairs', label: 'Pairs per step', step: '1', help: 'preference pairs, 1–256' },
  { key: 'beta', label: 'DPO β', step: 'any', help: '(0, 10]' },
  { key: 'nllWeight', label: 'NLL weight', step: 'any', help: 'on chosen completions (rpo_alpha), [0, 10]' },
  { key: 'seed', label: 'Seed', step: '1', help: 'weight init and task order' },
  { key: 'evalEvery', label: 'Evaluate every', step: '1', help: 'steps between held-out evaluations; 0 = never' },
  { key: 'evalN', label: 'Held-out tasks', step: '1', help: 'greedy exact match on this many, 1–1000' },
  { key: 'checkpointEvery', label: 'Checkpoint every', step: '1', help: 'steps; 0 = at the end only' },
];

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

function CheckpointDownload() {
  const checkpoint = useRunStore((s) => s.checkpoint);
  const [links, setLinks] = useState<{ name: string; url: string }[]>([]);
  useEffect(() => () => links.forEach((l) => URL.revokeObjectURL(l.url)), [links]);
  if (!checkpoint) return null;
  const prepare = async () => {
    const c = await latestCheckpoint();
    if (!c) return;
    setLinks(Object.entries(c.files).map(([name, bytes]) => ({ name, url: URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>])) })));
  };
  return (
    <div>
      <p>
        Latest checkpoint: step {checkpoint.step}, {(checkpoint.bytes / 1024).toFixed(0)} KiB (safetensors + Hugging Face config.json + tokenizer.json).{' '}
        <button type="button" onClick={() => void prepare()}>
          Prepare download
        </button>
      </p>
      {links.length > 0 && (
        <ul aria-label="Checkpoint files">
          {links.map((l) => (
            <li key={l.name}>
              <a href={l.url} download={l.name}>
                {l.name}
              </a>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function RunControls() {
  const { runId, status } = useRunStore();
  if (!runId) return null;
  const active = status === 'running' || status === 'paused';
  return (
    <div className="controls">
      {status === 'running' && <button type="button" onClick={() => void pauseRun(runId)}>Pause</button>}
      {status === 'paused' && <button type="button" onClick={() => void resumeRun(runId)}>Resume</button>}
      {active && <button type="button" onClick={() => void stopRun(runId)}>Stop</button>}
    </div>
  );
}

function LiveRun() {
  const { runId, status, message, steps, evals, totalSteps } = useRunStore();
  const last = steps.at(-1);
  const lastEval = evals.at(-1);
  const isRl = steps.length > 0 && 'reward/mean' in steps[0].metrics;
  const isDpo = steps.length > 0 && 'loss/dpo' in steps[0].metrics;
  const lossKey = isRl || isDpo ? 'loss/total' : 'loss/sft';
  const lossSeries = useMemo(() => [{ name: lossKey, points: steps.map((s) => [s.step, s.metrics[lossKey]] as [number, number]) }], [steps, lossKey]);
  const rewardSeries = useMemo(() => [{ name: 'reward/mean', points: steps.map((s) => [s.step, s.metrics['reward/mean']] as [number, number]) }], [steps]);
  const fmt = (key: string, digits = 4) => (last && key in last.metrics ? last.metrics[key].toFixed(digits) : '–');
  // Evaluations move by a few points between steps (calibration.md): show a 3-point moving average beside them.
  const accSeries = useMemo(
    () => [
      { name: 'held-out accuracy', points: evals.map((e) => [e.step, e.accuracy] as [number, number]) },
      { name: 'moving average (3)', points: evals.map((e, i) => [e.step, evals.slice(Math.max(0, i - 2), i + 1).reduce((a, x) => a + x.accuracy, 0) / Math.min(3, i + 1)] as [number, number]) },
    ],
    [evals],
  );
  if (!runId) return <p>No run yet: choose a preset and start it.</p>;
  return (
    <section aria-labelledby="live-title">
      <h2 id="live-title">Run {runId}</h2>
      <p>
        Status: <strong data-testid="run-status">{status}</strong> · step <span data-testid="run-step">{last?.step ?? 0}</span> of {totalSteps}
      </p>
      <progress max={totalSteps} value={last?.step ?? 0} aria-label="Run progress" />
      {message && <p role={status === 'failed' ? 'alert' : 'status'}>{message}</p>}
      <RunControls />
      <CheckpointDownload />
      <dl className="facts">
        {isRl && (
          <>
            <dt>Mean reward</dt>
            <dd data-testid="metric-reward-mean">{fmt('reward/mean', 3)}</dd>
            <dt>Zero-std groups</dt>
            <dd>{fmt('reward/frac_reward_zero_std', 2)}</dd>
            <dt>Clip fraction</dt>
            <dd>{fmt('rl/pg_clipfrac', 3)}</dd>
            <dt>Step time (sample / score / train)</dt>
            <dd>{last ? `${fmt('perf/sample_ms', 0)} / ${fmt('perf/score_ms', 0)} / ${fmt('perf/train_ms', 0)} ms` : '–'}</dd>
          </>
        )}
        {isDpo && (
          <>
            <dt>Reward margin / accuracy</dt>
            <dd data-testid="metric-dpo-margin">
              {fmt('rewards/margins', 3)} / {fmt('rewards/accuracies', 3)}
            </dd>
          </>
        )}
        <dt>Loss ({lossKey})</dt>
        <dd data-testid="metric-loss">{fmt(lossKey)}</dd>
        <dt>Learning rate</dt>
        <dd>{last ? last.metrics['opt/lr'].toExponential(2) : '–'}</dd>
        <dt>Gradient norm</dt>
        <dd>{fmt('opt/grad_norm', 3)}</dd>
        <dt>Tokens/s</dt>
        <dd data-testid="metric-tokens-per-s">{fmt('perf/tokens_per_s', 0)}</dd>
        <dt>Held-out accuracy</dt>
        <dd data-testid="metric-accuracy">{lastEval ? `${(lastEval.accuracy * 100).toFixed(1)}% (step ${lastEval.step}, n=${lastEval.n})` : 'not evaluated yet'}</dd>
      </dl>
      {isRl && <Chart label={`Mean reward by step; latest ${fmt('reward/mean', 3)}`} series={rewardSeries} yName="reward" height={180} />}
      <Chart label={`${isRl || isDpo ? 'Loss' : 'SFT loss'} by step; latest ${fmt(lossKey)}`} series={lossSeries} yName="loss" />
      <MetricExplorer steps={steps} />
      {evals.length > 0 && <Chart label="Held-out exact-match accuracy by step" series={accSeries} yName="accuracy" height={180} />}
      {lastEval && (
        <details>
          <summary>Greedy samples at step {lastEval.step}</summary>
          <ul>
            {lastEval.samples.map((s, i) => (
              <li key={i}>
                <code>{s.prompt}</code> → <code>{s.completion}</code> ({s.correct ? 'correct' : `expected ${s.answer}`})
              </li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}

export function ExperimentsView() {
  const backend = useQuery(backendInfoQuery());
  const presets = useQuery(presetsQuery());
  const [options, setOptions] = useState<RunOptions | null>(null);
  const [error, setError] = useState<string | null>(null);
  const status = useRunStore((s) => s.status);
  useEffect(() => {
    if (!options && presets.data?.[0]) setOptions(presets.data[0].defaults);
  }, [options, presets.data]);

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
      <div className="presets">
        {presets.data?.map((p) => (
          <button key={p.name} type="button" data-testid={`preset-${p.name}`} aria-pressed={options?.preset === p.name} onClick={() => setOptions(p.defaults)}>
            <span>
              <strong>{p.name}</strong>: {p.title}
            </span>
            <span className="preset-description">{p.description}</span>
          </button>
        ))}
      </div>
      {options && (
        <form
          aria-label="Run options"
          onSubmit={(e) => {
            e.preventDefault();
            void start();
          }}
        >
          {FIELDS.filter((f) => f.key in options).map((f) => (
            <label key={f.key}>
              {f.label}
              <input
                type="number"
                step={f.step}
                value={(options as unknown as Record<string, number>)[f.key]}
                aria-describedby={`help-${f.key}`}
                onChange={(e) => setOptions({ ...options, [f.key]: e.target.value === '' ? NaN : Number(e.target.value) } as RunOptions)}
              />
              <small id={`help-${f.key}`}>{f.help}</small>
            </label>
          ))}
          <ConfigJson options={options} />
          <button type="submit" data-testid="run-start" disabled={!backend.data || status === 'running' || status === 'paused'}>
            Start run
          </button>
          {error && (
            <p role="alert" className="bad">
              {error}
            </p>
          )}
        </form>
      )}
      <LiveRun />
      <StoredRuns />
    </section>
  );
}
