/**
 * The pure parts of `npm run demo`: the report it writes (demo-out/report.json) from what the page
 * showed (the run's config JSON, the exported metrics file, the held-out accuracy text), and the
 * playback schedule of screencast frames when the video is encoded in the browser. No I/O.
 */
import type { MetricsFile } from '../../app/state/metrics-file';

export interface Accuracy {
  /** Fraction in [0, 1]. */
  accuracy: number;
  step: number;
  n: number;
}

/** Reads the dashboard's held-out accuracy text, `12.5% (step 4, n=16)`; null before any evaluation. */
export function parseAccuracy(text: string): Accuracy | null {
  const m = /^\s*(\d+(?:\.\d+)?)% \(step (\d+), n=(\d+)\)\s*$/.exec(text);
  return m ? { accuracy: Number(m[1]) / 100, step: Number(m[2]), n: Number(m[3]) } : null;
}

export interface DemoTimings {
  /** `vite build`, seconds (measured by scripts/demo.mjs). */
  buildS: number | null;
  /** Page load until the backend is reported, seconds. */
  loadS: number;
  /** Start click until the status reads `finished`, seconds. */
  runS: number;
  /** The whole browser session, seconds. */
  totalS: number;
}

export interface DemoReport {
  kind: 'dewpoint-demo';
  version: 1;
  createdAt: string;
  /** The `Training on ...` line of the Experiments view. */
  backend: string;
  browser: string;
  config: Record<string, unknown>;
  runId: string;
  status: string;
  steps: MetricsFile['steps'];
  evals: MetricsFile['evals'];
  finalAccuracy: Accuracy | null;
  timings: DemoTimings & { stepMs: number[] };
  outputs: { screenshots: string[]; video: string | null; videoMethod: string };
}

export interface ReportInput {
  createdAt: Date;
  backend: string;
  browser: string;
  configJson: string;
  metrics: MetricsFile;
  accuracyText: string;
  timings: DemoTimings;
  outputs: DemoReport['outputs'];
}

/**
 * Assembles the report and checks that the page's numbers agree: the metrics file is a finished
 * run of the configured length, and the accuracy text is the last evaluation. A disagreement is a
 * bug in the app or the demo, so it throws with both values.
 */
export function buildReport(input: ReportInput): DemoReport {
  const config = JSON.parse(input.configJson) as Record<string, unknown>;
  const m = input.metrics;
  if (m.kind !== 'dewpoint-metrics' || m.version !== 3)
    throw new Error(`metrics file: expected kind 'dewpoint-metrics' version 3, got '${m.kind}' version ${m.version}`);
  if (m.status !== 'finished') throw new Error(`run ${m.runId}: status '${m.status}', expected 'finished'`);
  if (m.steps.length !== config.steps)
    throw new Error(`run ${m.runId}: ${m.steps.length} steps in the metrics file, config says ${String(config.steps)}`);
  const finalAccuracy = parseAccuracy(input.accuracyText);
  const lastEval = m.evals.at(-1);
  if ((finalAccuracy === null) !== (lastEval === undefined)) {
    throw new Error(
      `accuracy text '${input.accuracyText}' and the metrics file (${m.evals.length} evaluations) disagree`,
    );
  }
  if (
    finalAccuracy &&
    lastEval &&
    (finalAccuracy.step !== lastEval.step ||
      finalAccuracy.n !== lastEval.n ||
      Math.abs(finalAccuracy.accuracy - lastEval.accuracy) > 5e-4)
  ) {
    throw new Error(`accuracy text '${input.accuracyText}' is not the last evaluation ${JSON.stringify(lastEval)}`);
  }
  return {
    kind: 'dewpoint-demo',
    version: 1,
    createdAt: input.createdAt.toISOString(),
    backend: input.backend,
    browser: input.browser,
    config,
    runId: m.runId,
    status: m.status,
    steps: m.steps,
    evals: m.evals,
    finalAccuracy,
    timings: { ...input.timings, stepMs: m.steps.map((s) => s.metrics['perf/step_ms']) },
    outputs: input.outputs,
  };
}

/**
 * How long each screencast frame is shown when the frames are replayed into a video: the real gap
 * to the next frame divided by `speed`, clamped to [minMs, maxMs] so a long step is not a long
 * still; the last frame is held `maxMs`. Timestamps in ms, increasing.
 */
export function frameSchedule(timestamps: number[], { speed = 2, minMs = 40, maxMs = 2000 } = {}): number[] {
  return timestamps.map((t, i) =>
    i + 1 < timestamps.length ? Math.min(maxMs, Math.max(minMs, (timestamps[i + 1] - t) / speed)) : maxMs,
  );
}
