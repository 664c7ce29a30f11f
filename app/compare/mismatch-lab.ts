/**
 * The mismatch lab in the app: its runs (the worker's plan, worker/presets/mismatch-lab.ts) started
 * one after another as ordinary stored runs, each named for its correction once it has ended (its
 * record is stored by then), the next once the one before has ended; stopped between runs when asked. The steps are given as functions, so the
 * sequencing is tested without a worker (mismatch-lab.test.ts, with fake steps).
 */
import type { MismatchLabPlan, RunStatus } from '../../worker/protocol';

export interface LabSteps {
  /** Starts a run; resolves to its id. */
  start(options: MismatchLabPlan['runs'][number]['options']): Promise<string>;
  /** Names a stored run; rejects with the worker's reason when it cannot. */
  name(runId: string, name: string): Promise<void>;
  /** Resolves with the run's status once it has ended (finished, failed or stopped). */
  ended(runId: string): Promise<RunStatus>;
  /** Whether the person asked the lab to stop (read before each run). */
  stopRequested(): boolean;
  /** Told as each run starts: its index in the plan and its id. */
  onRun(index: number, runId: string): void;
}

export interface LabOutcome {
  /** The runs that finished, with their correction (the rows' input). */
  finished: { runId: string; correction: string }[];
  /** `done`: every run finished; otherwise where it ended and why. */
  status: 'done' | 'stopped' | 'failed';
  message?: string;
}

export async function runLab(plan: MismatchLabPlan, steps: LabSteps): Promise<LabOutcome> {
  const finished: LabOutcome['finished'] = [];
  for (const [i, r] of plan.runs.entries()) {
    if (steps.stopRequested()) return { finished, status: 'stopped', message: `stopped before ${r.name}` };
    const runId = await steps.start(r.options);
    steps.onRun(i, runId);
    const status = await steps.ended(runId);
    // Named once it has ended: its record is stored by then, whatever it ended as.
    await steps.name(runId, r.name);
    if (status !== 'finished')
      return { finished, status: status === 'failed' ? 'failed' : 'stopped', message: `${r.name} ${status}` };
    finished.push({ runId, correction: r.correction });
  }
  return { finished, status: 'done' };
}
