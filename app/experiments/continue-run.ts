/**
 * Continuing a stored run (continuable.ts says which), as the runs table, the dashboard (beside
 * "continue from its checkpoint") and the interrupted-run notice offer it: the action goes to the run
 * once the worker has taken it, and otherwise says why not.
 */
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { RunSummary } from '../../worker/protocol';
import { continueRun } from '../queries/experiments';
import { keys } from '../queries/keys';
import { usePageStore } from './page-store';

/** `go(r)` continues `r` and goes to it; `refused` is the worker's reason (or the error) when it did not. */
export function useContinueRun(): { go: (r: RunSummary) => void; refused: string | null } {
  const client = useQueryClient();
  const [refused, setRefused] = useState<string | null>(null);
  const go = (r: RunSummary) => {
    setRefused(null);
    continueRun(r)
      .then(
        (reason) => {
          setRefused(reason);
          if (!reason) usePageStore.getState().goToRun();
        },
        (e: Error) => setRefused(`${e.name}: ${e.message}`),
      )
      .finally(() => void client.invalidateQueries({ queryKey: keys.runs() }));
  };
  return { go, refused };
}
