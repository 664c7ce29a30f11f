/**
 * A sampler worker's weights in shared memory (worker/rollout/remote-sampler.ts): the parameter
 * tensors of the worker's frozen model sit in its wasm backend's memory, a SharedArrayBuffer that
 * the trainer holds too, and the trainer publishes a weight version by writing it there in place.
 * The worker's kernels then read the version where the trainer wrote it: no message carries
 * weights and the worker copies none. A version word (an i32 beside the tensors, read and written
 * with Atomics) says which version the tensors hold: WRITING while the trainer writes, so a draw
 * that checks the word before and after it ran never uses a half-written version unawares (a
 * seqlock's reader check). The scheduler (worker/train/scheduler.ts) rewrites a slot only once the
 * batch drawn from its previous version was taken, so the check is an invariant's, not a wait.
 * Not a store of versions: each slot holds the one it last received.
 */
import type { WasmMemory, WasmOps } from '../../kernels/backends/wasm';
import type { Model } from '../model/model';
import { paramSpecs } from '../model/params';

/** What the sampler's end sends the trainer's at 'init': where its model's weights are. Posting it shares the memory. */
export interface SharedWeights {
  /** The sampler's wasm memory: a shared WebAssembly.Memory (its buffer a SharedArrayBuffer). */
  memory: WasmMemory;
  /** Byte offset of the version word (i32): the version the tensors hold, NO_VERSION before any, WRITING during a write. */
  version: number;
  /** Every parameter by Hugging Face name (paramSpecs order): its byte offset in the memory and its f32 values. */
  tensors: [name: string, byteOffset: number, length: number][];
}

/** The version word before the first version is written, and while one is being written. */
export const NO_VERSION = -1;
export const WRITING = -2;

/**
 * The sampler's end: where `model` (frozen, f32, on `ops` over a shared memory) keeps its weights,
 * with a version word allocated beside them (NO_VERSION). The tensors stay where they are for the
 * model's life: a frozen model never frees or moves its parameters.
 */
export function shareWeights(model: Model, ops: WasmOps): SharedWeights {
  if (!(ops.memory.buffer instanceof SharedArrayBuffer))
    throw new Error(
      'shareWeights: the wasm memory is not shared (make the backend with { shared: true }: node-wasm.ts, wasm-backend.ts)',
    );
  if (!model.frozen)
    throw new Error('shareWeights: the model trains; a sampler holds weights only (construct it frozen)');
  const word = ops.alloc('shared weights: version', 1, 'i32');
  const version = ops.byteOffset(word);
  Atomics.store(new Int32Array(ops.memory.buffer, version, 1), 0, NO_VERSION);
  const tensors = paramSpecs(model.config).map((s): SharedWeights['tensors'][number] => {
    const t = model.params.byName.get(s.name)!;
    if (t.dtype !== 'f32')
      throw new Error(`shareWeights: '${s.name}' is stored ${t.dtype}; a sampler's weights are f32 (storage 'f32')`);
    return [s.name, ops.byteOffset(t), t.length];
  });
  return { memory: ops.memory, version, tensors };
}

/** The version the shared tensors hold now (NO_VERSION, WRITING, or a version written whole). */
export function heldVersion(shared: SharedWeights): number {
  return Atomics.load(versionWord(shared), 0);
}

/**
 * The trainer's end: writes `weights` (every parameter by name, as Model.getMergedWeights gives
 * them) over the sampler's, as version `version`. Checked whole before anything is written: a
 * refusal leaves the version held before intact.
 */
export function writeWeights(shared: SharedWeights, version: number, weights: ReadonlyMap<string, Float32Array>): void {
  if (!Number.isInteger(version) || version < 0)
    throw new Error(`writeWeights: version = ${version}; expected an integer ≥ 0`);
  for (const [name, , length] of shared.tensors) {
    const w = weights.get(name);
    if (!w) throw new Error(`writeWeights: missing tensor '${name}' (${length} values)`);
    if (w.length !== length) throw new Error(`writeWeights: '${name}' has ${w.length} values, expected ${length}`);
  }
  const word = versionWord(shared);
  Atomics.store(word, 0, WRITING);
  const buffer = shared.memory.buffer;
  for (const [name, offset, length] of shared.tensors) new Float32Array(buffer, offset, length).set(weights.get(name)!);
  // Atomics.store orders the writes above before it: a reader that loads `version` sees them whole.
  Atomics.store(word, 0, version);
}

function versionWord(shared: SharedWeights): Int32Array {
  return new Int32Array(shared.memory.buffer, shared.version, 1);
}
