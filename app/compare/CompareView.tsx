/**
 * Compare, as Weights & Biases compares runs: two or more stored runs (picked here or in the runs
 * table), named by what differs (run-name.ts); a grid of panels, one per chosen metric (defaults by
 * the runs' family), over steps or wall-clock seconds, with runs that differ only in their seed
 * drawn as a mean line and a min–max band (or one line each); a sortable table of final and best
 * values; the metrics as CSV or JSON; reward and length histograms over steps; and the configs
 * side by side; and the mismatch lab (MismatchLab.tsx), which runs one injected gap under every
 * correction and picks its runs here. Reads each run's history from the worker; the logic is in
 * the .ts files beside it.
 */
import { keepPreviousData, useQueries, useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import type { PresetInfo, RunHistory, RunOptions } from '../../worker/protocol';
import { ChartSettings } from '../charts/ChartSettings';
import { presetsQuery, runHistoryQuery, runsQuery } from '../queries/experiments';
import { useCompareStore } from '../state/compare-store';
import { defaultMetrics, metricKeys, type CompareRun } from './compare';
import { ConfigTable } from './ConfigTable';
import { Distributions } from './Distributions';
import { ExportButtons } from './ExportButtons';
import { linesOf, runsWithoutTimes, type XAxisKind } from './lines';
import { MismatchLab } from './MismatchLab';
import { PanelControls } from './PanelControls';
import { PanelGrid } from './PanelGrid';
import { idTag, runDisplayName, seedGroupName, uniqueNames } from './run-name';
import { RunPicker } from './RunPicker';
import { SummaryTable } from './SummaryTable';

/** Every history once all have loaded (re-run by useQueries only when a result changes), else null. */
const settled = (results: { data?: RunHistory }[]) =>
  results.every((r) => r.data) ? results.map((r) => r.data!) : null;

export function CompareView() {
  const runs = useQuery(runsQuery());
  const presets = useQuery(presetsQuery());
  const { runIds, toggle } = useCompareStore();
  const [chosen, setChosen] = useState<string[] | null>(null);
  const [x, setX] = useState<XAxisKind>('step');
  const [grouped, setGrouped] = useState(true);
  const presetOf = useMemo(() => {
    const byName = new Map((presets.data ?? []).map((p) => [p.name as string, p]));
    return (name: string): PresetInfo | undefined => byName.get(name);
  }, [presets.data]);
  const names = useMemo(() => {
    const all = runs.data ?? [];
    const unique = uniqueNames(
      all.map((r) => ({ name: runDisplayName(r, presetOf(r.options.preset)), tag: idTag(r.runId) })),
    );
    return new Map(all.map((r, i) => [r.runId, unique[i]]));
  }, [runs.data, presetOf]);
  const picked = useMemo(() => (runs.data ?? []).filter((r) => runIds.includes(r.runId)), [runs.data, runIds]);
  // A live run's key changes with each step: its previous history stays drawn while the next loads.
  const histories = useQueries({
    queries: picked.map((r) => ({ ...runHistoryQuery(r.runId, r.lastStep), placeholderData: keepPreviousData })),
    combine: settled,
  });
  const compared: CompareRun[] = useMemo(
    () =>
      histories
        ? picked.map((r, i) => ({
            runId: r.runId,
            name: names.get(r.runId) ?? r.runId,
            createdAt: r.createdAt,
            options: r.options,
            imported: r.status === 'imported',
            steps: histories[i].steps,
            evaluations: histories[i].evaluations,
          }))
        : [],
    [picked, names, histories],
  );
  const keys = useMemo(() => metricKeys(compared), [compared]);
  const shown = useMemo(() => {
    const traits = picked.flatMap((r) => presetOf(r.options.preset) ?? []);
    return (chosen ?? defaultMetrics(keys, traits)).filter((k) => keys.includes(k));
  }, [chosen, keys, picked, presetOf]);
  const lines = useMemo(
    () =>
      linesOf(compared, grouped, (members) => {
        const preset = presetOf(members[0].options.preset);
        const options = members.map((m) => m.options as RunOptions);
        return preset
          ? seedGroupName(options, preset)
          : `${members[0].name} · seeds ${options.map((o) => o.seed).join(', ')}`;
      }),
    [compared, grouped, presetOf],
  );
  const groups = useMemo(
    () => linesOf(compared, true, () => '').filter((l) => l.members.length > 1).length,
    [compared],
  );
  const untimed = x === 'wall' ? runsWithoutTimes(lines) : [];

  return (
    <section aria-labelledby="compare-title">
      <h1 id="compare-title">Compare runs</h1>
      <MismatchLab />
      {!runs.data?.length ? (
        <p>No stored runs yet: start runs in Experiments, then pick two or more here.</p>
      ) : (
        <RunPicker runs={runs.data} picked={runIds} names={names} toggle={toggle} />
      )}
      {picked.length < 2 ? (
        runs.data?.length ? (
          <p>Pick two or more runs to compare.</p>
        ) : null
      ) : !histories ? (
        <p>Loading the runs&apos; histories…</p>
      ) : (
        <>
          <h2>Panels</h2>
          <PanelControls
            keys={keys}
            shown={shown}
            setShown={setChosen}
            x={x}
            setX={setX}
            grouped={grouped}
            setGrouped={setGrouped}
            groups={groups}
          />
          <ChartSettings />
          {untimed.length > 0 && (
            <p className="chart-note">
              Not on the wall-clock axis (no per-step times stored: imported, or stored before they were kept):{' '}
              {untimed.join(', ')}.
            </p>
          )}
          <PanelGrid lines={lines} metrics={shown} x={x} remove={(m) => setChosen(shown.filter((k) => k !== m))} />
          <h2>Summary</h2>
          <SummaryTable lines={lines} metrics={shown} />
          <ExportButtons runs={compared} />
          <Distributions lines={lines} picked={picked} />
          <ConfigTable runs={compared} />
        </>
      )}
    </section>
  );
}
