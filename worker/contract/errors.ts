/**
 * The worker's named errors. Only `name`, `message` and `stack` of an Error survive comlink: the
 * app switches on `name`, and every name a worker error can carry is in ERROR_NAMES (a test
 * checks the GPU ones, kernels/common/errors.ts, are listed). The classes for the worker's own
 * names are here, so every API method throws them the same way: a fault (a call before `init`,
 * options no preset accepts, a run that is not active) is one of these; an expected outcome (a
 * run that cannot continue, a bad file) is a result (`{ ok: false, reason }`), never an error.
 * Elsewhere: GpuError (kernels/common/errors.ts) and HfFolderError (worker/model/hf-errors.ts,
 * `InvalidModelFolder`, with every problem of a model folder).
 */

export const ERROR_NAMES = [
  'GpuUnavailable',
  'GpuDeviceLost',
  'GpuValidationError',
  'GpuOutOfMemory',
  'ShaderCompileError',
  'NotInitialized',
  'InvalidConfig',
  'UnknownRun',
  /** A Hugging Face model folder that cannot be loaded (worker/model/hf-errors.ts HfFolderError). */
  'InvalidModelFolder',
  /** An environment's host (the companion) stopped answering mid-run (worker/episodes/environment.ts). */
  'EnvironmentUnavailable',
  /** An environment that failed too many of a batch's episodes (worker/episodes/infrastructure.ts): the run stops, saying why. */
  'EnvironmentBroken',
] as const;
export type ErrorName = (typeof ERROR_NAMES)[number];

/** A call that needs a backend before `init()` chose one. */
export class NotInitializedError extends Error {
  override readonly name = 'NotInitialized';
}

/** Options, a companion address or a model choice the worker refuses, the message naming the field. */
export class InvalidConfigError extends Error {
  override readonly name = 'InvalidConfig';
}

/** A pause, resume or stop of a run that is not the active one. */
export class UnknownRunError extends Error {
  override readonly name = 'UnknownRun';
}
