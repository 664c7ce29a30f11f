/**
 * Groups: for any stored step of the current (or an opened) GRPO run, every advantage group side by side: prompt,
 * ground truth, the G completions with reward, components, advantage, status and length. A DPO
 * run's steps show their preference pairs the same way: chosen and rejected, with implicit rewards.
 * Zero-variance groups (no learning signal) are flagged; groups can be sorted; steps browsed.
 * Each completion opens the session inspector (SessionPanel) below its group.
 */
import { useQuery } from '@tanstack/react-query';
import { Fragment, useEffect, useMemo, useState } from 'react';
import type { GroupRecord } from '../../worker/protocol';
import { SessionPanel } from '../components/SessionPanel';
import { groupStepsQuery, groupsAtQuery } from '../queries/groups';
import { useRunStore } from '../state/run-store';

type SortKey = 'order' | 'reward-desc' | 'reward-asc' | 'std-desc';

const SORTS: Record<SortKey, { label: string; compare: (a: GroupRecord, b: GroupRecord) => number }> = {
  order: { label: 'batch order', compare: () => 0 },
  'reward-desc': { label: 'mean reward, high first', compare: (a, b) => b.rewardMean - a.rewardMean },
  'reward-asc': { label: 'mean reward, low first', compare: (a, b) => a.rewardMean - b.rewardMean },
  'std-desc': { label: 'reward spread, high first', compare: (a, b) => b.rewardStd - a.rewardStd },
};

/** The completion whose inspector is open. */
interface Inspected {
  group: string;
  sample: number;
}

function GroupTable({ g, inspected, onInspect }: { g: GroupRecord; inspected: Inspected | null; onInspect: (sample: number | null) => void }) {
  return (
    <table className={`group ${g.zeroStd ? 'zero-std' : ''}`} data-testid="group">
      <caption>
        <code>{g.prompt}</code> → ground truth <strong>{g.answer}</strong> · mean reward {g.rewardMean.toFixed(3)}, std {g.rewardStd.toFixed(3)}
        {g.zeroStd && <span className="flag"> · zero variance: no learning signal</span>}
      </caption>
      <thead>
        <tr>
          <th scope="col">#</th>
          <th scope="col">Completion</th>
          <th scope="col">Reward</th>
          <th scope="col">Components</th>
          <th scope="col">{g.kind === 'dpo-pair' ? 'Implicit reward β·Δlog π' : 'Advantage'}</th>
          <th scope="col">Status</th>
          <th scope="col">Length</th>
          <th scope="col">Session</th>
        </tr>
      </thead>
      <tbody>
        {g.samples.map((s) => {
          const open = inspected?.group === g.group && inspected.sample === s.sample;
          return (
            <tr key={s.sample}>
              <th scope="row">{s.sample}</th>
              <td>
                <code>{s.completion || '(empty)'}</code>
              </td>
              <td>{s.reward}</td>
              <td>{Object.entries(s.components).map(([k, v]) => `${k} ${v}`).join(', ')}</td>
              <td className={s.advantage > 0 ? 'ok' : s.advantage < 0 ? 'bad' : ''}>{s.advantage.toFixed(3)}</td>
              <td>{s.status}</td>
              <td>
                {s.length}
                {s.truncated ? ' (truncated)' : ''}
              </td>
              <td>
                <button type="button" aria-expanded={open} onClick={() => onInspect(open ? null : s.sample)}>
                  Inspect sample {s.sample}
                </button>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

export function GroupsView() {
  const runId = useRunStore((s) => s.runId);
  const latest = useRunStore((s) => s.steps.at(-1)?.step ?? 0);
  const steps = useQuery({ ...groupStepsQuery(runId ?? '', latest), enabled: Boolean(runId) });
  const [step, setStep] = useState<number | null>(null);
  const [sort, setSort] = useState<SortKey>('order');
  const [inspected, setInspected] = useState<Inspected | null>(null);
  const available = steps.data ?? [];
  useEffect(() => {
    if (step === null && available.length) setStep(available.at(-1)!);
  }, [available, step]);
  useEffect(() => setInspected(null), [runId, step]);
  const groups = useQuery({ ...groupsAtQuery(runId ?? '', step ?? 0), enabled: Boolean(runId) && step !== null });
  const sorted = useMemo(() => (groups.data ? [...groups.data].sort(SORTS[sort].compare) : []), [groups.data, sort]);

  if (!runId) return <p>No run yet: start a GRPO or DPO run in Experiments.</p>;
  const index = step === null ? -1 : available.indexOf(step);
  return (
    <section aria-labelledby="groups-title" data-testid="groups-view">
      <h1 id="groups-title">Groups</h1>
      {available.length === 0 ? (
        <p>This run keeps no advantage groups (GRPO and DPO runs have them), or no step has finished yet.</p>
      ) : (
        <>
          <div className="controls" role="group" aria-label="Step">
            <button type="button" onClick={() => setStep(available[index - 1])} disabled={index <= 0}>
              Previous step
            </button>
            <label>
              Step{' '}
              <select value={step ?? ''} onChange={(e) => setStep(Number(e.target.value))}>
                {available.map((s) => (
                  <option key={s} value={s}>
                    {s}
                  </option>
                ))}
              </select>
            </label>
            <button type="button" onClick={() => setStep(available[index + 1])} disabled={index < 0 || index >= available.length - 1}>
              Next step
            </button>
            <button type="button" onClick={() => setStep(available.at(-1)!)}>
              Latest
            </button>
            <label>
              Sort groups by{' '}
              <select value={sort} onChange={(e) => setSort(e.target.value as SortKey)}>
                {Object.entries(SORTS).map(([k, v]) => (
                  <option key={k} value={k}>
                    {v.label}
                  </option>
                ))}
              </select>
            </label>
          </div>
          {groups.data &&
            (groups.data[0]?.kind === 'dpo-pair' ? (
              <p>
                Step {step}: {groups.data.length} preference pairs (chosen: a correct completion of the base model, rejected: an incorrect one); implicit rewards
                before the step's update.
              </p>
            ) : (
              <p>
                Step {step}: {groups.data.length} groups, {groups.data.filter((g) => g.zeroStd).length} with zero variance.
              </p>
            ))}
          {sorted.map((g) => (
            <Fragment key={g.group}>
              <GroupTable g={g} inspected={inspected} onInspect={(sample) => setInspected(sample === null ? null : { group: g.group, sample })} />
              {inspected?.group === g.group && step !== null && <SessionPanel runId={runId} step={step} at={inspected} />}
            </Fragment>
          ))}
        </>
      )}
    </section>
  );
}
