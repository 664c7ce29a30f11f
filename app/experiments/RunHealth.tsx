/**
 * Run health on the dashboard: the flags the worker reads off the run's per-step metrics
 * (worker/runs/health.ts) — a collapse's precursors — each with the step where it began, the
 * sentence naming its metric, and a link to that step in the Groups or Episodes view. Refreshed
 * as steps are stored. Below them, the reward-hacking audit, read on demand (RewardAudit.tsx).
 */
import { useQuery } from '@tanstack/react-query';
import { useId } from 'react';
import type { HealthFlag } from '../../worker/protocol';
import { runHealthQuery } from '../queries/experiments';
import { formatEpisodeLink } from '../shared/episodes';
import { RewardAudit } from './RewardAudit';

/** Where a flag's step is shown: the Episodes view for a multi-turn run, else the Groups view. */
function healthLink(runId: string, flag: Pick<HealthFlag, 'step' | 'view'>): string {
  return flag.view === 'Episodes'
    ? formatEpisodeLink({ run: runId, step: flag.step })
    : `#/groups?run=${encodeURIComponent(runId)}&step=${flag.step}`;
}

export function RunHealth({ runId, lastStep }: { runId: string; lastStep: number }) {
  const id = useId();
  const health = useQuery({ ...runHealthQuery(runId, lastStep), enabled: lastStep > 0 });
  const flags = health.data ?? [];
  return (
    <section aria-labelledby={id} className="run-health" data-testid="run-health">
      <h3 id={id}>Health of the run</h3>
      {lastStep === 0 ? (
        <p>Flags appear once steps are stored.</p>
      ) : flags.length === 0 ? (
        <p data-testid="run-health-none">
          No flags over {lastStep} {lastStep === 1 ? 'step' : 'steps'}: within-group reward spread, groups with a
          signal, entropy, length, truncation, diversity, gradient norm, sampler/trainer mismatch and environment
          failures are within their thresholds.
        </p>
      ) : (
        <ul>
          {flags.map((f) => (
            <li key={f.id} data-testid={`health-${f.id}`} className={f.active ? 'health-active' : 'health-past'}>
              <strong>{f.id}</strong> from step {f.step} ({f.active ? 'still holds' : 'no longer holds'}): {f.reason}{' '}
              <a href={healthLink(runId, f)}>
                Open step {f.step} in {f.view}
              </a>
            </li>
          ))}
        </ul>
      )}
      <RewardAudit runId={runId} lastStep={lastStep} />
    </section>
  );
}
