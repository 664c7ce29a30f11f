/**
 * "Memory of a step of these options: …" under the Base model box: the step's memory plan (worker
 * hf/memory.ts) in the words of the backend in use. On wasm, against its 4 GiB heap, which the
 * trainer refuses a batch by; on WebGPU, as GPU buffers, the largest against the adapter's bound on
 * one buffer. An alert when it does not fit. Not the plan itself (model-files.ts writes it).
 */
import { useQuery } from '@tanstack/react-query';
import type { MemoryPlanSummary } from '../../worker/protocol';
import { backendInfoQuery } from '../queries/system';
import { planText, webgpuPlanText } from './model-files';

export function MemoryPlanLine({ plan, testId }: { plan: MemoryPlanSummary; testId: string }) {
  const backend = useQuery(backendInfoQuery()).data;
  const gpu =
    backend?.backend === 'webgpu' ? webgpuPlanText(plan, backend.adapter?.limits.maxStorageBufferBindingSize) : null;
  const fits = gpu ? gpu.fits : plan.problem === null;
  return (
    <p data-testid={testId} role={fits ? undefined : 'alert'}>
      Memory of a step of these options: {gpu ? gpu.text : planText(plan)}
    </p>
  );
}
