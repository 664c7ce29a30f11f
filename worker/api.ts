/**
 * The worker API behind comlink: thin delegation to the backend selection and the self-test,
 * no math here. `getGpu` supplies `navigator.gpu` (or the `webgpu` package's GPU in Node).
 */
import { transfer } from 'comlink';
import type { Ops } from '../kernels/ops';
import { selectBackend } from '../kernels/backends/select';
import { GpuError } from '../kernels/common/errors';
import type { CheckpointFiles } from './model/checkpoint';
import type { BackendInfo, BackendPreference, RunEvent, RunOptions, SelfTestResult, WorkbenchApi } from './protocol';
import { PRESETS, validateRunOptions } from './runs/presets';
import { RunManager } from './runs/run-manager';
import { runSelfTest } from './selftest';

export class NotInitializedError extends Error {
  override readonly name = 'NotInitialized';
}

export class InvalidConfigError extends Error {
  override readonly name = 'InvalidConfig';
}

/**
 * `getGpu`: `navigator.gpu` (or the webgpu package's GPU in Node). `loadBase`: the files of the
 * shipped base checkpoint (fetched from the page's origin in the browser).
 */
export function createWorkbench(getGpu: () => GPU | undefined | Promise<GPU | undefined>, loadBase: () => Promise<CheckpointFiles>): WorkbenchApi {
  let ops: Ops | null = null;
  const requireOps = (what: string): Ops => {
    if (!ops) throw new NotInitializedError(`${what} before init(): call init() first`);
    return ops;
  };
  const runs = new RunManager(() => requireOps('a run'), loadBase);

  return {
    async init(preference: BackendPreference = 'auto'): Promise<BackendInfo> {
      const selected = await selectBackend(await getGpu(), preference);
      if (!selected.ok) throw new GpuError('GpuUnavailable', selected.reason);
      ops = selected.ops;
      return selected.info;
    },
    async selfTest(): Promise<SelfTestResult> {
      return runSelfTest(requireOps('selfTest()'));
    },
    async presets() {
      return PRESETS;
    },
    async startRun(options: RunOptions, onEvent: (event: RunEvent) => void) {
      requireOps('startRun()');
      const problems = validateRunOptions(options);
      if (problems.length) throw new InvalidConfigError(problems.join('; '));
      return runs.start(options, onEvent);
    },
    async pauseRun(id: string) {
      runs.pause(id);
    },
    async resumeRun(id: string) {
      runs.resume(id);
    },
    async stopRun(id: string) {
      runs.stop(id);
    },
    async groupSteps(runId: string) {
      return runs.groupSteps(runId);
    },
    async groupsAt(runId: string, step: number) {
      return runs.groupsAt(runId, step);
    },
    async batchAt(runId: string, step: number) {
      return runs.batchAt(runId, step);
    },
    async latestCheckpoint() {
      const c = runs.latest;
      return c ? transfer(c, Object.values(c.files).map((f) => f.slice().buffer)) : null;
    },
  };
}
