/**
 * Named GPU errors. Only `name`, `message` and `stack` survive comlink, so the app switches on
 * `name`; every name here is also listed in ERROR_NAMES (`worker/contract/errors.ts`), which a test checks.
 */

type GpuErrorName = 'GpuUnavailable' | 'GpuDeviceLost' | 'GpuValidationError' | 'GpuOutOfMemory' | 'ShaderCompileError';

export const GPU_ERROR_NAMES: readonly GpuErrorName[] = [
  'GpuUnavailable',
  'GpuDeviceLost',
  'GpuValidationError',
  'GpuOutOfMemory',
  'ShaderCompileError',
];

export class GpuError extends Error {
  override readonly name: GpuErrorName;
  constructor(name: GpuErrorName, message: string) {
    super(message);
    this.name = name;
  }
}
