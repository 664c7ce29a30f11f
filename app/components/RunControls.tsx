/**
 * Actions on the live run: pause, resume and stop (the worker acts between steps), the latest
 * checkpoint as downloadable files, and the run's metrics as a JSON file (what the dashboard
 * plots: every step's metrics and every evaluation; `npm run demo` reads its report from it).
 */
import { useEffect, useState } from 'react';
import { latestCheckpoint, pauseRun, resumeRun, stopRun } from '../queries/experiments';
import { metricsFile } from '../state/metrics-file';
import { useRunStore } from '../state/run-store';

export function RunControls() {
  const { runId, status } = useRunStore();
  if (!runId) return null;
  const active = status === 'running' || status === 'paused';
  return (
    <div className="controls">
      {status === 'running' && <button type="button" onClick={() => void pauseRun(runId)}>Pause</button>}
      {status === 'paused' && <button type="button" onClick={() => void resumeRun(runId)}>Resume</button>}
      {active && <button type="button" onClick={() => void stopRun(runId)}>Stop</button>}
      <MetricsExport />
    </div>
  );
}

function MetricsExport() {
  const { runId, status, totalSteps, steps, evals } = useRunStore();
  if (!runId || steps.length === 0) return null;
  const download = () => {
    const file = metricsFile({ runId, status, totalSteps, steps, evals });
    const url = URL.createObjectURL(new Blob([JSON.stringify(file, null, 2)], { type: 'application/json' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `${runId}-metrics.json`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };
  return (
    <button type="button" onClick={download}>
      Export metrics (JSON)
    </button>
  );
}

export function CheckpointDownload() {
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
