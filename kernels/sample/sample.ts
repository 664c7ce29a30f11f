/**
 * `Ops.sample` on WebGPU: the logits (N, V) are read back and drawn from by the reference
 * (`sampleRef`, kernels/sample/sample.ref.ts), on purpose, not by a WGSL kernel. The contract of
 * the op is the reference's ids and log-probs bit for bit on every backend, so that a seed draws
 * the same completions wherever it runs; a shader cannot give them: WGSL has no f64 (the
 * distribution, its sums and the draw's comparison of u·Σp against running sums are float64), and
 * its exp and log are specified only to a few ulp and differ between adapters. What this costs is
 * the readback of N·V floats per decoding step, which sampling did before the op existed; the cpu
 * and wasm backends keep their logits in place (kernels/wasm/assembly/sample.ts).
 */
import type { Dispatcher } from '../common/dispatcher';
import type { GpuTensor } from '../common/tensor';
import type { SamplingOptions } from './distribution.ref';
import type { SampleOutput } from './sample.ref';
import { checkSampleArgs, sampleRef } from './sample.ref';

export async function sample(
  rt: Dispatcher,
  logits: GpuTensor,
  uniforms: ArrayLike<number>,
  N: number,
  V: number,
  options: SamplingOptions,
): Promise<SampleOutput> {
  checkSampleArgs('sample', logits.length, uniforms, N, V, options);
  return sampleRef(await rt.read(logits), uniforms, N, V, options);
}
