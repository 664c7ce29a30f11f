/**
 * Actions on the live run: pause, resume and stop (the worker acts between steps), the latest
 * checkpoint as downloadable files, and the run's metrics as JSON (with its name from the runs
 * listing, its config and each step's commit time; `npm run demo` reads its report from it) or CSV
 * (state/metrics-file.ts).
 */
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { latestCheckpoint, pauseRun, resumeRun, runsQuery, stopRun } from '../queries/experiments';
import { metricsCsv, metricsFile } from '../state/metrics-file';
import { useRunStore } from '../state/live-run';
import { downloadText } from '../state/download';
import { usePreset } from '../shared/use-preset';

export function RunControls() {
  const { runId, status, requested } = useRunStore(
    useShallow((s) => ({ runId: s.runId, status: s.status, requested: s.requested })),
  );
  if (!runId) return null;
  const active = status === 'running' || status === 'paused';
  return (
    <div className="controls">
      {status === 'running' && (
        <button type="button" onClick={() => void pauseRun(runId)}>
          Pause
        </button>
      )}
      {status === 'paused' && (
        <button type="button" onClick={() => void resumeRun(runId)}>
          Resume
        </button>
      )}
      {/* Disabled once asked: the click's effect shows in the same frame, before the worker answers. */}
      {active && (
        <button type="button" disabled={requested === 'stop'} onClick={() => void stopRun(runId)}>
          Stop
        </button>
      )}
      <MetricsExport />
    </div>
  );
}

function MetricsExport() {
  const { runId, status, totalSteps, steps, evals, options } = useRunStore(
    useShallow((s) => ({
      runId: s.runId,
      status: s.status,
      totalSteps: s.totalSteps,
      steps: s.steps,
      evals: s.evals,
      options: s.options,
    })),
  );
  // The name as the runs table shows it (a person's, else the default the worker fills in).
  const name = useQuery(runsQuery()).data?.find((r) => r.runId === runId)?.name ?? null;
  if (!runId || steps.length === 0) return null;
  const run = { runId, name, status, totalSteps, steps, evals, config: options };
  return (
    <>
      <button
        type="button"
        onClick={() =>
          downloadText(`${runId}-metrics.json`, JSON.stringify(metricsFile(run), null, 2), 'application/json')
        }
      >
        Export metrics (JSON)
      </button>
      <button type="button" onClick={() => downloadText(`${runId}-metrics.csv`, metricsCsv(run), 'text/csv')}>
        Export metrics (CSV)
      </button>
    </>
  );
}

export function CheckpointDownload() {
  const checkpoint = useRunStore((s) => s.checkpoint);
  const runId = useRunStore((s) => s.runId);
  // What the files are follows from the preset's family: a language model's folder, or the flow policy's.
  const family = usePreset(useRunStore((s) => s.options)?.preset)?.family;
  const [links, setLinks] = useState<{ name: string; url: string }[]>([]);
  useEffect(() => () => links.forEach((l) => URL.revokeObjectURL(l.url)), [links]);
  // Links prepared for another run or an older checkpoint are not this one's.
  useEffect(() => setLinks([]), [runId, checkpoint?.step]);
  if (!checkpoint || !runId) return null;
  const prepare = async () => {
    const c = await latestCheckpoint(runId);
    if (!c) return;
    setLinks(
      Object.entries(c.files).map(([name, bytes]) => ({
        name,
        url: URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>])),
      })),
    );
  };
  return (
    <div>
      <p>
        Latest checkpoint: step {checkpoint.step}
        {checkpoint.bytes !== undefined ? `, ${(checkpoint.bytes / 1024).toFixed(0)} KiB` : ''}{' '}
        {family === 'flow'
          ? "(the velocity field's safetensors + config.json, and the pretrained reference's when KL β > 0)."
          : '(safetensors + Hugging Face config.json + tokenizer.json).'}{' '}
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
