/**
 * The mismatch lab in Compare: pick an injected gap (the sampler's weights in bf16, a sampler k
 * versions stale, or a sampler temperature the trainer is not told of), the steps and the seed;
 * the worker plans grpo-arith on-policy and then once per behaviour correction, and the lab starts
 * them one after another as stored runs named "lab <injection>: <correction>". When they have run,
 * they are picked for the panels below and the table shows reward, held-out accuracy,
 * mismatch/kl, the ESS and the share masked or capped side by side (`dewpoint lab mismatch`
 * prints the same table).
 */
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useRef, useState } from 'react';
import type { RunStatus } from '../../worker/protocol';
import { keys } from '../queries/keys';
import { mismatchLabPlanQuery } from '../queries/compare';
import { startRun } from '../queries/experiments';
import { backendInfoQuery } from '../queries/system';
import { useCompareStore } from '../state/compare-store';
import { useRunStore } from '../state/live-run';
import { workbench } from '../worker-client';
import { runLab, type LabOutcome } from './mismatch-lab';

type Kind = 'bf16' | 'stale' | 'temperature';
const KINDS: { value: Kind; label: string }[] = [
  { value: 'temperature', label: 'Sampler temperature, uncorrected' },
  { value: 'stale', label: 'Sampler k versions stale' },
  { value: 'bf16', label: 'Sampler weights in bf16' },
];

/** Resolves with a run's status once the live run store says it ended. */
function ended(runId: string): Promise<RunStatus> {
  const done = (s: { runId: string | null; status: string }) =>
    s.runId === runId && ['finished', 'failed', 'stopped'].includes(s.status);
  return new Promise((resolve) => {
    const now = useRunStore.getState();
    if (done(now)) return resolve(now.status as RunStatus);
    const unsubscribe = useRunStore.subscribe((s) => {
      if (!done(s)) return;
      unsubscribe();
      resolve(s.status as RunStatus);
    });
  });
}

export function MismatchLab() {
  const id = useId();
  const client = useQueryClient();
  const [kind, setKind] = useState<Kind>('temperature');
  const [value, setValue] = useState('1.5');
  const [steps, setSteps] = useState(30);
  const [seed, setSeed] = useState(1);
  const [running, setRunning] = useState<{ index: number; runId: string } | null>(null);
  const [outcome, setOutcome] = useState<LabOutcome | null>(null);
  const [table, setTable] = useState<{ header: string[]; cells: string[][] } | null>(null);
  const stop = useRef(false);
  const live = useRunStore((s) => (running && s.runId === running.runId ? s.steps.length : null));
  const inject = kind === 'bf16' ? 'bf16' : `${kind}:${value}`;
  const plan = useQuery(mismatchLabPlanQuery(inject, steps, seed));
  // The runs need the worker's backend, chosen once per page (Experiments does the same).
  const backend = useQuery(backendInfoQuery());
  const planned = plan.data?.ok ? plan.data.plan : null;

  const run = async () => {
    if (!planned) return;
    stop.current = false;
    setOutcome(null);
    setTable(null);
    let result: LabOutcome;
    try {
      result = await runLab(planned, {
        start: startRun,
        name: async (runId, name) => {
          const r = await workbench.updateRun(runId, { name });
          if (!r.ok) throw new Error(`naming ${name}: ${r.reason}`);
        },
        ended,
        stopRequested: () => stop.current,
        onRun: (index, runId) => setRunning({ index, runId }),
      });
    } catch (e) {
      result = { finished: [], status: 'failed', message: (e as Error).message };
    }
    setRunning(null);
    setOutcome(result);
    await client.invalidateQueries({ queryKey: keys.runs() });
    if (result.finished.length) {
      useCompareStore.getState().set(result.finished.map((r) => r.runId));
      setTable(await workbench.mismatchLabRows(result.finished));
    }
  };

  return (
    <details className="mismatch-lab" data-testid="mismatch-lab">
      <summary>Mismatch lab: one injected gap, every correction, the same seed</summary>
      <p>
        Sampler and trainer share their kernels, so on-policy the mismatch is exactly 0 and any gap here is the one
        injected. The lab runs grpo-arith on-policy, then with the gap once per correction (none, TIS, IcePop,
        verl&apos;s token, sequence and geometric masks, TRL&apos;s four modes).
      </p>
      <fieldset disabled={running !== null}>
        <legend id={id}>Gap to inject</legend>
        <label>
          Injection{' '}
          <select value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
            {KINDS.map((k) => (
              <option key={k.value} value={k.value}>
                {k.label}
              </option>
            ))}
          </select>
        </label>{' '}
        {kind !== 'bf16' && (
          <label>
            {kind === 'stale' ? 'Versions stale (k)' : 'Sampler temperature'}{' '}
            <input value={value} onChange={(e) => setValue(e.target.value)} inputMode="decimal" size={5} />
          </label>
        )}{' '}
        <label>
          Steps per run{' '}
          <input type="number" min={1} max={1000} value={steps} onChange={(e) => setSteps(Number(e.target.value))} />
        </label>{' '}
        <label>
          Seed <input type="number" value={seed} onChange={(e) => setSeed(Number(e.target.value))} />
        </label>
      </fieldset>
      {plan.data && !plan.data.ok && (
        <p role="alert" data-testid="mismatch-lab-problem">
          {plan.data.message}
        </p>
      )}
      {backend.isError && <p role="alert">No backend to train on: {(backend.error as Error).message}</p>}
      {planned && (
        <p>
          {planned.title}: {planned.runs.length} runs of {steps} steps (
          {planned.runs.map((r) => r.correction).join(', ')}).
        </p>
      )}
      {running === null ? (
        <button type="button" onClick={() => void run()} disabled={!planned || !backend.data}>
          Run the lab
        </button>
      ) : (
        <button
          type="button"
          onClick={() => {
            stop.current = true;
          }}
        >
          Stop after this run
        </button>
      )}
      <div aria-live="polite">
        {running && planned && (
          <p data-testid="mismatch-lab-progress">
            Run {running.index + 1} of {planned.runs.length}: {planned.runs[running.index].name}, step {live ?? 0} of{' '}
            {steps}.
          </p>
        )}
        {outcome && outcome.status !== 'done' && <p role="alert">The lab ended early: {outcome.message}.</p>}
      </div>
      {table && (
        <table className="mismatch-lab-table" data-testid="mismatch-lab-table">
          <caption>
            {planned?.title}, grpo-arith, seed {seed}, {steps} steps
          </caption>
          <thead>
            <tr>
              {table.header.map((h) => (
                <th key={h} scope="col">
                  {h}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {table.cells.map((row) => (
              <tr key={row[0]}>
                {row.map((c, i) =>
                  i === 0 ? (
                    <th key={i} scope="row">
                      {c}
                    </th>
                  ) : (
                    <td key={i}>{c}</td>
                  ),
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </details>
  );
}
