/**
 * The worker API behind comlink: thin delegation to the backend selection and the self-test,
 * no math here. `getGpu` supplies `navigator.gpu` (or the `webgpu` package's GPU in Node).
 */
import type { Ops } from '../kernels/ops';
import { selectBackend } from '../kernels/backends/select';
import { GpuError } from '../kernels/common/errors';
import type { BackendInfo, BackendPreference, SelfTestResult, WorkbenchApi } from './protocol';
import { runSelfTest } from './selftest';

export class NotInitializedError extends Error {
  override readonly name = 'NotInitialized';
}

export function createWorkbench(getGpu: () => GPU | undefined | Promise<GPU | undefined>): WorkbenchApi {
  let ops: Ops | null = null;

  return {
    async init(preference: BackendPreference = 'auto'): Promise<BackendInfo> {
      const selected = await selectBackend(await getGpu(), preference);
      if (!selected.ok) throw new GpuError('GpuUnavailable', selected.reason);
      ops = selected.ops;
      return selected.info;
    },
    async selfTest(): Promise<SelfTestResult> {
      if (!ops) throw new NotInitializedError('selfTest() before init(): call init() first');
      return runSelfTest(ops);
    },
  };
}
