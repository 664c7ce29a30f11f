/**
 * The code grader of the CLI: the companion's own runner and fleet in this process (no HTTP, no
 * token: nothing listens), so `dewpoint train --preset grpo-code` and `dewpoint pretrain --task
 * code` grade programs exactly as a companion would. Same runner, same limits, same verdicts.
 * `close` kills whatever still runs and deletes its job directories.
 */
import { availableParallelism } from 'node:os';
import { codeReward } from '../companion/code-reward';
import { SandboxFleet } from '../companion/fleet';
import { ProcessRunner } from '../companion/process-runner';
import { sandboxLimitsSchema } from '../companion/protocol';
import { GraderUnavailable, cachedGrader, type CodeGrader } from '../worker/rewards/code-grader';

export interface LocalGrader {
  grader: CodeGrader & { readonly hits: number; readonly misses: number };
  close(): Promise<void>;
}

export function localCodeGrader(workers = availableParallelism()): LocalGrader {
  const inner = new ProcessRunner();
  const fleet = new SandboxFleet({ name: 'process', run: inner.run.bind(inner) }, workers, 1_000_000);
  const limits = sandboxLimitsSchema.parse({});
  const grader = cachedGrader(async (r) => {
    try {
      return await codeReward(fleet, {
        completion: r.completion,
        groundTruth: r.cases,
        allOrNothing: r.allOrNothing,
        limits,
      });
    } catch (e) {
      throw new GraderUnavailable(
        `the in-process sandbox could not grade: ${(e as Error).name}: ${(e as Error).message}`,
      );
    }
  });
  return { grader, close: () => fleet.close() };
}
