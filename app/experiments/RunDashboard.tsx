/**
 * The live run (or an opened stored one): status, progress with the latest mean reward, pause /
 * resume / stop, its last message with Continue where it can continue, the latest values as text,
 * and one curve per quantity the run reported (reward mean ± std, held-out accuracy, loss terms, KL,
 * clip fractions, entropy, sampler mismatch and ESS, zero-std groups, tokens/s, step time by phase).
 * The panels are chosen in dashboard-panels.ts, those flat by construction for the run's options
 * collapsed (flat-panels.ts); any other metric can be plotted from the explorer below them. Start,
 * Continue and Open bring it into view by focusing its heading (page-store.ts).
 */
import { useQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useRef } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { runsQuery } from '../queries/experiments';
import type { StepPoint } from '../state/live-run';
import { useRunStore } from '../state/live-run';
import { ChartSettings } from '../charts/ChartSettings';
import { dashboardPanels } from './dashboard-panels';
import { DashboardCharts } from './DashboardCharts';
import { flatPanels } from './flat-panels';
import { usePageStore } from './page-store';
import { RunMessage } from './RunMessage';
import { fixed } from '../shared/format';
import { MetricExplorer } from '../charts/MetricExplorer';
import { CheckpointDownload, RunControls } from './RunControls';
import { RunProgress } from './RunProgress';
import { RunHealth } from './RunHealth';
import { usePreset } from '../shared/use-preset';

/** A step's time by phase, in verl's terms: sampling, old log-probs (when recomputed), reference (β > 0), training. */
function stepTime(m: Record<string, number>): string {
  const parts: [string, string][] = [
    ['perf/sample_ms', 'sampling'],
    ['perf/old_logprob_ms', 'old log-probs'],
    ['perf/ref_ms', 'reference'],
    ['perf/train_ms', 'training'],
  ];
  return parts
    .filter(([k]) => k in m)
    .map(([k, name]) => `${name} ${fixed(m[k], 0)} ms`)
    .join(' · ');
}

function Facts({
  last,
  isRl,
  isDpo,
  lossKey,
}: {
  last: StepPoint | undefined;
  isRl: boolean;
  isDpo: boolean;
  lossKey: string;
}) {
  const lastEval = useRunStore((s) => s.evals.at(-1));
  const fmt = (key: string, digits = 4) => (last && key in last.metrics ? fixed(last.metrics[key], digits) : '–');
  // Dynamic sampling ran: the batch's figures are after its filter, and what it drew is shown beside them.
  const filtered = last !== undefined && 'filter/reward_mean_before' in last.metrics;
  return (
    <dl className="facts">
      {isRl && (
        <>
          <dt>Mean reward{filtered ? ' (after the filter)' : ''}</dt>
          <dd data-testid="metric-reward-mean">
            {fmt('reward/mean', 3)}
            {filtered && ` (${fmt('filter/reward_mean_before', 3)} before)`}
          </dd>
          <dt>Zero-std groups{filtered ? ' (after the filter)' : ''}</dt>
          <dd data-testid="metric-zero-std">
            {fmt('reward/frac_reward_zero_std', 2)}
            {filtered && ` (${fmt('filter/frac_zero_std_before', 2)} before)`}
          </dd>
          {filtered && (
            <>
              <dt>Batches drawn</dt>
              <dd data-testid="metric-gen-batches">
                {fmt('filter/gen_batches', 0)} ({fmt('filter/kept_groups', 0)} groups kept of{' '}
                {fmt('filter/groups_drawn', 0)})
              </dd>
            </>
          )}
          <dt>Clip fraction</dt>
          <dd>{fmt('rl/pg_clipfrac', 3)}</dd>
          <dt>Step time</dt>
          <dd>{last ? stepTime(last.metrics) : '–'}</dd>
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
      <dd>{last && 'opt/lr' in last.metrics ? last.metrics['opt/lr'].toExponential(2) : '–'}</dd>
      <dt>Gradient norm</dt>
      <dd>{fmt('opt/grad_norm', 3)}</dd>
      <dt>Tokens/s</dt>
      <dd data-testid="metric-tokens-per-s">{fmt('perf/tokens_per_s', 0)}</dd>
      <dt>Held-out accuracy</dt>
      <dd data-testid="metric-accuracy">
        {lastEval
          ? `${(lastEval.accuracy * 100).toFixed(1)}% (step ${lastEval.step}, n=${lastEval.n})`
          : 'not evaluated yet'}
      </dd>
    </dl>
  );
}

function Samples() {
  const lastEval = useRunStore((s) => s.evals.at(-1));
  if (!lastEval || lastEval.samples.length === 0) return null;
  return (
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
  );
}

export function RunDashboard() {
  // Not the phase: it changes several times a step, and only RunProgress shows it.
  const { runId, options, status, steps, evals } = useRunStore(
    useShallow((s) => ({
      runId: s.runId,
      options: s.options,
      status: s.status,
      steps: s.steps,
      evals: s.evals,
    })),
  );
  const stored = useQuery(runsQuery());
  const last = steps.at(-1);
  // What the run reports follows from its preset, known before its first step.
  const family = usePreset(options?.preset)?.family;
  const isRl = family === 'grpo' || family === 'ppo' || family === 'flow';
  const isDpo = family === 'dpo';
  const lossKey = isRl || isDpo ? 'loss/total' : 'loss/sft';
  const panels = useMemo(() => dashboardPanels(steps, evals), [steps, evals]);
  const flat = useMemo(() => flatPanels(options, family), [options, family]);
  const heading = useRef<HTMLHeadingElement>(null);
  const runFocus = usePageStore((s) => s.runFocus);
  useEffect(() => {
    if (runFocus > 0) heading.current?.focus();
  }, [runFocus]);
  if (!runId)
    return (
      <p>
        {stored.data?.length
          ? 'No run open: start one above, or open a stored run from the table below.'
          : 'No run yet: choose a preset and start it.'}
      </p>
    );
  const latest = (key: string, digits: number) =>
    last && key in last.metrics ? fixed(last.metrics[key], digits) : '–';
  const headline = isRl
    ? ` · mean reward ${latest('reward/mean', 2)}`
    : isDpo
      ? ` · reward margin ${latest('rewards/margins', 3)}`
      : '';
  return (
    <section aria-labelledby="live-title" data-testid="run-dashboard">
      <h2 id="live-title" ref={heading} tabIndex={-1}>
        Run {runId}
      </h2>
      <p>
        Status: <strong data-testid="run-status">{status}</strong>
      </p>
      <RunProgress headline={headline} />
      <RunMessage />
      <RunControls />
      <CheckpointDownload />
      <Facts last={last} isRl={isRl} isDpo={isDpo} lossKey={lossKey} />
      {isRl && <RunHealth runId={runId} lastStep={last?.step ?? 0} />}
      <ChartSettings />
      <DashboardCharts panels={panels} flat={flat} />
      <MetricExplorer steps={steps} />
      <Samples />
    </section>
  );
}
