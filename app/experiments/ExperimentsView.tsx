/**
 * Experiments: pick a preset, adjust its options, start a run and watch it live (loss, learning
 * rate, tokens/s, held-out accuracy), with pause, resume and stop between steps. From the top: the
 * backend, the run a reload interrupted (with Continue), the first-visit guide, "New run" (presets
 * and options, collapsed once a run starts), the run's dashboard, the stored runs and the verl import.
 */
import { useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import { FirstVisitGuide } from './FirstVisitGuide';
import { InterruptedRun } from './InterruptedRun';
import { NewRun } from './NewRun';
import { RunDashboard } from './RunDashboard';
import { RunsTable } from './RunsTable';
import { VerlImport } from './VerlImport';
import { presetsQuery } from '../queries/experiments';
import { backendInfoQuery } from '../queries/system';
import { useFormStore } from '../state/form-store';

export function ExperimentsView() {
  const backend = useQuery(backendInfoQuery());
  const presets = useQuery(presetsQuery());
  const initFrom = useFormStore((s) => s.initFrom);
  useEffect(() => {
    if (presets.data) initFrom(presets.data);
  }, [presets.data, initFrom]);

  return (
    <section aria-labelledby="experiments-title">
      <h1 id="experiments-title">Experiments</h1>
      {backend.data && (
        <p>
          Training on <strong>{backend.data.backend}</strong>
          {backend.data.adapter ? ` (${backend.data.adapter.vendor}/${backend.data.adapter.architecture})` : ''}.
        </p>
      )}
      <InterruptedRun />
      <FirstVisitGuide presets={presets.data ?? []} />
      <NewRun presets={presets.data} />
      <RunDashboard />
      <RunsTable />
      <VerlImport />
    </section>
  );
}
