/** WebGPU wrapper for seeded dropout (dropout.wgsl). Same contract as dropout.ref.ts; one dispatch. */
import type { Dispatcher } from '../common/dispatcher';
import { checkDisjoint, gridFor } from '../common/launch';
import type { GpuTensor } from '../common/tensor';
import { ELEMENTWISE_BLOCK } from '../residual/residual';
import { checkElementwise } from '../residual/residual.ref';
import type { DropoutOptions } from './dropout.ref';
import { dropoutScalars } from './dropout.ref';
import src from './dropout.wgsl?raw';

export function dropout(rt: Dispatcher, out: GpuTensor, x: GpuTensor, n: number, o: DropoutOptions): void {
  checkElementwise('dropout', n, { out, x });
  checkDisjoint('dropout', { out }, { x });
  const { key, threshold, scale } = dropoutScalars('dropout', o);
  if (n === 0) return;
  const params = new ArrayBuffer(24);
  new Uint32Array(params, 0, 4).set([n, key, threshold, o.offset]);
  new Float32Array(params, 16, 1)[0] = scale;
  new Uint32Array(params, 20, 1)[0] = o.accumulate ? 1 : 0;
  rt.dispatch(
    { label: 'dropout', code: src, constants: { WG: ELEMENTWISE_BLOCK / 4 } },
    params,
    [x, out],
    gridFor(rt, Math.ceil(n / ELEMENTWISE_BLOCK)),
  );
}
