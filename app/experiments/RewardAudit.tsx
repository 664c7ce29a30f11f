/**
 * The reward-hacking audit on the dashboard (worker/runs/audit.ts): on demand, over every step the
 * run keeps so far, each check's verdict (found, clear, not applicable), its sentence and, when
 * found, a link to the step to read in the Groups view. An audit of the whole run, not a live
 * warning: it runs when asked, and "Audit again" reads the steps stored since.
 */
import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { rewardAuditQuery } from '../queries/experiments';

const VERDICT: Record<string, string> = { found: 'found', clear: 'clear', 'not-applicable': 'not applicable' };

export function RewardAudit({ runId, lastStep }: { runId: string; lastStep: number }) {
  const id = useId();
  const [atStep, setAtStep] = useState<number | null>(null);
  const audit = useQuery({ ...rewardAuditQuery(runId, atStep ?? 0), enabled: atStep !== null });
  return (
    <section aria-labelledby={id} className="reward-audit" data-testid="reward-audit">
      <h4 id={id}>Reward-hacking audit</h4>
      <p>
        An audit read over every stored step of the run, not an early warning: whether longer completions score higher
        within groups as length and reward climb together, whether one part of a multi-part reward carries its signal,
        whether groups collapsed to one answer, and whether the KL to the reference is accelerating.
      </p>
      <button type="button" onClick={() => setAtStep(lastStep)} disabled={lastStep === 0 || audit.isFetching}>
        {atStep === null ? 'Audit the rewards' : 'Audit again'}
      </button>
      <div aria-live="polite">
        {audit.isFetching && <p>Reading the stored steps…</p>}
        {audit.isError && <p role="alert">The audit failed: {(audit.error as Error).message}</p>}
        {audit.data && !audit.isFetching && (
          <>
            <p data-testid="reward-audit-summary">
              Over {audit.data.steps} {audit.data.steps === 1 ? 'step' : 'steps'}:{' '}
              {audit.data.findings.filter((f) => f.verdict === 'found').length} found.
            </p>
            <ul>
              {audit.data.findings.map((f) => (
                <li key={f.id} data-testid={`audit-${f.id}`} data-verdict={f.verdict} className={`audit-${f.verdict}`}>
                  <strong>{f.id}</strong>: {VERDICT[f.verdict]}. {f.reason}
                  {f.step !== undefined && (
                    <>
                      {' '}
                      <a href={`#/groups?run=${encodeURIComponent(runId)}&step=${f.step}`}>
                        Open step {f.step} in Groups
                      </a>
                    </>
                  )}
                </li>
              ))}
            </ul>
          </>
        )}
      </div>
    </section>
  );
}
