/**
 * Reward and length histograms over steps, per run or seed group (pooled over its seeds), from the
 * samples each kept step stored with its groups. Read only once the section is opened: a run's
 * groups are its largest records. Runs that keep no samples (DPO pairs, Flow-GRPO) are named.
 */
import { keepPreviousData, useQueries } from '@tanstack/react-query';
import { useState } from 'react';
import type { RunSummary, StepDistribution } from '../../worker/protocol';
import { stepDistributionsQuery } from '../queries/compare';
import { binsFor, describeSteps, heatmap, pooled, type Quantity } from './histograms';
import { HistogramChart } from './HistogramChart';
import type { Line } from './lines';

const QUANTITIES: { q: Quantity; title: string; yName: string }[] = [
  { q: 'rewards', title: 'Reward', yName: 'reward' },
  { q: 'lengths', title: 'Response length (sampled ids)', yName: 'length' },
];

function LineHistograms({ line, dists, all }: { line: Line; dists: StepDistribution[][]; all: StepDistribution[][] }) {
  return (
    <figure className="compare-panel" data-testid="compare-histograms" data-line={line.name}>
      <figcaption>
        {line.name}
        {line.members.length > 1 ? ` (${line.members.length} runs pooled)` : ''}
      </figcaption>
      {QUANTITIES.map(({ q, title, yName }) => {
        const perStep = pooled(dists, q);
        const bins = binsFor(all.flatMap((ds) => ds.flatMap((d) => d[q])));
        if (!bins || perStep.every((s) => s.values.length === 0)) return <p key={q}>No {yName}s kept.</p>;
        const map = heatmap(perStep, bins);
        return (
          <div key={q}>
            <h4>{title}</h4>
            <HistogramChart
              label={`${title} histogram over ${map.steps.length} kept steps of ${line.name}: samples per ${yName} bin (colour) at each step`}
              description={describeSteps(perStep)}
              map={map}
              bins={bins}
              yName={yName}
            />
          </div>
        );
      })}
    </figure>
  );
}

export function Distributions({ lines, picked }: { lines: readonly Line[]; picked: readonly RunSummary[] }) {
  const [open, setOpen] = useState(false);
  const results = useQueries({
    queries: picked.map((r) => ({
      ...stepDistributionsQuery(r.runId, r.lastStep),
      enabled: open,
      placeholderData: keepPreviousData,
    })),
  });
  const byRun = new Map(picked.map((r, i) => [r.runId, results[i].data]));
  const loaded = results.every((q) => q.data);
  const all = [...byRun.values()].flatMap((d) => (d ? [d] : []));
  const withSamples = lines.filter((l) => l.members.some((m) => (byRun.get(m.runId)?.length ?? 0) > 0));
  const without = lines.filter((l) => !withSamples.includes(l)).map((l) => l.name);
  return (
    <>
      <h2>Distributions over steps</h2>
      <details className="compare-distributions" onToggle={(e) => setOpen(e.currentTarget.open)}>
        <summary>Reward and response length histograms</summary>
        <p>
          The reward and the response length of every sample a step kept with its groups, one column per kept step (the
          heatmap&apos;s colour: samples in the bin). Bins are shared by all runs of a quantity; a seed group&apos;s
          samples are pooled.
        </p>
        {!open ? null : !loaded ? (
          <p>Loading the kept samples…</p>
        ) : (
          <>
            {without.length > 0 && (
              <p>No samples kept (DPO pairs and Flow-GRPO clouds are not sampled rollouts): {without.join(', ')}.</p>
            )}
            <div className="compare-grid">
              {withSamples.map((l) => (
                <LineHistograms key={l.id} line={l} dists={l.members.map((m) => byRun.get(m.runId) ?? [])} all={all} />
              ))}
            </div>
          </>
        )}
      </details>
    </>
  );
}
