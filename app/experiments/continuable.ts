/**
 * Which stored runs can continue here, and the Continue button's name, the same in the runs table,
 * beside the dashboard's "continue from its checkpoint" and in the interrupted-run notice. Pure.
 */
import type { RunSummary } from '../../worker/protocol';

/** A stopped, failed or interrupted run with a checkpoint, not live in another tab, continues from that checkpoint. */
export function isContinuable(r: Pick<RunSummary, 'status' | 'checkpointStep' | 'elsewhere'>): boolean {
  return (
    (r.status === 'stopped' || r.status === 'failed' || r.status === 'interrupted') &&
    r.checkpointStep !== undefined &&
    !r.elsewhere
  );
}

/** The button's accessible name. */
export const continueLabel = (r: Pick<RunSummary, 'runId' | 'checkpointStep'>) =>
  `Continue run ${r.runId} from step ${r.checkpointStep}`;
